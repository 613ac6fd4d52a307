package server

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zeroagent/zero/loop"
)

// The file system's root and a folder holding the home are not
// snapshotted (every file of the user's before each run); a workspace is.
func TestTooBroad(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	for root, broad := range map[string]bool{"/": true, home: true, filepath.Dir(home): true, filepath.Join(home, "code", "app"): false, t.TempDir(): false} {
		if got := tooBroad(root) != ""; got != broad {
			t.Errorf("tooBroad(%q) = %q, want broad %v", root, tooBroad(root), broad)
		}
	}
}

// A rewind or compaction asked for just after a run ended (run_ended was
// heard, and the face answered its client) waits for the run's last
// snapshot instead of calling the session busy; while a run still goes
// on, a hold that must not cancel it is refused at once.
func TestHoldWaitsForAnEndedRun(t *testing.T) {
	s := &Session{ended: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.busy, s.runs, s.last.Run = true, 1, 0 // run 1 goes on
	if _, _, err := s.hold(context.Background(), false); !errors.Is(err, loop.ErrBusy) {
		t.Fatalf("a hold during a run = %v, want ErrBusy", err)
	}
	s.last.Run = 1 // run 1 ended; its end-of-run snapshot is being taken
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.hold(done, false); !errors.Is(err, context.Canceled) {
		t.Fatalf("a hold after run_ended = %v, want it to wait (here: until its context ended)", err)
	}
	got := make(chan error, 1)
	go func() {
		release, _, err := s.hold(context.Background(), false)
		if err == nil {
			release()
		}
		got <- err
	}()
	s.mu.Lock()
	s.busy = false
	close(s.ended)
	s.ended = make(chan struct{})
	s.mu.Unlock()
	if err := <-got; err != nil {
		t.Fatalf("the hold once the run was done = %v", err)
	}
}
