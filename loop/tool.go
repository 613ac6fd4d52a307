package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zeroagent/zero/hooks"
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

// ToolKind is a hint for editors (ACP tool kinds).
type ToolKinder interface {
	Kind() string
}

// ToolResult is what a tool returns.
type ToolResult struct {
	Text      string
	BreakLoop bool // ends the monologue: Text is the answer (the response tool)
	IsError   bool
	// Diffs are the files the tool changed, for editors to show; they
	// travel on the tool_result event, not into history.
	Diffs []FileDiff
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

	progress headTail // what the tool printed, bounded
	streamed int      // bytes sent as tool_output_delta
}

// Progress reports live output of the tool: tool_output_update extensions
// may rewrite it (to mask a secret, say), then it is streamed to the editor
// as tool_output_delta and kept, bounded, so that an intervention can save
// what the tool produced so far. A flood of output is streamed up to
// Limits.LiveOutput bytes, then only summarised, so memory stays bounded.
func (c *ToolCall) Progress(ctx context.Context, text string) {
	if text == "" {
		return
	}
	a := c.Agent
	if a.hooks().Has(hooks.ToolOutputUpdate) {
		p := &ToolOutputPayload{Agent: a, ToolName: c.Name, Content: text}
		if err := a.hooks().Call(ctx, hooks.ToolOutputUpdate, p); err != nil {
			if ctx.Err() == nil {
				a.warn(c.ID, fmt.Sprintf("tool_output_update: %v", err))
			}
		} else {
			text = p.Content
		}
	}
	if c.progress.max == 0 {
		c.progress.max = a.session.cfg.Limits.ToolResult
	}
	c.progress.WriteString(text)
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
func (c *ToolCall) Output() string { return c.progress.String() }

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
