package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireBwrap skips without a working bubblewrap, and fails instead when
// ZERO_REQUIRE_DOCKER=1 (CI provisions both the engine and bwrap).
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
			t.Fatal("bwrap is not installed")
		}
		t.Skip("bwrap is not installed")
	}
}

func TestLocalBubblewrap(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	ws := t.TempDir()
	marker := filepath.Join(os.TempDir(), "zero-bwrap-host-marker")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, LocalOptions{Dir: ws, Isolation: IsolationBubblewrap})
	if mode, _ := l.Isolation(); mode != IsolationBubblewrap {
		t.Fatalf("isolation = %q", mode)
	}
	s, err := l.OpenShell(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "echo inside > made.txt && mkdir sub && cd sub && pwd"); r.ExitCode != 0 || strings.TrimSpace(r.Output) != filepath.Join(ws, "sub") {
		t.Errorf("the workspace should be writable and cd persist: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("file written in the sandbox: %q, %v", b, err)
	}
	if r := run(t, s, "touch /usr/zero-escape 2>/dev/null"); r.ExitCode == 0 {
		t.Error("the file system outside the workspace should be read-only")
	}
	if r := run(t, s, "ls /tmp"); strings.Contains(r.Output, "zero-bwrap-host-marker") {
		t.Error("/tmp should be private")
	}
	if r := run(t, s, "pwd"); strings.TrimSpace(r.Output) != filepath.Join(ws, "sub") {
		t.Errorf("state should persist: %+v", r)
	}
	// Interrupt still finds and kills the job, and the shell survives.
	if err := s.Start("sleep 100"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(t.Context(), Timeouts{FirstOutput: 200e6, BetweenOutput: 200e6, Max: 5e9, Dialog: 5e9}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Interrupt(t.Context()); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	if r := run(t, s, "echo alive"); strings.TrimSpace(r.Output) != "alive" {
		t.Errorf("the shell should survive Interrupt: %+v", r)
	}
}

func TestLocalIsolationAutoAndErrors(t *testing.T) {
	t.Parallel()
	if _, err := NewLocal(LocalOptions{Dir: t.TempDir(), Isolation: "jail"}); err == nil {
		t.Error("an unknown isolation should be an error")
	}
	l, err := NewLocal(LocalOptions{Dir: t.TempDir(), Isolation: IsolationAuto})
	if err != nil {
		t.Fatal(err)
	}
	mode, why := l.Isolation()
	if _, lookErr := exec.LookPath("bwrap"); lookErr != nil && (mode != IsolationNone || why == "") {
		t.Errorf("auto without bwrap: %q (%q)", mode, why)
	}
	if l, _ := NewLocal(LocalOptions{Dir: t.TempDir()}); l != nil {
		if mode, _ := l.Isolation(); mode != IsolationNone {
			t.Errorf("the default isolation should be none, got %q", mode)
		}
	}
}
