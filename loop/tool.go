package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/secrets"
)

// Tool is something the model can call by name. Agent Zero's tool set lives
// in package tools; the loop only knows this interface.
//
// A tool that fails in a way the model can act on returns a Result with
// IsError set and a nil error: the text goes back to the model. A Go error
// means the infrastructure is broken (the sandbox died, ...) and goes through
// the loop's error policy.
type Tool interface {
	Name() string
	Execute(ctx context.Context, call *ToolCall) (ToolResult, error)
}

// ToolKinder tells what a call of the tool does, as one of ACP's tool
// kinds ("read", "edit", "delete", "move", "search", "execute", "think",
// "fetch", "other"): editors show it, and the approval policy decides by
// it. It may depend on the method (text_editor:read reads, :write edits).
// A tool without it is "other".
type ToolKinder interface {
	Kind(method string) string
}

// KindOf is the kind of a call of tool with method (see [ToolKinder]).
func KindOf(tool Tool, method string) string {
	if k, ok := tool.(ToolKinder); ok {
		if kind := k.Kind(method); kind != "" {
			return kind
		}
	}
	return "other"
}

// ReadOnlyKind reports whether calls of kind change nothing: they read,
// search, fetch to read or think (the answer, a subordinate whose own
// calls are judged alike). Plan mode offers and allows only these.
func ReadOnlyKind(kind string) bool {
	switch kind {
	case "read", "search", "fetch", "think":
		return true
	}
	return false
}

// ReadOnlyClaimer is implemented by a tool whose author says its calls
// change nothing, though its kind does not (an MCP server's readOnlyHint).
// Plan mode takes the claim; the approval policies go by the kind.
type ReadOnlyClaimer interface {
	ClaimsReadOnly() bool
}

// ChangesNothing reports whether a call of tool with method changes
// nothing, by its kind or its author's claim: what plan mode allows.
func ChangesNothing(tool Tool, method string) bool {
	if ReadOnlyKind(KindOf(tool, method)) {
		return true
	}
	c, ok := tool.(ReadOnlyClaimer)
	return ok && c.ClaimsReadOnly()
}

// ToolSpec is one callable of a tool as native tool calls offer it: the
// tool itself (Method "") or one of its methods (text_editor's "read"),
// with the JSON Schema of its arguments.
type ToolSpec struct {
	Method string
	// Description, when set, is the function's description; else it comes
	// from the tool's prompt file, without the JSON-format examples.
	Description string
	// Parameters is a JSON Schema of an object: the tool_args.
	Parameters json.RawMessage
}

// Specified is implemented by a tool that declares the JSON Schemas of its
// arguments, one ToolSpec per method it offers (or one with Method "" for
// a tool without methods). A tool without it is offered as one function
// that takes any object.
type Specified interface {
	Specs() []ToolSpec
}

// AliasKeeper is implemented by a tool that gets its arguments with the
// secrets' aliases (§§secret(NAME)) as the model wrote them, not the
// values: a tool that keeps what it is given (a memory, behaviour rules)
// and never needs a value to do its work, so the value is not stored where
// every face would serve it. Its arguments are still checked: an alias of
// no secret refuses the call as for any tool (see [Config.Secrets]).
type AliasKeeper interface {
	KeepsAliases() bool
}

// ToolResult is what a tool returns.
type ToolResult struct {
	Text      string
	BreakLoop bool // ends the monologue: Text is the answer (the response tool)
	IsError   bool
	// Running says what the tool started goes on after it returned (a
	// command still running in its shell); it travels on the tool_result
	// event (Event.Running).
	Running bool
	// Diffs are the files the tool changed, for editors to show; they
	// travel on the tool_result event, not into history.
	Diffs []FileDiff
	// Plan, when set, is the agent's new plan (todo:write): it goes out
	// as a plan event after the tool_result.
	Plan *Plan
	// Images are pictures the tool brings (vision_load, an MCP tool's
	// image content), made by package vision: they join the result in
	// history, reach a model that sees, and travel on the tool_result
	// event (as references: Session.Image has their data).
	Images []llm.Image
}

// FileDiff is one file a tool changed: its text before (nil for a file it
// created) and after.
type FileDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"old_text"`
	NewText string  `json:"new_text"`
}

// ToolCall is one execution of a tool requested by the model.
type ToolCall struct {
	ID     string
	Name   string // without the method
	Method string // the part after ':' in "name:method", or ""
	Args   map[string]any
	Agent  *Agent
	Loop   *LoopData
	// callID is the native call's id, for its result.
	callID string

	// order serialises Progress, so its output keeps the calls' order
	// (the secrets stream needs it); mu guards progress, which Output may
	// read meanwhile (an extension at tool_output_update, say).
	order    sync.Mutex
	mu       sync.Mutex
	progress headTail  // what the tool printed, bounded
	streamed int       // bytes sent as tool_output_delta
	secrets  *callMask // masks the output (Config.Secrets), made on first use (under order and mu)
}

// callMask masks a tool's live output. rewritten (guarded by the call's mu)
// is set when a tool_output_update extension changed a chunk: the kept
// output may then hold what the stream did not mask (see maskedOutput).
type callMask struct {
	stream    *secrets.Stream
	rewritten bool
}

// Progress reports live output of the tool: secrets are masked (a value
// split across calls too, so the end of a call's text may be held back
// until the next one or the tool's end), tool_output_update extensions may
// rewrite it, then it is streamed to the editor as tool_output_delta and
// kept, bounded, so that an intervention can save what the tool produced so
// far. A flood of output is streamed up to Limits.LiveOutput bytes, then
// only summarised, so memory stays bounded. Progress may be called from
// several goroutines; the output keeps the order of the calls.
func (c *ToolCall) Progress(ctx context.Context, text string) {
	if text == "" {
		return
	}
	c.order.Lock()
	defer c.order.Unlock()
	if set := c.Agent.session.cfg.Secrets; set != nil {
		if c.secrets == nil {
			m := &callMask{stream: set.NewStream()}
			c.mu.Lock() // maskedOutput reads it under mu alone
			c.secrets = m
			c.mu.Unlock()
		}
		if text = c.secrets.stream.Write(text); text == "" {
			return
		}
	}
	c.show(ctx, text)
}

// flushOutput shows what the secrets stream still holds, once the tool
// has returned.
func (c *ToolCall) flushOutput(ctx context.Context) {
	c.order.Lock()
	defer c.order.Unlock()
	if c.secrets == nil {
		return
	}
	if text := c.secrets.stream.Flush(); text != "" {
		c.show(ctx, text)
	}
}

// show is Progress after masking.
func (c *ToolCall) show(ctx context.Context, text string) {
	a := c.Agent
	rewritten := false
	if a.hooks().Has(hooks.ToolOutputUpdate) {
		p := &ToolOutputPayload{Agent: a, ToolName: c.Name, Content: text}
		if err := a.hooks().Call(ctx, hooks.ToolOutputUpdate, p); err != nil {
			if ctx.Err() == nil {
				a.warn(c.ID, fmt.Sprintf("tool_output_update: %v", err))
			}
		} else {
			rewritten = p.Content != text
			text = p.Content
		}
	}
	c.mu.Lock()
	if rewritten && c.secrets != nil {
		c.secrets.rewritten = true
	}
	if c.progress.max == 0 {
		c.progress.max = a.session.cfg.Limits.ToolResult
	}
	c.progress.WriteString(text)
	c.mu.Unlock()
	if limit := a.session.cfg.Limits.LiveOutput; c.streamed < limit {
		if n := limit - c.streamed; len(text) > n {
			text = text[:runeFloor(text, n)] + "\n[... live output stops here; the result keeps the end ...]\n"
		}
		a.emit(Event{Type: EventToolOutputDelta, Item: c.ID, Text: text})
	}
	c.streamed += len(text)
}

// Output returns what the tool reported through Progress, its head and
// tail when it was long.
func (c *ToolCall) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress.String()
}

// maskedOutput is Output holding aliases only: as the secrets stream gave
// it, or masked again when an extension rewrote some of it.
func (c *ToolCall) maskedOutput() string {
	c.mu.Lock()
	out, rewritten := c.progress.String(), c.secrets != nil && c.secrets.rewritten
	c.mu.Unlock()
	if rewritten {
		return c.Agent.session.mask(out)
	}
	return out
}

// shownOutput is what Progress showed the faces as tool_output_delta:
// Output, when none of it was held back by Limits.LiveOutput, else "".
func (c *ToolCall) shownOutput() string {
	c.order.Lock()
	cut := c.streamed > c.Agent.session.cfg.Limits.LiveOutput
	c.order.Unlock()
	if cut {
		return ""
	}
	return c.Output()
}

// Render renders a prompt file of the agent's profile (fw.code.*.md, ...).
func (c *ToolCall) Render(name string, vars map[string]any) (string, error) {
	return c.Agent.Render(name, vars)
}

// DecodeArgs decodes the tool arguments into v (a pointer to a struct with
// json tags). Wrong types give an error worded for the model.
func (c *ToolCall) DecodeArgs(v any) error {
	raw, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Errorf("tool_args of %s: %w", c.Name, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("tool_args.%s of %s must be %s, not %s", te.Field, c.Name, jsonTypeName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("tool_args of %s: %w", c.Name, err)
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return kind
}

// Intervened reports whether ctx ended because the user sent a message
// during the run (the tool should return what it has and leave its process
// running) rather than because the run was cancelled (the tool should kill
// what it started).
func Intervened(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrIntervened)
}
