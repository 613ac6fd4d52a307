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
