package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/loop"
)

// The live view nests a subordinate's work under its superior.
func TestRendererIndentsSubordinates(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	r := newRenderer(&b, false)
	for _, e := range []loop.Event{
		{Agent: 0, Type: loop.EventThoughtsDelta, Text: "I will ask a researcher"},
		{Agent: 0, Type: loop.EventToolCall, Tool: "call_subordinate", Title: "Delegating", Args: []byte(`{"message":"find it"}`)},
		{Agent: 1, Type: loop.EventSubordinateStarted, Profile: "researcher", Text: "find it"},
		{Agent: 1, Type: loop.EventThoughtsDelta, Text: "searching\nstill"},
		{Agent: 1, Type: loop.EventToolCall, Tool: "code_execution_tool", Title: "Searching", Args: []byte(`{"code":"grep -r x ."}`)},
		{Agent: 1, Type: loop.EventToolOutputDelta, Text: "a.txt:x\nb.txt:x\n"},
		{Agent: 1, Type: loop.EventToolResult, Tool: "code_execution_tool", Status: loop.ToolCompleted},
		{Agent: 1, Type: loop.EventSubordinateEnded, Profile: "researcher", Text: "found in a.txt and b.txt"},
		{Agent: 0, Type: loop.EventToolResult, Tool: "call_subordinate", Status: loop.ToolCompleted, Text: "found in a.txt and b.txt"},
		{Agent: 0, Type: loop.EventResponseDelta, Text: "It is in a.txt and b.txt."},
		{Agent: 0, Type: loop.EventResponse, Text: "It is in a.txt and b.txt."},
	} {
		r.event(e)
	}
	want := `thinking: I will ask a researcher
● Delegating  call_subordinate {"message":"find it"}
  → A1 (researcher): find it
  A1 thinking: searching
  still
  A1 ● Searching  code_execution_tool
    $ grep -r x .
  a.txt:x
  b.txt:x
  ← A1 answered: found in a.txt and b.txt
found in a.txt and b.txt

It is in a.txt and b.txt.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("live view (-want +got):\n%s", diff)
	}
}
