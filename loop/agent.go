package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
)

// Agent is one agent of a session: agent 0 talks to the user, agent N+1 is
// agent N's subordinate.
type Agent struct {
	Number  int
	Profile string
	History *History
	// Data is free for tools and extensions; it lives as long as the agent
	// (Agent Zero's agent.data).
	Data map[string]any

	Superior    *Agent
	Subordinate *Agent

	session         *Session
	setup           *agentSetup
	loop            *LoopData
	lastUserMessage string
	sysTokens       struct {
		text  string
		n     int // the text's tokens and tools'
		tools int // the tokens of the functions offered with it
	}
	// sysMasked is the last system prompt masked, and its text (maskSystem).
	sysMasked struct{ text, masked string }
	// histCopy is the copy of the history's output the extensions get
	// this turn (see preparePrompt).
	histCopy []llm.Message
	// maskedReply is the last reply of the model known to hold aliases
	// only: it went through the reply's secrets streams and no extension
	// rewrote a chunk of it (see histAddAI).
	maskedReply string
	// compression is the agent's history compression (compress.go).
	compression compressState
	// finalTurn is set, for message_loop_end, on the turn that ends the
	// monologue.
	finalTurn bool
	// found are the tools of the setup's ToolSource, by name, as of the
	// monologue's start (see refreshTools); found names are sorted.
	found      map[string]Tool
	foundNames []string
	// native is set for a turn whose request offers native tool calls;
	// table is what it offers (checked once per monologue), descs the
	// tools' descriptions (made once) (native.go).
	// native is read by the background compression too (prompt vars).
	native atomic.Bool
	// pending are the native calls of the turn going on (nativeturn.go).
	pending pendingCalls
	// sent is what preparePrompt built the last request from; sentTokens
	// the token counts of its messages when they had to be counted
	// (outputCap).
	sent       sentPrompt
	sentTokens tokenMemo
	// toolsRefused: the endpoint refused native calls, for a model that
	// does not remember it itself.
	toolsRefused atomic.Bool
	// blind: the endpoint refused this agent's images (VisionAuto with a
	// model client that does not remember it).
	blind atomic.Bool
	table *toolTable
	descs map[string]string
}

// refreshTools takes the ToolSource's tools for the monologue to come.
func (a *Agent) refreshTools(ctx context.Context) {
	if a.table != nil {
		a.table.fresh = false // the next tools() checks the tools again
	}
	src := a.setup.ToolSource
	if src == nil {
		return
	}
	found := map[string]Tool{}
	var names []string
	for _, t := range src.Tools(ctx) {
		n := t.Name()
		if _, own := a.setup.tools[n]; own || found[n] != nil {
			continue
		}
		found[n] = t
		names = append(names, n)
	}
	slices.Sort(names)
	a.found, a.foundNames = found, names
}

func (s *Session) newAgent(number int, superior *Agent, setup *agentSetup) *Agent {
	a := &Agent{
		Number:   number,
		Profile:  setup.Profile,
		History:  newHistory(number, s.cfg.CountTokens, s.cfg.Journal),
		Data:     map[string]any{},
		Superior: superior,
		session:  s,
		setup:    setup,
	}
	a.History.mask, a.History.set = s.maskFunc(), s.cfg.Secrets
	if a.hooks().Has(hooks.AgentInit) {
		if err := a.hooks().Call(context.Background(), hooks.AgentInit, &AgentPayload{Agent: a}); err != nil {
			a.warn("", fmt.Sprintf("agent_init: %v", err))
		}
	}
	return a
}

// Session is the session the agent belongs to.
func (a *Agent) Session() *Session { return a.session }

// LoopData is the state of the running monologue, or nil.
func (a *Agent) LoopData() *LoopData { return a.loop }

// PromptVarser is implemented by tools that supply prompt vars of their
// own, as Agent Zero's plugins do (the text editor's default_line_count,
// which Agent Zero's _09_text_editor_config extension passes to
// agent.system.tool.text_editor.md). An agent's renders get the vars of
// every tool it has, over Config.Vars; the engine's own vars and a
// render's explicit vars win over them.
type PromptVarser interface {
	PromptVars() map[string]any
}

// Render renders a prompt file with the standard variables plus vars.
func (a *Agent) Render(name string, vars map[string]any) (string, error) {
	v := a.session.vars(a)
	maps.Copy(v, vars)
	return a.setup.Prompts.Render(name, v)
}

// mustRender renders a framework prompt; a missing or broken prompt file
// still yields a usable message, so a bad profile never silences the loop.
func (a *Agent) mustRender(name string, vars map[string]any) string {
	s, err := a.Render(name, vars)
	if err != nil {
		a.session.cfg.Logger.Warn("prompt render failed", "prompt", name, "err", err)
		parts := []string{name}
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			parts = append(parts, fmt.Sprintf("%s: %v", k, vars[k]))
		}
		return strings.Join(parts, "\n")
	}
	return s
}

func (a *Agent) hooks() *hooks.Set { return a.setup.Hooks }

func (a *Agent) emit(e Event) {
	e.Agent = a.Number
	a.session.emit(e)
}

func (a *Agent) warn(item, text string) {
	a.emit(Event{Type: EventWarning, Item: item, Text: text})
}

// call runs the extensions of a point.
func (a *Agent) call(ctx context.Context, point string, p hooks.Payload) error {
	if !a.hooks().Has(point) {
		return nil
	}
	return a.hooks().Call(ctx, point, p)
}

// cleanupCtx is the context for work that must still happen after the run
// was cancelled (history writes and their extensions): the run's own while
// it lives, then a detached one with a short deadline, so a cancel stays
// prompt.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), time.Second)
}

// histAdd adds a message to the history after hist_add_before extensions.
// A failing extension is reported and the content kept as it was: history
// never loses a message. This is where a message enters the history, so
// secrets are masked here, once, before the extensions see the content;
// what an extension changed is masked again.
func (a *Agent) histAdd(ctx context.Context, ai bool, content string) {
	a.histAddMasked(ctx, ai, a.session.mask(content))
}

// histAddMasked is histAdd for content that holds aliases only.
func (a *Agent) histAddMasked(ctx context.Context, ai bool, content string) {
	a.History.addMasked(ai, a.histAddBefore(ctx, ai, content))
}

// histAddBefore runs the hist_add_before extensions on content (aliases
// only) and returns what is to be added.
func (a *Agent) histAddBefore(ctx context.Context, ai bool, content string) string {
	if a.hooks().Has(hooks.HistAddBefore) {
		p := &HistAddPayload{Agent: a, AI: ai, Content: content}
		hctx, cancel := cleanupCtx(ctx)
		defer cancel()
		if err := a.hooks().Call(hctx, hooks.HistAddBefore, p); err != nil {
			a.warn("", fmt.Sprintf("hist_add_before: %v", err))
		} else if p.Content != content {
			content = a.session.mask(p.Content) // what an extension put there
		}
	}
	return content
}

func (a *Agent) histAddUser(ctx context.Context, in Input, intervention bool) {
	a.History.NewTopic() // a user message starts a new topic
	name := "fw.user_message.md"
	if intervention {
		name = "fw.intervention.md"
	}
	// system_message is Agent Zero's other var of these files: Zero's
	// user messages carry none. attachments names the images, which
	// follow the text.
	attachments := make([]string, len(in.Images))
	for i, im := range in.Images {
		attachments[i] = cmp.Or(im.Name, "image "+strconv.Itoa(i+1))
	}
	a.histAddImages(ctx, false, a.mustRender(name, map[string]any{
		"message": in.Text, "system_message": []string{}, "attachments": attachments,
	}), in.Images)
	// LoopData.UserMessage: the extensions' own copy, masked apart from
	// the history's (which is the template's text around it).
	a.lastUserMessage = a.session.mask(in.Text)
}

// histAddImages is histAdd for a message with images (none: histAdd).
func (a *Agent) histAddImages(ctx context.Context, ai bool, content string, images []llm.Image) {
	if len(images) == 0 {
		a.histAdd(ctx, ai, content)
		return
	}
	a.session.keepImages(images)
	a.History.addEntry(HistoryMessage{AI: ai, Content: a.histAddBefore(ctx, ai, a.session.mask(content)), Images: images})
}

// toolNotFound is the message for a request of a tool the agent does not
// have: fw.tool_not_found.md with tool_name, tools (the names, which Zero's
// file lists) and tools_prompt (the tools part of the system prompt, which
// Agent Zero's file shows, built as Agent Zero's Unknown tool builds it).
func (a *Agent) toolNotFound(ctx context.Context, ld *LoopData, name string) string {
	names := strings.Join(a.toolNames(), ", ")
	vars := map[string]any{"tool_name": name, "tools": names, "tools_prompt": names}
	var parts []string
	err := toolsPrompt(ctx, &SystemPromptPayload{Agent: a, Loop: ld, System: &parts})
	switch {
	case err != nil:
		a.session.cfg.Logger.Warn("tools prompt for an unknown tool", "err", err)
	case len(parts) > 0:
		vars["tools_prompt"] = parts[len(parts)-1]
	}
	return a.mustRender("fw.tool_not_found.md", vars)
}

// histAddAI adds what the model said. A reply that went through the
// secrets streams whole (maskedReply) holds aliases only and is not masked
// again; one an extension rewrote a chunk of is.
func (a *Agent) histAddAI(ctx context.Context, text string) {
	if text != a.maskedReply {
		text = a.session.mask(text)
	}
	if a.loop != nil {
		a.loop.LastResponse = text
	}
	a.histAddMasked(ctx, true, text)
}

func (a *Agent) histAddWarning(ctx context.Context, msg string) {
	a.histAdd(ctx, false, a.mustRender("fw.warning.md", map[string]any{"message": msg}))
}

// histAddToolResult adds a tool result, capped to Limits.ToolResult (head
// and tail kept), as the JSON object Agent Zero stores. result must hold
// aliases only (the callers mask what a tool returned once, as it returns):
// the hist_add_tool_result extensions and Config.Spill get it as it is. The
// JSON object is masked as any message entering the history is.
//
// The result of a native call (req.CallID) answers its call by id.
func (a *Agent) histAddToolResult(ctx context.Context, req toolRequest, result string, images ...llm.Image) {
	tool := req.Raw
	p := &ToolResultPayload{Agent: a, ToolName: tool, ToolResult: a.boundResult(tool, result)}
	if a.hooks().Has(hooks.HistAddToolResult) {
		hctx, cancel := cleanupCtx(ctx)
		defer cancel()
		if err := a.hooks().Call(hctx, hooks.HistAddToolResult, p); err != nil {
			a.warn("", fmt.Sprintf("hist_add_tool_result: %v", err))
		}
	}
	var b strings.Builder
	enc := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			raw, _ = json.Marshal(fmt.Sprint(v))
		}
		return string(raw)
	}
	b.WriteString(`{"tool_name": `)
	b.WriteString(enc(p.ToolName))
	b.WriteString(`, "tool_result": `)
	b.WriteString(enc(p.ToolResult))
	for _, k := range slices.Sorted(maps.Keys(p.Data)) {
		b.WriteString(", ")
		b.WriteString(enc(k))
		b.WriteString(": ")
		b.WriteString(enc(p.Data[k]))
	}
	b.WriteByte('}')
	if req.CallID == "" {
		a.histAddImages(ctx, false, b.String(), images)
		return
	}
	a.session.keepImages(images)
	content := a.histAddBefore(ctx, false, a.session.mask(b.String()))
	a.History.addEntry(HistoryMessage{Content: content, CallID: req.CallID, Images: images})
}

// boundResult caps a tool result for history (head and tail kept). The
// whole text is first handed to Config.Spill, when set, and the model is
// told where it is, so nothing is lost.
func (a *Agent) boundResult(tool, result string) string {
	limit := a.session.cfg.Limits.ToolResult
	if len(result) <= limit {
		return result
	}
	capped := capText(result, limit)
	if spill := a.session.cfg.Spill; spill != nil {
		path, err := spill(a, tool, result)
		if err != nil {
			a.warn("", fmt.Sprintf("saving the full %s result: %v", tool, err))
			return capped
		}
		// The file holds the result as the tool gave it, which is not
		// always all the tool saw (an MCP result past 4 MiB is cut, and
		// says so in its text): name it for what it holds.
		return capped + "\n[this result, all " + fmt.Sprint(len(result)) + " bytes the tool returned, is in " + path + "]"
	}
	return capped
}

// CallUtilityModel asks the utility model (summaries, memory) a one-off
// question, around the util_model_call_before/after extension points.
// Secrets are masked once in what is sent, before the extensions see it
// (what they change is masked again), and once in the answer.
func (a *Agent) CallUtilityModel(ctx context.Context, system, message string) (string, error) {
	s := a.session
	if err := s.checkBudget(); err != nil {
		return "", err
	}
	system, message = s.mask(system), s.mask(message)
	p := &UtilModelCallPayload{Agent: a, System: system, Message: message}
	if err := a.call(ctx, hooks.UtilModelCallBefore, p); err != nil {
		return "", s.maskError(err)
	}
	if p.System != system { // what an extension put there
		p.System = s.mask(p.System)
	}
	if p.Message != message {
		p.Message = s.mask(p.Message)
	}
	res, err := a.setup.UtilityModel.Stream(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.System, Content: p.System},
		{Role: llm.User, Content: p.Message},
	}, MaxOutputTokens: s.utilityCap(p.System, p.Message)}, func(llm.Delta) error { return nil })
	if err != nil {
		return "", s.maskError(fmt.Errorf("utility model: %w", err))
	}
	a.utilityUsage(p.System, p.Message, res)
	answer := s.mask(res.Content)
	p.Response, p.after = answer, true
	if err := a.call(ctx, hooks.UtilModelCallAfter, p); err != nil {
		return "", s.maskError(err)
	}
	if p.Response != answer {
		return s.mask(p.Response), nil // what an extension put there
	}
	return answer, nil
}

// IterationNo is the agent's total number of message-loop turns, across
// monologues (kept by the built-in _10_iteration_no extension).
func IterationNo(a *Agent) int {
	n, _ := a.Data[dataIterationNo].(int)
	return n
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Prompt renders a prompt file like Render but never fails: a missing or
// broken prompt still yields a readable message (for tools' notes).
func (a *Agent) Prompt(name string, vars map[string]any) string {
	return a.mustRender(name, vars)
}

// SystemPrompt assembles the system prompt the agent would be sent now, by
// running the system_prompt extensions (for `zero prompt`), secrets masked.
//
// Between runs it is the prompt of the protocol the next turn will speak
// (see [Agent.Functions]).
func (a *Agent) SystemPrompt(ctx context.Context) (string, error) {
	ld := newLoopData(a.lastUserMessage)
	if a.loop != nil {
		ld = a.loop
	} else {
		a.native.Store(a.nativeCalls())
	}
	var system []string
	if err := a.call(ctx, hooks.SystemPrompt, &SystemPromptPayload{Agent: a, Loop: ld, System: &system}); err != nil {
		return "", err
	}
	return a.session.mask(strings.Join(system, "\n\n")), nil
}
