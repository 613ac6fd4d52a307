//go:build unix

package tools_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zeroagent/zero/tools"
)

// A named pipe is refused, not waited on: opening one for reading blocks
// until a writer comes, and none will.
func TestVisionLoadRefusesANamedPipe(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.png"), 0o644); err != nil {
		t.Fatal("mkfifo:", err)
	}
	tool := tools.NewVisionLoad(tools.VisionLoadOptions{Roots: []string{ws}})
	res := visionCall(t, tool, ws, jsonList("pipe.png"))
	if !res.IsError || !strings.Contains(res.Text, "a named pipe") {
		t.Errorf("IsError %v:\n%s", res.IsError, res.Text)
	}
}
