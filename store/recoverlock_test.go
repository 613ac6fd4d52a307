//go:build unix || windows

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Recover's refusal needs file locks (lock_unix.go, lock_windows.go): the
// platforms without them have no way to see a held session, and no such
// test.

// While another Store holds one of its sessions, the file is not moved.
func TestRecoverRefusesHeldSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zero.db")
	fill(t, path, 100, 30, 0)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claim("s000", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	ev := leaves(pagesOf(t, path, "events"))
	smash(t, path, ev[len(ev)/2].no)
	if _, err := Recover(path, RecoverOptions{}); !errors.Is(err, ErrBusy) {
		t.Errorf("Recover while a session is held: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Recover(path, RecoverOptions{}); err != nil {
		t.Errorf("Recover once released: %v", err)
	}
}
