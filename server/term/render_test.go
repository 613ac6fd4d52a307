package term

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// The live view nests a subordinate's work under its superior.
func TestRendererIndentsSubordinates(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	r := newRenderer(&b, false)
	for _, e := range []server.Event{
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

// The model's text cannot act on the terminal: a command that would erase
// its own start and print an innocent one is shown as it is.
func TestRenderShowsControlCharacters(t *testing.T) {
	var b strings.Builder
	r := newRenderer(&b, false)
	args, _ := json.Marshal(map[string]string{"code": "rm -rf ~/precious #\r\x1b[2KAllow ls -la"})
	r.event(server.Event{Type: loop.EventToolCall, Tool: "code_execution_tool", Title: "Listing\x1b]0;pwned\x07", Args: args})
	r.event(server.Event{Type: loop.EventThoughtsDelta, Text: "fine\x1b[2J\x9b"})
	out := b.String()
	if strings.ContainsAny(out, "\r\x1b\x07") || strings.Contains(out, "\u009b") {
		t.Fatalf("control characters reached the terminal: %q", out)
	}
	if !strings.Contains(out, "rm -rf ~/precious #␍␛[2KAllow ls -la") || !strings.Contains(out, `Listing␛]0;pwned\x07`) {
		t.Fatalf("the command is not shown as it is: %q", out)
	}
}

func TestTermGateShowsControlCharacters(t *testing.T) {
	out, _ := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "rm -rf x #\r\x1b[2KAllow ls"}, "n\n")
	if strings.ContainsAny(out, "\r\x1b") || !strings.Contains(out, "rm -rf x #␍␛[2KAllow ls") {
		t.Fatalf("the question lets the command act on the terminal: %q", out)
	}
}

// A command's output is shown once, even when a line of the chat's own
// (the user's message) came between it and the result; a result that says
// the command still runs is told in plain words, not with the model's
// note; a failed tool is the error shown; a cancelled one leaves the
// saying to the run's end.
func TestRenderResultsSayEachFactOnce(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	r := newRenderer(&b, false)
	r.event(server.Event{Type: loop.EventToolCall, Item: "tool-1", Tool: "code_execution_tool", Title: "Counting", Args: []byte(`{"code":"count"}`)})
	r.event(server.Event{Type: loop.EventToolOutputDelta, Item: "tool-1", Text: "tick 1\n"})
	r.line("› hurry up") // the chat prints the user's message
	r.event(server.Event{Type: loop.EventToolResult, Item: "tool-1", Tool: "code_execution_tool", Status: loop.ToolCompleted,
		Running: true, Streamed: len("tick 1"), Text: "tick 1\n[SYSTEM: The command is still running in session 0 ...]"})
	r.event(server.Event{Type: loop.EventToolCall, Item: "tool-2", Tool: "code_execution_tool", Title: "Opening", Args: []byte(`{"code":"x"}`)})
	r.event(server.Event{Type: loop.EventToolResult, Item: "tool-2", Tool: "code_execution_tool", Status: loop.ToolFailed,
		Text: "open shell 0: no shell", Error: "tool code_execution_tool: open shell 0: no shell"})
	r.event(server.Event{Type: loop.EventToolCall, Item: "tool-3", Tool: "code_execution_tool", Title: "Waiting", Args: []byte(`{"code":"sleep 9"}`)})
	r.event(server.Event{Type: loop.EventToolResult, Item: "tool-3", Tool: "code_execution_tool", Status: loop.ToolCancelled, Text: "[cancelled by the user]"})
	want := `● Counting  code_execution_tool
  $ count
tick 1
› hurry up
(still running: the agent can wait for it, type into it or stop it)
● Opening  code_execution_tool
  $ x
✗ open shell 0: no shell
● Waiting  code_execution_tool
  $ sleep 9
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("live view (-want +got):\n%s", diff)
	}
	if r.lastError != "tool code_execution_tool: open shell 0: no shell" {
		t.Errorf("lastError = %q: the run's end would say the failure again", r.lastError)
	}
}

// On a live terminal a pull's progress is one line no wider than the
// terminal, drawn anew each time; a line that comes meanwhile takes its
// place, and the progress goes on under it.
func TestRenderPullInPlace(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	r := newRenderer(&b, false)
	r.live, r.width = true, func() int { return 30 }
	pull := func(status, text string) {
		r.event(server.Event{Type: server.EventSandboxPull, Item: "tool-1", Status: status, Text: text})
	}
	r.event(server.Event{Type: loop.EventThoughtsDelta, Text: "run it"})
	pull(server.PullPulling, "pulling the sandbox image kali: 0 of 2 layers")
	pull(server.PullPulling, "pulling 1 of 2")
	r.event(server.Event{Type: loop.EventWarning, Text: "slow"})
	pull(server.PullPulling, "pulling 2 of 2")
	pull(server.PullDone, "pulled kali")
	want := "thinking: run it\n" +
		"\r\x1b[K… pulling the sandbox image …" + // 29 columns
		"\r\x1b[K… pulling 1 of 2" +
		"\r\x1b[K! slow\n" +
		"\r\x1b[K… pulling 2 of 2" +
		"\r\x1b[K✓ pulled kali\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("live pull (-want +got):\n%s", diff)
	}
}
