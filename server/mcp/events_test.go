package mcp

import (
	"slices"
	"testing"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// zero_status's events read like a log: a command's output once (not again
// in its result), the answer once (not also as its streamed pieces).
func TestStatusEventsSayEachThingOnce(t *testing.T) {
	t.Parallel()
	evs := []server.Event{
		{Seq: 1, Type: loop.EventHeadline, Item: "msg-1", Text: "Listing"},
		{Seq: 2, Type: loop.EventToolCall, Item: "tool-2", Tool: "code_execution_tool"},
		{Seq: 3, Type: loop.EventToolOutputDelta, Item: "tool-2", Text: "a.txt\n"},
		{Seq: 4, Type: loop.EventToolOutputDelta, Item: "tool-2", Text: "b.txt\n"},
		{Seq: 5, Type: loop.EventToolResult, Item: "tool-2", Tool: "code_execution_tool", Status: "completed", Text: "a.txt\nb.txt"},
		{Seq: 6, Type: loop.EventResponseDelta, Item: "msg-3", Text: "two "},
		{Seq: 7, Type: loop.EventResponseDelta, Item: "msg-3", Text: "files"},
		{Seq: 8, Type: loop.EventResponse, Item: "tool-4", Text: "two files"},
		{Seq: 9, Type: loop.EventRunEnded, StopReason: "response"},
	}
	out, _, _ := compactEvents(evs, 9)
	out = answerOnce(out)
	var types []string
	for _, c := range out {
		types = append(types, c.Type)
		if c.Type == "tool_result" && (c.Text != "" || c.Status != "completed") {
			t.Errorf("the result repeats the output: %+v", c)
		}
	}
	if want := []string{"headline", "tool_call", "tool_output_delta", "tool_result", "response", "run_ended"}; !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	// While the answer streams (no response yet), its pieces stay.
	live, _, _ := compactEvents(evs[:7], 7)
	if live = answerOnce(live); live[len(live)-1].Type != "response_delta" || live[len(live)-1].Text != "two files" {
		t.Errorf("a streaming answer: %+v", live[len(live)-1])
	}
	// A result that differs from the output (cut, or rewritten) keeps its text.
	diff := slices.Clone(evs[:5])
	diff[4].Text = "a.txt\n[…]"
	out, _, _ = compactEvents(diff, 5)
	if out[len(out)-1].Text == "" {
		t.Error("a result other than the output lost its text")
	}
}
