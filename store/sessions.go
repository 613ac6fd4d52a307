package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// Session is a durable session's row.
type Session struct {
	ID string
	// Workspace is the main root (an absolute path); listings filter by it.
	Workspace string
	// Roots are all the workspace roots, the first being Workspace.
	Roots   []string
	Profile string
	Model   string
	Title   string
	Created time.Time
	Updated time.Time
	// Runs counts the session's runs (prompts), as the engine keeps it.
	Runs int
	// LastSeq is the Seq of the newest event stored (0 when none).
	LastSeq int64
	// Settings is free JSON kept for the engine (approval rules etc.); nil
	// when none.
	Settings json.RawMessage
}

// CreateSession stores a new session and waits until it is committed (after
// every write queued before it), so writes queued afterwards find it. A zero
// Created means now, a zero Updated means Created; LastSeq is ignored (0).
// It fails with [ErrExists] if a session with that ID exists.
func (s *Store) CreateSession(sess Session) error {
	if sess.ID == "" {
		return errors.New("create session: empty id")
	}
	if sess.Created.IsZero() {
		sess.Created = time.Now()
	}
	if sess.Updated.IsZero() {
		sess.Updated = sess.Created
	}
	roots, err := joinRoots(sess.Roots)
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	settings, err := settingsArg(sess.Settings)
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	err = s.do(op{name: "create session", session: sess.ID, apply: func(b *batch) error {
		_, err := b.exec(`INSERT INTO sessions (id, workspace, roots, profile, model, title, created, updated, runs, settings)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.ID, sess.Workspace, roots, sess.Profile, sess.Model, sess.Title,
			sess.Created.UnixNano(), sess.Updated.UnixNano(), sess.Runs, settings)
		if isCode(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
			return ErrExists
		}
		return err
	}})
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	return nil
}

const qUpdateSession = `UPDATE sessions SET profile = ?, model = ?, title = ?, runs = ?, updated = ?, settings = ?, roots = ? WHERE id = ?`

// UpdateSession queues the replacement of the session's Profile, Model,
// Title, Runs, Updated (zero means now), Settings and Roots; the other fields
// are kept. Updating a missing session is an error reported by Flush.
func (s *Store) UpdateSession(sess Session) {
	if sess.Updated.IsZero() {
		sess.Updated = time.Now()
	}
	roots, rerr := joinRoots(sess.Roots)
	settings, serr := settingsArg(sess.Settings)
	s.write("update session", sess.ID, false, func(b *batch) error {
		if err := errors.Join(rerr, serr); err != nil {
			return err
		}
		res, err := b.exec(qUpdateSession, sess.Profile, sess.Model, sess.Title, sess.Runs, sess.Updated.UnixNano(), settings, roots, sess.ID)
		return oneRow(res, err, "session")
	})
}

// DeleteSession removes the session with its events, messages and summaries,
// after every write queued before it; it fails with [ErrNotFound] if there is
// no such session, and with [ErrBusy] while another Store holds it (see
// Claim). Writes for it queued afterwards fail.
func (s *Store) DeleteSession(id string) error {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if _, held := s.held[id]; !held && lockable {
		f, err := s.lock(id)
		if errors.Is(err, errLocked) {
			return fmt.Errorf("delete session %q: %w%s", id, ErrBusy, s.holder(id))
		} else if err != nil {
			return fmt.Errorf("delete session %q: %w", id, err)
		}
		s.held[id] = f
	}
	err := s.do(op{name: "delete session", session: id, apply: func(b *batch) error {
		if err := deleteMessages(b, `session = ?`, id); err != nil {
			return err
		}
		res, err := b.exec(`DELETE FROM sessions WHERE id = ?`, id) // cascades
		return oneRow(res, err, "session")
	}})
	if err == nil && lockable {
		// Under the lock: a process claiming it now finds no session.
		os.Remove(s.lockFile(id))
	}
	s.unlock(id)
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	return nil
}

const sessionColumns = `id, workspace, roots, profile, model, title, created, updated, runs, last_seq, settings`

// Session returns the committed state of the session with id, or an error
// wrapping [ErrNotFound].
func (s *Store) Session(id string) (Session, error) {
	sess, err := scanSession(s.r.QueryRow(`SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("session %q: %w", id, err)
	}
	return sess, nil
}

// ListOptions selects the sessions [Store.Sessions] returns.
type ListOptions struct {
	// Workspace keeps the sessions whose Workspace it is; "" keeps all.
	Workspace string
	// Limit is the most sessions returned; 0 means no limit.
	Limit int
}

// Sessions returns the committed sessions that o selects, the most recently
// updated first.
func (s *Store) Sessions(o ListOptions) ([]Session, error) {
	var where strings.Builder
	var args []any
	if o.Workspace != "" {
		where.WriteString(` WHERE workspace = ?`)
		args = append(args, o.Workspace)
	}
	limit := -1
	if o.Limit > 0 {
		limit = o.Limit
	}
	args = append(args, limit)
	rows, err := s.r.Query(`SELECT `+sessionColumns+` FROM sessions`+where.String()+
		` ORDER BY updated DESC, id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// exists reports whether the session id is committed.
func (s *Store) exists(id string) (bool, error) {
	var one int
	err := s.r.QueryRow(`SELECT 1 FROM sessions WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// checkExists returns an error wrapping ErrNotFound if the session id is
// not committed.
func (s *Store) checkExists(id string) error {
	ok, err := s.exists(id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	return err
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(r scanner) (Session, error) {
	var (
		sess             Session
		roots            string
		created, updated int64
		settings         []byte
	)
	err := r.Scan(&sess.ID, &sess.Workspace, &roots, &sess.Profile, &sess.Model, &sess.Title,
		&created, &updated, &sess.Runs, &sess.LastSeq, &settings)
	if err != nil {
		return Session{}, err
	}
	sess.Roots = splitRoots(roots)
	sess.Created = time.Unix(0, created)
	sess.Updated = time.Unix(0, updated)
	if settings != nil {
		sess.Settings = json.RawMessage(settings)
	}
	return sess, nil
}

// settingsArg is the column value of Settings: NULL for nil, else a copy of
// the JSON (the caller may reuse its buffer), which must be valid.
func settingsArg(raw json.RawMessage) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, errors.New("settings: invalid JSON")
	}
	return bytes.Clone(raw), nil
}

// oneRow turns the result of an UPDATE or DELETE of one row into an error
// wrapping ErrNotFound when it changed nothing.
func oneRow(res sql.Result, err error, what string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// joinRoots encodes roots as one string, each root preceded by a NUL byte
// (which no path contains), so that any other byte survives and [] and [""]
// differ.
func joinRoots(roots []string) (string, error) {
	var b strings.Builder
	for _, r := range roots {
		if strings.IndexByte(r, 0) >= 0 {
			return "", fmt.Errorf("root %q contains a NUL byte", r)
		}
		b.WriteByte(0)
		b.WriteString(r)
	}
	return b.String(), nil
}

// splitRoots decodes joinRoots; "" is nil.
func splitRoots(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s[1:], "\x00")
}

// notFound maps sql.ErrNoRows to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
