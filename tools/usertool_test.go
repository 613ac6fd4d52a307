//go:build unix

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroagent/zero/tools"
)

// TestHostRunnerKillsWhatTheToolStarted: a user tool that runs past its
// deadline is stopped with what it started (a background child would
// otherwise live on), and its output stays bounded.
func TestHostRunnerKillsWhatTheToolStarted(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "slow")
	pidFile := filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + "\nhead -c 3000000 /dev/zero | tr '\\\\0' x\nwait\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out, _, err := tools.HostRunner{Dir: dir, Env: os.Environ()}.Run(ctx, exe, []byte("{}"))
	if err == nil {
		t.Fatal("a tool past its deadline did not fail")
	}
	if len(out) > 1<<20 {
		t.Errorf("%d bytes of output kept", len(out))
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the tool's child %d outlived it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
