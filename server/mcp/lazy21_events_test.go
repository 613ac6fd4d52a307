package mcp

import (
	"testing"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// zero_status gives a pull's newest report, not each of them.
func TestCompactKeepsThePullsNewestReport(t *testing.T) {
	evs := []server.Event{
		{Seq: 1, Type: loop.EventToolCall, Item: "tool-1", Tool: "code_execution_tool"},
		{Seq: 2, Type: server.EventSandboxPull, Item: "tool-1", Text: "pulling: 0 of 2 layers", Status: server.PullPulling},
		{Seq: 3, Type: server.EventSandboxPull, Item: "tool-1", Text: "pulling: 1 of 2 layers", Status: server.PullPulling},
		{Seq: 4, Type: server.EventSandboxPull, Item: "tool-1", Text: "pulled", Status: server.PullDone},
		{Seq: 5, Type: loop.EventToolOutputDelta, Item: "tool-1", Text: "hi\n"},
	}
	out, _, _ := compactEvents(evs, 5)
	if len(out) != 3 || out[1].Type != string(server.EventSandboxPull) || out[1].Text != "pulled" || out[1].Status != server.PullDone {
		t.Errorf("compacted = %+v, want the call, the pull's last report, the output", out)
	}
}
