package acp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/server"
)

// outputCap bounds the terminal output a tool call update carries: Zed
// replaces a tool call's content on each update, so every update holds the
// whole (tail of the) output.
const outputCap = 64 << 10

// mapper turns a session's events into ACP session updates. It belongs to
// one session's drainer goroutine.
type mapper struct {
	roots []string
	// tools says which tool call an event is about and how it stands (its
	// title, kind and status): the response tool's calls are the answer,
	// not tool calls, and it says so.
	tools *server.Presenter
	out   map[string]string // live output so far per tool call
	dirty []string          // tool calls whose output grew since the last update
	// answer is agent 0's answer streamed so far in this turn.
	answer   string
	errShown bool
	lastSeq  int64
	// thought is the kind of the last thought chunk sent (reasoning or the
	// JSON thoughts), so a switch between them starts a new paragraph.
	thought loop.EventType
	// options are the session's config options as they are now (nil: none
	// are sent when the mode changes).
	options func() []sdk.SessionConfigOption
	// plans are each agent's last plan: ACP has one plan per session, so
	// the subordinates' steps follow agent 0's, each marked with its agent.
	plans map[int][]server.PlanItem
	// image gives the data of a picture an event names (nil: none shown).
	image func(hash string) (llm.Image, bool)
	// checkpoint is the line of a run's checkpoint, held until the run
	// starts: it goes out after the run's user message (in a replay), so
	// that it opens the turn it belongs to, live and replayed alike.
	checkpoint string
}

func newMapper(roots []string) *mapper {
	m := &mapper{roots: roots, tools: server.NewPresenter()}
	m.reset()
	return m
}

func (m *mapper) reset() {
	m.tools.Reset()
	m.out = map[string]string{}
	m.dirty, m.answer, m.errShown, m.lastSeq, m.thought, m.checkpoint = nil, "", false, 0, "", ""
	m.plans = map[int][]server.PlanItem{}
}

// flush sends the pending output updates, coalescing many small deltas.
func (m *mapper) flush(send func(sdk.SessionUpdate)) {
	for _, id := range m.dirty {
		send(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateContent([]sdk.ToolCallContent{
			sdk.ToolContent(sdk.TextBlock(fence(m.out[id])))})))
	}
	m.dirty = m.dirty[:0]
}

// event maps e. replay is true while a log is replayed (session/load): the
// user's messages are shown and no permission is asked. ask may be nil.
func (m *mapper) event(e server.Event, replay bool, send func(sdk.SessionUpdate), ask asker) {
	if e.Seq != 0 {
		if e.Seq <= m.lastSeq {
			return // already sent in a replay
		}
		m.lastSeq = e.Seq
	}
	if e.Type != loop.EventToolOutputDelta {
		m.flush(send)
	}
	if m.checkpoint != "" && e.Type != loop.EventRunStarted {
		m.sendCheckpoint(send) // no run followed it
	}
	switch e.Type {
	case loop.EventToolCall, loop.EventToolStarted, loop.EventToolOutputDelta, loop.EventToolResult:
		if v, ok := m.tools.Tool(e); ok {
			if e.Type == loop.EventToolCall && e.Agent == 0 {
				// Text streamed as the answer before a call (a model with
				// native calls says what it will do, then calls) was not
				// the answer: the answer to come is compared with what
				// follows the call only.
				m.answer = ""
			}
			m.tool(e, v, send)
		}
	case server.EventSandboxPull, server.EventApprovalRequested, server.EventApprovalResolved:
		m.serverEvent(e, replay, send, ask)
	case server.EventQuestionRequested, server.EventQuestionResolved:
		m.question(e, replay, send, ask)
	case loop.EventPlan:
		if e.Plan == nil {
			return
		}
		m.plans[e.Agent] = e.Plan.Items
		send(m.plan())
	case server.EventModeChanged:
		if replay {
			return // session/load answers with the mode as it is now
		}
		// Both: a client that knows config options shows the mode option,
		// one that knows only modes the mode.
		send(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(e.Text)}})
		if m.options != nil {
			send(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: m.options()}})
		}
	default:
		m.text(e, replay, send)
	}
}

// plan is the session's plan as ACP shows it: agent 0's steps, then each
// subordinate's, marked "A1 · ", the whole list every time.
func (m *mapper) plan() sdk.SessionUpdate {
	entries := []sdk.PlanEntry{}
	for _, n := range slices.Sorted(maps.Keys(m.plans)) {
		for _, it := range m.plans[n] {
			content := it.Content
			if n > 0 {
				content = fmt.Sprintf("A%d · %s", n, content)
			}
			prio := sdk.PlanEntryPriority(it.Priority)
			if prio == "" {
				prio = sdk.PlanEntryPriorityMedium
			}
			entries = append(entries, sdk.PlanEntry{Content: content, Priority: prio, Status: sdk.PlanEntryStatus(it.Status)})
		}
	}
	return sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: entries}}
}

// text maps the events that say something in words: the user's messages,
// thoughts, the answer, warnings and errors, the run's end.
func (m *mapper) text(e server.Event, replay bool, send func(sdk.SessionUpdate)) {
	switch e.Type {
	case loop.EventRunStarted:
		m.answer, m.errShown = "", false
		if replay {
			send(sdk.UpdateUserMessageText(e.Text))
			m.userImages(e, send)
		}
		m.sendCheckpoint(send)
	case server.EventCheckpoint:
		// A short thought line, like a warning: the turn's checkpoint and
		// what it covers (the id /rewind takes).
		if e.Text == "" {
			return
		}
		m.checkpoint = "\n(" + e.Text + ")\n"
		if e.Checkpoint != nil && e.Checkpoint.Kind != server.CheckpointRun {
			m.sendCheckpoint(send) // a compaction's: no run follows
		}
	case server.EventForked:
		if e.Text != "" {
			send(sdk.UpdateAgentThoughtText("\n(" + e.Text + ")\n"))
		}
	case server.EventRewound:
		// The user's files may have changed: a message, not a thought,
		// saying what went back (the /undo and /rewind commands add
		// nothing to it).
		if text := rewoundText(e); text != "" {
			send(sdk.UpdateAgentMessageText("\n\n" + text))
		}
	case loop.EventIntervention:
		if replay { // live, the editor shows what its user typed
			send(sdk.UpdateUserMessageText(e.Text))
			m.userImages(e, send)
		}
	case loop.EventReasoningDelta, loop.EventThoughtsDelta:
		if e.Text == "" {
			return
		}
		text := e.Text
		if m.thought != "" && m.thought != e.Type && !strings.HasPrefix(text, "\n") {
			text = "\n\n" + text // the model's reasoning, then its stated thoughts: two paragraphs
		}
		m.thought = e.Type
		send(sdk.UpdateAgentThoughtText(text))
	case loop.EventResponseDelta:
		if e.Text == "" {
			return
		}
		if e.Agent == 0 {
			m.answer += e.Text
			send(sdk.UpdateAgentMessageText(e.Text))
		} else {
			send(sdk.UpdateAgentThoughtText(e.Text))
		}
	case loop.EventResponse:
		if e.Agent == 0 {
			m.response(e.Text, send)
		}
	case loop.EventWarning:
		if _, login := mcpconf.LoginHinted(e.Text); login {
			// Something for the person to do (an MCP server's login): a
			// message, not a thought an editor folds away.
			send(sdk.UpdateAgentMessageText("\n" + e.Text + "\n"))
		} else if e.Text != "" {
			send(sdk.UpdateAgentThoughtText("\nWarning: " + e.Text + "\n"))
		}
	case loop.EventHistoryCompressed:
		if e.Text != "" {
			send(sdk.UpdateAgentThoughtText("\n(" + e.Text + ")\n"))
		}
	case loop.EventError:
		if e.Text != "" || e.Error != "" {
			m.errShown = true
			send(sdk.UpdateAgentMessageText("\n\nError: " + firstNonEmpty(e.Text, e.Error) + "\n"))
		}
	case loop.EventRunEnded:
		if e.StopReason == loop.StopError && !m.errShown && e.Error != "" {
			send(sdk.UpdateAgentMessageText("\n\nError: " + e.Error + "\n"))
		}
		if e.StopReason == loop.StopBudget && e.Error != "" {
			send(sdk.UpdateAgentMessageText("\n\nStopped: " + e.Error + "\n"))
		}
		if replay && e.StopReason == loop.StopCancelled {
			// Live, session/prompt's stop reason said it; a replay has no
			// prompt to answer, so the turn says it was cut short.
			send(sdk.UpdateAgentMessageText("\n\n(" + firstNonEmpty(e.Error, "cancelled") + ")\n"))
		}
		m.answer, m.errShown = "", false
	}
}

// sendCheckpoint sends the checkpoint line held, if any.
func (m *mapper) sendCheckpoint(send func(sdk.SessionUpdate)) {
	if m.checkpoint == "" {
		return
	}
	send(sdk.UpdateAgentThoughtText(m.checkpoint))
	m.checkpoint = ""
}

// response sends what the stream of agent 0's answer missed of it.
func (m *mapper) response(text string, send func(sdk.SessionUpdate)) {
	rest := text
	if strings.HasPrefix(text, m.answer) {
		rest = text[len(m.answer):]
	} else if m.answer != "" {
		rest = ""
	}
	if rest != "" {
		send(sdk.UpdateAgentMessageText(rest))
	}
	m.answer = ""
}

// tool maps an event of tool call v (never the response tool's).
func (m *mapper) tool(e server.Event, v server.ToolView, send func(sdk.SessionUpdate)) {
	id := sdk.ToolCallId(e.Item)
	switch e.Type {
	case loop.EventToolCall:
		opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(toolKind(v.Kind)), sdk.WithStartStatus(sdk.ToolCallStatusPending)}
		if len(v.Args) > 0 {
			opts = append(opts, sdk.WithStartRawInput(json.RawMessage(v.Args)))
		}
		if v.Tool == "text_editor" {
			if p := argPath(v.Args); p != "" {
				opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: m.abs(p)}}))
			}
		}
		send(sdk.StartToolCall(id, v.Title, opts...))
	case loop.EventToolStarted:
		if e.Item != "" {
			send(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
		}
	case loop.EventToolOutputDelta:
		if e.Item == "" || e.Text == "" {
			return
		}
		if !contains(m.dirty, e.Item) {
			m.dirty = append(m.dirty, e.Item)
		}
		m.out[e.Item] = cut.Tail(m.out[e.Item]+e.Text, outputCap)
	case loop.EventToolResult:
		if e.Item == "" {
			return
		}
		delete(m.out, e.Item)
		send(m.result(e, v))
	}
}

// result is the update that ends tool call v with result e: its status and
// what it changed or said.
func (m *mapper) result(e server.Event, v server.ToolView) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if v.Status != loop.ToolCompleted {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	var locs []sdk.ToolCallLocation
	for _, d := range e.Diffs {
		p := m.abs(d.Path)
		content = append(content, sdk.ToolCallContent{Diff: &sdk.ToolCallContentDiff{Path: p, OldText: d.OldText, NewText: d.NewText, Type: "diff"}})
		locs = append(locs, sdk.ToolCallLocation{Path: p})
	}
	if len(content) == 0 && e.Text != "" {
		text := cut.Tail(e.Text, outputCap)
		if kind := toolKind(v.Kind); kind == sdk.ToolKindExecute || kind == sdk.ToolKindRead {
			text = fence(text)
		}
		content = append(content, sdk.ToolContent(sdk.TextBlock(text)))
	}
	for _, im := range m.pictures(e.Images) {
		content = append(content, sdk.ToolContent(im))
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if len(content) > 0 {
		opts = append(opts, sdk.WithUpdateContent(content))
	}
	if len(locs) > 0 {
		opts = append(opts, sdk.WithUpdateLocations(locs))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(e.Item), opts...)
}

// serverEvent maps the server's own events: a sandbox pull and approvals.
func (m *mapper) serverEvent(e server.Event, replay bool, send func(sdk.SessionUpdate), ask asker) {
	v, isCall := m.tools.Tool(e)
	switch e.Type {
	case server.EventSandboxPull:
		// A command waits for the sandbox image: its tool call shows how the
		// pull goes (the command's output replaces it when it comes). Only
		// live: a replay has nothing to wait for.
		if replay || e.Text == "" {
			return
		}
		if e.Item == "" || !isCall {
			send(sdk.UpdateAgentThoughtText("\n" + e.Text + "\n"))
			return
		}
		send(sdk.UpdateToolCall(sdk.ToolCallId(e.Item), sdk.WithUpdateContent([]sdk.ToolCallContent{
			sdk.ToolContent(sdk.TextBlock(e.Text))})))
	case server.EventApprovalResolved:
		if ask != nil {
			ask.withdraw(e.Text)
		}
	case server.EventApprovalRequested:
		if replay || ask == nil {
			return
		}
		var args map[string]any
		_ = json.Unmarshal(e.Args, &args)
		kind := toolKind(e.Kind)
		if isCall {
			kind = toolKind(v.Kind)
		}
		ask.ask(server.Request{ID: e.Text, Session: e.Session, Agent: e.Agent, Item: e.Item, Tool: e.Tool, Method: e.Method, Kind: e.Kind, Args: args, Title: e.Title}, kind)
	}
}

// asker puts approval requests and questions (see questions.go) to the
// client.
type asker interface {
	ask(req server.Request, kind sdk.ToolKind)
	askQuestion(q ask.Question)
	withdraw(id string) // an approval's or a question's
}

// abs makes a tool's path absolute against the main workspace: ACP paths
// are absolute.
func (m *mapper) abs(p string) string {
	if filepath.IsAbs(p) || len(m.roots) == 0 {
		return p
	}
	return filepath.Join(m.roots[0], p)
}

// toolKind is the ACP kind of a tool call: the kind its tool declared
// (see loop.ToolKinder), other when it is none of ACP's.
func toolKind(kind string) sdk.ToolKind {
	switch k := sdk.ToolKind(kind); k {
	case sdk.ToolKindRead, sdk.ToolKindEdit, sdk.ToolKindDelete, sdk.ToolKindMove, sdk.ToolKindSearch,
		sdk.ToolKindExecute, sdk.ToolKindThink, sdk.ToolKindFetch, sdk.ToolKindSwitchMode:
		return k
	}
	return sdk.ToolKindOther
}

// fence wraps output in a Markdown code fence longer than any run of
// backticks inside, so clients render it verbatim.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pictures are the image blocks of the images an event names, those whose
// data the session still has.
func (m *mapper) pictures(refs []server.ImageRef) []sdk.ContentBlock {
	if m.image == nil {
		return nil
	}
	var out []sdk.ContentBlock
	for _, r := range refs {
		if im, ok := m.image(r.SHA256); ok {
			b := sdk.ImageBlock(base64.StdEncoding.EncodeToString(im.Data), im.MIME)
			out = append(out, b)
		}
	}
	return out
}

// userImages replays the pictures of a user message.
func (m *mapper) userImages(e server.Event, send func(sdk.SessionUpdate)) {
	for _, b := range m.pictures(e.Images) {
		send(sdk.SessionUpdate{UserMessageChunk: &sdk.SessionUpdateUserMessageChunk{Content: b, SessionUpdate: "user_message_chunk"}})
	}
}
