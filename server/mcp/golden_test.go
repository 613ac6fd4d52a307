package mcp

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/golden) from what the face says now")

// TestGolden: the MCP conversations of testdata/golden, as a client sees
// them (see servertest.RunGolden; -update rewrites them).
func TestGolden(t *testing.T) {
	servertest.RunGolden(t, "testdata/golden/*.txtar", servertest.Face{
		Framing: servertest.Lines,
		Serve: func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return ServeStdio(ctx, in, out, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
		},
		// mcp-go writes notifications from a goroutine of their own: a run's
		// log messages may reach the client before or after its result.
		Async: func(m map[string]any) bool {
			method, _ := m["method"].(string)
			return strings.HasPrefix(method, "notifications/")
		},
	}, *update)
}
