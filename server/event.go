package server

import (
	"encoding/json"
	"time"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/loop"
)

// EventVersion is the version of Event's shape, carried by every event as
// "v": what the faces send (LSP's zero/event is an Event as is) and what
// the store keeps. Raise it when a field changes meaning or name, and teach
// decodeEvent to read the older shape: sessions stored by an earlier Zero
// must load, replay and continue.
//
// Version 1 is the shape the events had before they were versioned (the
// engine's loop.Event as JSON): an event stored without "v" is version 1.
const EventVersion = 1

// Event is one step of a session as the editors see it and the store keeps
// it: the contract between Zero and its faces, its clients and its stored
// sessions. It is built from the engine's loop.Event in one place (EventOf,
// when the session logs it) and from nothing else but the server's own
// events (approvals, the sandbox pull, a run closed after a crash), so a
// field renamed in the engine fails to compile here instead of changing
// what editors receive. editors/vscode/src/protocol.ts's ZeroEvent mirrors
// it (server/lsp TestProtocolTS).
//
// Seq increases by one per event within a session; Item is the stable id
// of the message or tool call the event belongs to, so editors can group
// deltas. The fields are those of loop.Event, which says what each means.
type Event struct {
	V       int            `json:"v"`
	Seq     int64          `json:"seq"`
	Session string         `json:"session"`
	Agent   int            `json:"agent"`
	Item    string         `json:"item,omitempty"`
	Type    loop.EventType `json:"type"`
	Time    time.Time      `json:"time"`

	Text       string          `json:"text,omitempty"`
	Iteration  *int            `json:"iteration,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Method     string          `json:"method,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Title      string          `json:"title,omitempty"`
	Status     string          `json:"status,omitempty"`
	Running    bool            `json:"running,omitempty"`
	Streamed   int             `json:"streamed,omitempty"`
	Diffs      []FileDiff      `json:"diffs,omitempty"`
	Images     []ImageRef      `json:"images,omitempty"`
	Profile    string          `json:"profile,omitempty"`
	Usage      *Usage          `json:"usage,omitempty"`
	Tokens     *TokenChange    `json:"tokens,omitempty"`
	Plan       *Plan           `json:"plan,omitempty"`
	StopReason string          `json:"stop_reason,omitempty"`
	Error      string          `json:"error,omitempty"`
	// Checkpoint, Rewind and Fork are the server's own events'
	// (checkpoint, rewound, forked).
	Checkpoint *CheckpointRef `json:"checkpoint,omitempty"`
	Rewind     *RewindReport  `json:"rewind,omitempty"`
	Fork       *ForkRef       `json:"fork,omitempty"`
	// Question is a question_requested event's.
	Question *ask.Question `json:"question,omitempty"`
}

// ImageRef names a picture of a user message or a tool result: its data
// is the session's (Session.Image by SHA256), kept once.
type ImageRef struct {
	MIME   string `json:"mime"`
	SHA256 string `json:"sha256"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Name   string `json:"name,omitempty"`
}

// FileDiff is a file a tool changed: OldText is nil for a new file.
type FileDiff struct {
	Path    string  `json:"path"`
	OldText *string `json:"old_text"`
	NewText string  `json:"new_text"`
}

// Plan is an agent's whole plan (a plan event), as todo:write wrote it.
type Plan struct {
	Items []PlanItem `json:"items"`
}

// A PlanItem is one step of a plan: its status is pending, in_progress or
// completed; its priority high, medium, low or absent.
type PlanItem struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority,omitempty"`
}

// TokenChange is what the model sees of a history before and after it was
// compressed (history_compressed).
type TokenChange struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// EventOf is the editor-facing event of the engine's e: the one place a
// loop.Event becomes an Event.
func EventOf(e loop.Event) Event {
	out := Event{
		V: EventVersion, Seq: e.Seq, Session: e.Session, Agent: e.Agent, Item: e.Item, Type: e.Type, Time: e.Time,
		Text: e.Text, Iteration: e.Iteration, Tool: e.Tool, Method: e.Method, Args: e.Args, Kind: e.Kind,
		Title: e.Title, Status: e.Status, Running: e.Running, Streamed: e.Streamed, Profile: e.Profile,
		StopReason: e.StopReason, Error: e.Error,
	}
	if e.Diffs != nil {
		out.Diffs = make([]FileDiff, len(e.Diffs))
		for i, d := range e.Diffs {
			out.Diffs[i] = FileDiff{Path: d.Path, OldText: d.OldText, NewText: d.NewText}
		}
	}
	for _, im := range e.Images {
		out.Images = append(out.Images, ImageRef{MIME: im.MIME, SHA256: im.Hash, Width: im.Width, Height: im.Height, Name: im.Name})
	}
	out.Usage = usageOf(e.Usage) // usage: a call's; run_ended: the run's totals
	if t := e.Tokens; t != nil {
		out.Tokens = &TokenChange{Before: t.Before, After: t.After}
	}
	if p := e.Plan; p != nil {
		out.Plan = &Plan{Items: make([]PlanItem, len(p.Items))}
		for i, it := range p.Items {
			out.Plan.Items[i] = PlanItem{Content: it.Content, Status: it.Status, Priority: it.Priority}
		}
	}
	return out
}

// DecodeEvent reads an event as the store keeps it, of this version or an
// earlier one (an event without "v" is version 1).
func DecodeEvent(data []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	if e.V == 0 {
		e.V = 1 // stored before events were versioned: the same shape
	}
	return e, nil
}
