package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A session is driven by one process at a time. The claim is an exclusive
// OS file lock (flock on Unix, LockFileEx on Windows) on a small file per
// session beside the database, held by the Store while the session is
// open: the kernel drops it when the process dies however it dies, a
// reused pid or another pid namespace cannot fool it, and two Stores of one
// process exclude each other as two processes do. The claiming pid is also
// written to the session's row, to say who holds it. Where no file lock is
// available, the row alone decides, with a liveness check of its pid.

// lockDir is the folder of the claim files of the database at path.
func lockDir(path string) string { return path + ".locks" }

// lockFile names the claim file of session: a digest, so any id is a
// plain file name.
func (s *Store) lockFile(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(s.locks, hex.EncodeToString(sum[:16])+".lock")
}

// Claim records that process pid drives the session, after every write
// queued before it. It fails with [ErrBusy] (naming the holder's pid) while
// another Store, in this process or another, holds the session, and with
// [ErrNotFound] if there is no such session. The Store holds the claim until
// Release or Close; claiming again what it holds succeeds.
func (s *Store) Claim(session string, pid int) error {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	_, held := s.held[session]
	var f *os.File
	if !held && lockable {
		var err error
		if f, err = s.lock(session); err != nil {
			if errors.Is(err, errLocked) {
				return fmt.Errorf("claim session %q: %w%s", session, ErrBusy, s.holder(session))
			}
			return fmt.Errorf("claim session %q: %w", session, err)
		}
	}
	err := s.do(op{name: "claim", session: session, apply: func(b *batch) error {
		row, err := b.queryRow(`SELECT owner_pid FROM sessions WHERE id = ?`, session)
		if err != nil {
			return err
		}
		var owner int
		if err := row.Scan(&owner); err != nil {
			return notFound(err)
		}
		if !lockable && owner != 0 && owner != pid && alive(owner) {
			return fmt.Errorf("%w (pid %d)", ErrBusy, owner)
		}
		_, err = b.exec(`UPDATE sessions SET owner_pid = ? WHERE id = ?`, pid, session)
		return err
	}})
	if err != nil {
		if f != nil {
			f.Close() // drops the lock
		}
		return fmt.Errorf("claim session %q: %w", session, err)
	}
	if !held {
		s.held[session] = f
	}
	return nil
}

// holder says which pid holds session, as its row records it.
func (s *Store) holder(session string) string {
	var owner int
	if err := s.r.QueryRow(`SELECT owner_pid FROM sessions WHERE id = ?`, session).Scan(&owner); err != nil || owner == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", owner)
}

// lock takes the claim file of session, or fails with errLocked.
func (s *Store) lock(session string) (*os.File, error) {
	if err := os.MkdirAll(s.locks, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(s.lockFile(session), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// A lock just dropped may linger for a moment: a child process forked
	// by another goroutine shares the file until it execs (the file is
	// close-on-exec). Another process's lock does not go away so soon.
	for wait := time.Duration(0); ; wait += lockRetry {
		err = lockExclusive(f)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, errLocked) || wait >= lockPatience {
			f.Close()
			return nil, err
		}
		time.Sleep(lockRetry)
	}
}

// A lock found taken is tried again every lockRetry for lockPatience.
const (
	lockRetry    = 10 * time.Millisecond
	lockPatience = 300 * time.Millisecond
)

// Release clears pid's claim of the session, after every write queued
// before it, and drops this Store's lock on it. It does nothing if the
// session is not pid's, or does not exist.
func (s *Store) Release(session string, pid int) error {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	err := s.do(op{name: "release", session: session, apply: func(b *batch) error {
		_, err := b.exec(`UPDATE sessions SET owner_pid = 0 WHERE id = ? AND owner_pid = ?`, session, pid)
		return err
	}})
	s.unlock(session)
	if err != nil {
		return fmt.Errorf("release session %q: %w", session, err)
	}
	return nil
}

// unlock drops the Store's lock on session (claimMu held).
func (s *Store) unlock(session string) {
	if f, ok := s.held[session]; ok {
		if f != nil {
			f.Close()
		}
		delete(s.held, session)
	}
}

// releaseAll drops every lock the Store holds (Close).
func (s *Store) releaseAll() {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	for session := range s.held {
		s.unlock(session)
	}
}
