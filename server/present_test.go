package server

import (
	"testing"

	"github.com/zeroagent/zero/loop"
)

func TestPresenter(t *testing.T) {
	t.Parallel()
	p := NewPresenter()
	type step struct {
		e      Event
		ok     bool
		title  string
		kind   string
		status string
	}
	for i, s := range []step{
		{Event{Type: loop.EventHeadline, Text: "Looking"}, false, "", "", ""},
		{Event{Type: loop.EventToolCall, Item: "tool-1", Tool: "code_execution_tool", Method: "terminal", Kind: "execute", Title: "Listing files"}, true, "Listing files", "execute", ToolPending},
		{Event{Type: EventApprovalRequested, Item: "tool-1", Tool: "code_execution_tool", Title: "code_execution_tool: ls"}, true, "Listing files", "execute", ToolPending},
		{Event{Type: loop.EventToolStarted, Item: "tool-1", Tool: "code_execution_tool"}, true, "Listing files", "execute", ToolInProgress},
		{Event{Type: loop.EventToolOutputDelta, Item: "tool-1", Text: "a\n"}, true, "Listing files", "execute", ToolInProgress},
		{Event{Type: loop.EventToolResult, Item: "tool-1", Tool: "code_execution_tool", Status: loop.ToolFailed}, true, "Listing files", "execute", loop.ToolFailed},
		// Forgotten once it has its result: a later event is worked out from itself.
		{Event{Type: loop.EventToolResult, Item: "tool-1", Tool: "code_execution_tool"}, true, "code_execution_tool", KindOther, loop.ToolCompleted},
		{Event{Type: loop.EventToolCall, Item: "tool-2", Tool: "text_editor", Method: "read"}, true, "text_editor:read", KindOther, ToolPending},
		{Event{Type: loop.EventToolCall, Item: "tool-3", Tool: "response", Title: "Answering"}, false, "", "", ""},
		{Event{Type: loop.EventToolStarted, Item: "tool-3", Tool: "response"}, false, "", "", ""},
		{Event{Type: loop.EventToolOutputDelta, Item: "tool-3", Text: "x"}, false, "", "", ""},
		{Event{Type: loop.EventToolResult, Item: "tool-3", Tool: "response"}, false, "", "", ""},
		{Event{Type: EventSandboxPull, Text: "pulling"}, false, "", "", ""},
	} {
		v, ok := p.Tool(s.e)
		if ok != s.ok || ok && (v.Title != s.title || v.Kind != s.kind || v.Status != s.status) {
			t.Errorf("%d: %s: got %v %q %q %q, want %v %q %q %q", i, s.e.Type, ok, v.Title, v.Kind, v.Status, s.ok, s.title, s.kind, s.status)
		}
	}
}
