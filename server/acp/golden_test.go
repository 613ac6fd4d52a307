package acp

import (
	"context"
	"flag"
	"io"
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/golden) from what the face says now")

// TestGolden: the ACP conversations of testdata/golden, as an editor sees
// them (see servertest.RunGolden; -update rewrites them).
func TestGolden(t *testing.T) {
	servertest.RunGolden(t, "testdata/golden/*.txtar", servertest.Face{
		Framing: servertest.Lines,
		Serve: func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return Serve(ctx, in, out, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
		},
		Join: joinUpdates,
	}, *update)
}

// joinUpdates joins what the face may send in one update or several,
// depending on how fast the editor reads: consecutive chunks of a message
// or a thought, and the live output of a tool call (each update holds the
// whole output so far: the last says it).
func joinUpdates(prev, next map[string]any) (map[string]any, bool) {
	pu, pok := update_(prev)
	nu, nok := update_(next)
	if !pok || !nok {
		return nil, false
	}
	kind := nu["sessionUpdate"]
	if pu["sessionUpdate"] != kind {
		return nil, false
	}
	switch kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		pc, _ := pu["content"].(map[string]any)
		nc, _ := nu["content"].(map[string]any)
		if pc == nil || nc == nil || pc["type"] != "text" || nc["type"] != "text" {
			return nil, false
		}
		pc["text"] = pc["text"].(string) + nc["text"].(string)
		return prev, true
	case "tool_call_update":
		if pu["toolCallId"] != nu["toolCallId"] || !outputOnly(pu) || !outputOnly(nu) {
			return nil, false
		}
		return next, true
	}
	return nil, false
}

func update_(m map[string]any) (map[string]any, bool) {
	if m["method"] != "session/update" {
		return nil, false
	}
	p, _ := m["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	return u, u != nil
}

// outputOnly: a tool call update that carries only content (live output).
func outputOnly(u map[string]any) bool {
	for k := range u {
		if k != "sessionUpdate" && k != "toolCallId" && k != "content" {
			return false
		}
	}
	return true
}
