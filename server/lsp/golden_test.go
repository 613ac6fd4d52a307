package lsp

import (
	"context"
	"flag"
	"io"
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/golden) from what the face says now")

// TestGolden: the LSP-style conversations of testdata/golden, as an editor
// sees them (see servertest.RunGolden; -update rewrites them).
func TestGolden(t *testing.T) {
	servertest.RunGolden(t, "testdata/golden/*.txtar", servertest.Face{
		Framing: servertest.ContentLength,
		Serve: func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return Serve(ctx, in, out, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
		},
		Join: joinDeltas,
	}, *update)
}

// joinDeltas joins consecutive zero/event deltas of one stream, as
// server.Coalesce does for a client that reads slowly: the face sends them
// as one event or several depending on timing.
func joinDeltas(prev, next map[string]any) (map[string]any, bool) {
	if prev["method"] != "zero/event" || next["method"] != "zero/event" {
		return nil, false
	}
	p, _ := prev["params"].(map[string]any)
	n, _ := next["params"].(map[string]any)
	switch n["type"] {
	case "reasoning_delta", "thoughts_delta", "response_delta", "tool_output_delta":
	default:
		return nil, false
	}
	if p["type"] != n["type"] || p["agent"] != n["agent"] || p["item"] != n["item"] {
		return nil, false
	}
	pt, _ := p["text"].(string)
	nt, _ := n["text"].(string)
	p["text"], p["seq"] = pt+nt, n["seq"]
	return prev, true
}
