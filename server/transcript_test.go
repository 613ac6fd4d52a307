package server

import (
	"flag"
	"os"
	"testing"

	"github.com/zeroagent/zero/loop"
)

var update = flag.Bool("update", false, "rewrite testdata from what this build says")

// TestTranscriptGolden: a session with every kind of step a transcript
// shows, rendered as testdata/transcript.md says (-update rewrites it).
func TestTranscriptGolden(t *testing.T) {
	t.Parallel()
	old := "a\n"
	evs := []Event{
		{Type: loop.EventRunStarted, Text: "Fix the build"},
		{Type: loop.EventHeadline, Text: "Looking"},
		{Type: loop.EventToolCall, Item: "tool-1", Tool: "code_execution_tool", Method: "", Kind: "execute", Title: "Running the build", Args: []byte(`{"code":"make","runtime":"terminal"}`)},
		{Type: EventApprovalRequested, Item: "tool-1", Tool: "code_execution_tool", Title: "code_execution_tool: make", Text: "s/tool-1"},
		{Type: EventApprovalResolved, Item: "tool-1", Tool: "code_execution_tool", Status: ApprovalApproved, Text: "s/tool-1"},
		{Type: loop.EventToolStarted, Item: "tool-1", Tool: "code_execution_tool"},
		{Type: loop.EventToolOutputDelta, Item: "tool-1", Text: "cc main.c\n"},
		{Type: loop.EventToolResult, Item: "tool-1", Tool: "code_execution_tool", Status: loop.ToolFailed, Text: "cc main.c\nerror: x"},
		{Type: loop.EventToolCall, Item: "tool-2", Tool: "text_editor", Method: "patch", Kind: "edit", Args: []byte(`{"path":"main.c"}`)},
		{Type: EventApprovalRequested, Item: "tool-2", Tool: "text_editor", Text: "s/tool-2"},
		{Type: EventApprovalResolved, Item: "tool-2", Tool: "text_editor", Status: ApprovalDenied, Error: "not now", Text: "s/tool-2"},
		{Type: loop.EventToolResult, Item: "tool-2", Tool: "text_editor", Status: loop.ToolFailed, Text: "The user refused this call: not now"},
		{Type: loop.EventToolCall, Item: "tool-3", Tool: "text_editor", Method: "write", Kind: "edit", Title: "Writing", Args: []byte(`{"path":"a.txt"}`)},
		{Type: loop.EventToolResult, Item: "tool-3", Tool: "text_editor", Status: loop.ToolCompleted, Text: "written", Diffs: []FileDiff{{Path: "a.txt", OldText: &old, NewText: "b\n"}}},
		{Type: loop.EventSubordinateStarted, Agent: 1, Profile: "developer", Text: "look"},
		{Type: loop.EventToolCall, Agent: 1, Item: "tool-4", Tool: "response", Title: "Answering", Args: []byte(`{"text":"done"}`)},
		{Type: loop.EventToolResult, Agent: 1, Item: "tool-4", Tool: "response", Status: loop.ToolCompleted, Text: "done"},
		{Type: loop.EventResponse, Agent: 1, Text: "done"},
		{Type: loop.EventWarning, Text: "slow model"},
		{Type: loop.EventError, Text: "the model failed"},
		{Type: loop.EventRunEnded, StopReason: loop.StopError, Error: "the model failed"},
		{Type: loop.EventRunStarted, Text: "Again"},
		{Type: EventApprovalRequested, Item: "tool-9", Tool: "code_execution_tool", Title: "code_execution_tool: ls", Text: "s/tool-9"},
		{Type: EventApprovalResolved, Item: "tool-9", Tool: "code_execution_tool", Status: ApprovalCancelled, Text: "s/tool-9"},
		{Type: loop.EventResponse, Text: "All good."},
		{Type: loop.EventRunEnded, StopReason: loop.StopResponse},
		{Type: loop.EventRunStarted, Text: "Once more"},
		{Type: loop.EventRunEnded, StopReason: loop.StopCancelled, Error: "cancelled: the client disconnected"},
	}
	got := Transcript(Info{ID: "s", Roots: []string{"/ws"}, Profile: "agent0", Runs: 3}, evs)
	const file = "testdata/transcript.md"
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the transcript differs from %s (-update rewrites it):\n%s", file, got)
	}
}
