package store

import (
	"fmt"
)

// Claim records that process pid drives the session, after every write
// queued before it. It fails with [ErrBusy] while another process that is
// alive holds the session; the claim of a process that is gone is taken
// over, and pid may claim again what it holds. It fails with [ErrNotFound]
// if there is no such session. The check and the claim are one IMMEDIATE
// transaction, so two processes racing for a session cannot both win.
//
// A process is alive if signal 0 reaches it on Unix (a zombie counts as
// gone on Linux); elsewhere a process other than this one is taken for gone.
// A dead owner's pid reused by an unrelated process keeps the session busy
// until that process ends.
func (s *Store) Claim(session string, pid int) error {
	err := s.do(op{name: "claim", session: session, apply: func(b *batch) error {
		row, err := b.queryRow(`SELECT owner_pid FROM sessions WHERE id = ?`, session)
		if err != nil {
			return err
		}
		var owner int
		if err := row.Scan(&owner); err != nil {
			return notFound(err)
		}
		if owner != 0 && owner != pid && alive(owner) {
			return fmt.Errorf("%w (pid %d)", ErrBusy, owner)
		}
		_, err = b.exec(`UPDATE sessions SET owner_pid = ? WHERE id = ?`, pid, session)
		return err
	}})
	if err != nil {
		return fmt.Errorf("claim session %q: %w", session, err)
	}
	return nil
}

// Release clears pid's claim of the session, after every write queued
// before it. It does nothing if the session is not pid's, or does not exist.
func (s *Store) Release(session string, pid int) error {
	err := s.do(op{name: "release", session: session, apply: func(b *batch) error {
		_, err := b.exec(`UPDATE sessions SET owner_pid = 0 WHERE id = ? AND owner_pid = ?`, session, pid)
		return err
	}})
	if err != nil {
		return fmt.Errorf("release session %q: %w", session, err)
	}
	return nil
}
