package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// The model's reasoning and its stated thoughts both become thought chunks;
// a switch between them starts a new paragraph instead of running the two
// together ("…the terminal.I will…").
func TestReasoningAndThoughtsAreParagraphs(t *testing.T) {
	t.Parallel()
	m := newMapper(nil)
	var text strings.Builder
	send := func(u sdk.SessionUpdate) {
		if u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil {
			text.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		}
	}
	for i, e := range []server.Event{
		{Type: loop.EventReasoningDelta, Text: "I should look at "},
		{Type: loop.EventReasoningDelta, Text: "the terminal."},
		{Type: loop.EventThoughtsDelta, Text: "I will list"},
		{Type: loop.EventThoughtsDelta, Text: " the files."},
		{Type: loop.EventReasoningDelta, Text: "Next turn."},
	} {
		e.Seq = int64(i + 1)
		m.event(e, false, send, nil)
	}
	want := "I should look at the terminal.\n\nI will list the files.\n\nNext turn."
	if text.String() != want {
		t.Errorf("thoughts = %q, want %q", text.String(), want)
	}
}

// A warning that an MCP server needs the person to log in is something to
// do: an agent message naming the command, not a thought an editor folds
// away; other warnings stay thoughts.
func TestLoginNeededIsAMessage(t *testing.T) {
	t.Parallel()
	m := newMapper(nil)
	var thoughts, messages strings.Builder
	send := func(u sdk.SessionUpdate) {
		switch {
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			thoughts.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			messages.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	m.event(server.Event{Seq: 1, Type: loop.EventWarning, Text: "mcp server linear: the MCP server linear needs a login: run `zero mcp login linear`"}, false, send, nil)
	m.event(server.Event{Seq: 2, Type: loop.EventWarning, Text: "the model's window is small"}, false, send, nil)
	if !strings.Contains(messages.String(), "run `zero mcp login linear`") || strings.Contains(thoughts.String(), "login") {
		t.Errorf("the login warning: message %q, thoughts %q", messages.String(), thoughts.String())
	}
	if !strings.Contains(thoughts.String(), "Warning: the model's window is small") {
		t.Errorf("another warning should stay a thought: %q", thoughts.String())
	}
}
