package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
)

// TestSandboxRunnerLinkOutsideWorkspace: the agent made the session's
// .zero/output a link to a folder outside the workspace; running a user
// tool writes nothing there (not the tool, not its input with the
// arguments) and still works or fails cleanly.
func TestSandboxRunnerLinkOutsideWorkspace(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".zero"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".zero", "output")); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "greet")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	backend, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	r := tools.SandboxRunner{Backend: backend, Root: ws, Dir: filepath.Join(".zero", "output", "s1")}
	out, _, err := r.Run(context.Background(), exe, []byte(`{"args": {"token": "VALUE"}}`))
	if err == nil && !strings.Contains(out, "hi") {
		t.Fatalf("no error and no output: %q", out)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) > 0 {
		t.Fatalf("the runner wrote outside the workspace: %v", entries)
	}
}
