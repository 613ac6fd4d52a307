package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

const (
	// maxEvents bounds one zero_status answer, so a model's context is not
	// flooded; "more" tells it to call again from the cursor.
	maxEvents = 300
	uriPrefix = "zero://session/"
)

// compact is an event as zero_status hands it out: only what a model needs.
type compact struct {
	Seq        int64  `json:"seq"`
	Agent      int    `json:"agent,omitempty"`
	Type       string `json:"type"`
	Item       string `json:"item,omitempty"`
	Text       string `json:"text,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Title      string `json:"title,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Status     string `json:"status,omitempty"`
	Running    bool   `json:"running,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	Error      string `json:"error,omitempty"`
	Profile    string `json:"profile,omitempty"`
	// Images name the pictures of a message or a tool result (zero_run
	// returns a run's tools' pictures themselves).
	Images []server.ImageRef `json:"images,omitempty"`
	// The payloads of checkpoint, rewound, forked and history_compressed.
	Checkpoint *server.CheckpointRef `json:"checkpoint,omitempty" jsonschema:"checkpoint: the checkpoint taken (its id is zero_rewind's to) and what it covers"`
	Rewind     *server.RewindReport  `json:"rewind,omitempty" jsonschema:"rewound: what the rewind did"`
	Fork       *server.ForkRef       `json:"fork,omitempty" jsonschema:"forked: the session this one was forked from, and after which run"`
	Tokens     *server.TokenChange   `json:"tokens,omitempty" jsonschema:"history_compressed: the history's size in tokens before and after"`
}

// compactEvents drops bookkeeping events (turns, usage, plans, the response
// tool's own call, which is the answer) and joins consecutive deltas of the
// same item (server.Coalesce). Seq of a joined delta is its last one's.
// When more than maxEvents remain, it stops there and returns that event's
// seq as the cursor with more set.
func compactEvents(evs []server.Event, cursor int64) ([]compact, int64, bool) {
	kept := make([]server.Event, 0, len(evs))
	tools := server.NewPresenter()
	for _, e := range evs {
		switch e.Type {
		case loop.EventTurnStarted, loop.EventUsage:
		case loop.EventPlan: // todo:write's result says the plan; zero_status's plan holds it
		case loop.EventToolCall, loop.EventToolStarted, loop.EventToolResult:
			if _, ok := tools.Tool(e); ok { // not the response tool's: that is the answer
				kept = append(kept, e)
			}
		default:
			kept = append(kept, e)
		}
	}
	out := []compact{}
	for _, e := range server.Coalesce(kept) {
		if len(out) == maxEvents {
			return out, out[len(out)-1].Seq, true
		}
		switch {
		case e.Type != loop.EventToolResult:
		case e.Streamed > 0 && e.Streamed <= len(e.Text):
			// The live output (in this answer or an earlier one) said the
			// start: only what the tool added (a note) is left to say.
			e.Text = strings.TrimSpace(e.Text[e.Streamed:])
		case sameOutput(out, e):
			e.Text = "" // the output is in the deltas above: once is enough
		}
		if n := len(out); e.Type == server.EventSandboxPull && n > 0 && out[n-1].Type == string(e.Type) && out[n-1].Item == e.Item {
			out = out[:n-1] // a pull's progress: its newest report says it all
		}
		out = append(out, compact{Seq: e.Seq, Agent: e.Agent, Type: string(e.Type), Item: e.Item, Text: e.Text,
			Tool: e.Tool, Title: e.Title, Kind: e.Kind, Status: e.Status, Running: e.Running, StopReason: e.StopReason,
			Error: e.Error, Profile: e.Profile, Images: e.Images, Checkpoint: e.Checkpoint, Rewind: e.Rewind, Fork: e.Fork, Tokens: e.Tokens})
	}
	return out, cursor, false
}

// sameOutput reports whether the live output of result's tool call, joined
// in out, already says what the result says.
func sameOutput(out []compact, result server.Event) bool {
	for i := len(out) - 1; i >= 0; i-- {
		c := out[i]
		if c.Item == result.Item && c.Agent == result.Agent && c.Type == string(loop.EventToolOutputDelta) {
			return strings.TrimSpace(c.Text) == strings.TrimSpace(result.Text)
		}
	}
	return false
}

// answerOnce drops an agent's streamed answer (response_delta) from events
// that also hold its whole answer (response): the log says it once.
func answerOnce(events []compact) []compact {
	answered := map[int]bool{}
	for _, c := range events {
		if c.Type == string(loop.EventResponse) {
			answered[c.Agent] = true
		}
	}
	if len(answered) == 0 {
		return events
	}
	return slices.DeleteFunc(events, func(c compact) bool {
		return c.Type == string(loop.EventResponseDelta) && answered[c.Agent]
	})
}

// syncResources makes resources/list show the manager's sessions; mcp-go
// lists a static set, so it is refreshed before each listing.
func (f *face) syncResources() {
	rs := []mcpserver.ServerResource{f.memoriesResource()}
	for _, in := range f.mgr.List() {
		name := cmpOr(in.Title, "session "+in.ID)
		rs = append(rs, mcpserver.ServerResource{
			Resource: mcp.NewResource(uriPrefix+in.ID, name,
				mcp.WithResourceDescription(fmt.Sprintf("Zero session %s (%d runs)", in.ID, in.Runs)),
				mcp.WithMIMEType("text/markdown")),
			Handler: f.readSession,
		})
	}
	f.srv.SetResources(rs...)
}

func (f *face) readSession(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, ok := strings.CutPrefix(req.Params.URI, uriPrefix)
	if !ok || id == "" {
		return nil, fmt.Errorf("%w: %s", mcpserver.ErrResourceNotFound, req.Params.URI)
	}
	info, evs, err := f.mgr.Peek(id) // reading opens nothing: another process may continue it
	if errors.Is(err, server.ErrNotFound) {
		return nil, fmt.Errorf("%w: no session %q", mcpserver.ErrResourceNotFound, id)
	} else if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI: req.Params.URI, MIMEType: "text/markdown", Text: server.Transcript(info, evs),
	}}, nil
}
