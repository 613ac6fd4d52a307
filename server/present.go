package server

import (
	"cmp"
	"encoding/json"

	"github.com/zeroagent/zero/loop"
)

// The statuses of a tool call that has no result yet (ToolView.Status);
// a result's are loop.ToolCompleted, loop.ToolFailed and loop.ToolCancelled.
const (
	ToolPending    = "pending"     // asked for: waits for its extensions and approval
	ToolInProgress = "in_progress" // running
)

// KindOther is the kind of a tool call whose tool declared none.
const KindOther = "other"

// ToolView is a tool call as every face shows it: the ACP mapper, the MCP
// progress and zero_status, the transcript and the terminal's renderer.
// The Presenter works it out, so each face says the same of a call.
type ToolView struct {
	Item   string          // the call's item: its id
	Agent  int             // the agent that made it
	Tool   string          // the tool's name
	Method string          // the tool's method, if any
	Name   string          // Tool, or Tool:Method
	Title  string          // what the call does: the model's headline for it, else Name
	Kind   string          // what the call does, as its tool declared it (loop.ToolKinder), else KindOther
	Status string          // ToolPending, ToolInProgress, or the result's status
	Args   json.RawMessage // the arguments as shown (tool_call's)
	// Running: the result came, but what the call started goes on (see
	// Event.Running).
	Running bool
}

// Presenter follows one session's events, in order, and says which tool
// call each is about and how that call stands. A face keeps one per
// session (or per replay) and calls Tool for every event; it is not safe
// for concurrent use.
type Presenter struct {
	calls  map[string]ToolView
	hidden map[string]bool // the response tool's calls: the answer, not a tool call
}

// NewPresenter returns a presenter that has seen no event.
func NewPresenter() *Presenter {
	return &Presenter{calls: map[string]ToolView{}, hidden: map[string]bool{}}
}

// Reset forgets every call, for a log replayed from its start.
func (p *Presenter) Reset() {
	clear(p.calls)
	clear(p.hidden)
}

// Tool returns the tool call e is about, as it stands once e happened, and
// whether e is about one shown as a tool call: a tool_call, tool_started,
// tool_output_delta or tool_result, or an approval or a sandbox pull of a
// call. It is false for every other event and for the calls of the
// response tool, which are the agent's answer. A call whose tool_call was
// not seen (a replay that starts later) is worked out from e alone.
func (p *Presenter) Tool(e Event) (ToolView, bool) {
	switch e.Type {
	case loop.EventToolCall:
		v := viewOf(e)
		v.Status = ToolPending
		if e.Tool == "response" {
			if e.Item != "" {
				p.hidden[e.Item] = true
			}
			return v, false
		}
		if e.Item != "" {
			p.calls[e.Item] = v
		}
		return v, true
	case loop.EventToolStarted, loop.EventToolOutputDelta:
		v, ok := p.lookup(e)
		if !ok {
			return v, false
		}
		v.Status = ToolInProgress
		if e.Item != "" {
			p.calls[e.Item] = v
		}
		return v, true
	case loop.EventToolResult:
		v, ok := p.lookup(e)
		delete(p.calls, e.Item)
		delete(p.hidden, e.Item)
		if !ok {
			return v, false
		}
		v.Status, v.Running = cmp.Or(e.Status, loop.ToolCompleted), e.Running
		return v, true
	case EventApprovalRequested, EventApprovalResolved, EventSandboxPull:
		if e.Item == "" && e.Tool == "" {
			return ToolView{}, false
		}
		return p.lookup(e)
	}
	return ToolView{}, false
}

// lookup is the call e belongs to: the one seen, else worked out from e.
func (p *Presenter) lookup(e Event) (ToolView, bool) {
	if p.hidden[e.Item] || e.Tool == "response" {
		return ToolView{}, false
	}
	if v, ok := p.calls[e.Item]; ok && e.Item != "" {
		return v, true
	}
	v := viewOf(e)
	if e.Type != loop.EventToolCall {
		v.Title = v.Name // a later event's title is its own (an approval's question), not the call's
	}
	v.Status = ToolInProgress
	return v, true
}

func viewOf(e Event) ToolView {
	name := e.Tool
	if e.Method != "" {
		name += ":" + e.Method
	}
	return ToolView{Item: e.Item, Agent: e.Agent, Tool: e.Tool, Method: e.Method, Name: name,
		Title: cmp.Or(e.Title, name), Kind: cmp.Or(e.Kind, KindOther), Args: e.Args}
}

// ApprovalTitle is what an approval_requested event asks the user about,
// in the words every face uses: the broker's title of the call (its name
// and subject), else the tool's name.
func ApprovalTitle(e Event) string { return cmp.Or(e.Title, e.Tool) }
