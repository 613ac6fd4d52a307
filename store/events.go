package store

import (
	"bytes"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// Event is one entry of a session's event log.
type Event struct {
	// Seq orders the session's events and is unique in it (the engine
	// numbers them upwards).
	Seq int64
	// Type and Agent are kept beside Data for queries.
	Type  string
	Agent int
	// Data is the event as JSON (opaque to the store).
	Data []byte
}

const qInsertEvent = `INSERT INTO events (session, seq, type, agent, data) VALUES (?, ?, ?, ?, ?)`

// AppendEvent queues e at the end of the session's event log, and the
// advance of the session's LastSeq (to e.Seq if larger) and Updated (to the
// time of the call). Data is copied, so the caller may reuse its buffer. A
// Seq already stored is an error reported by Flush.
func (s *Store) AppendEvent(session string, e Event) {
	data := bytes.Clone(e.Data)
	if data == nil {
		data = []byte{} // NOT NULL
	}
	now := time.Now().UnixNano()
	s.write("append event", session, true, func(b *batch) error {
		if _, err := b.exec(qInsertEvent, session, e.Seq, e.Type, e.Agent, data); err != nil {
			return err
		}
		b.touch(session, e.Seq, now)
		return nil
	})
}

// Events returns the committed events of the session whose Seq is above
// since, oldest first, at most limit of them (0: all). It fails with
// [ErrNotFound] if there is no such session.
func (s *Store) Events(session string, since int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = -1
	}
	evs, err := s.events(session, `SELECT seq, type, agent, data FROM events
		WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?`, session, since, limit)
	if err != nil {
		return nil, fmt.Errorf("events of session %q: %w", session, err)
	}
	return evs, nil
}

// LastEvents returns the newest n committed events of the session, oldest
// first (none for n <= 0). It fails with [ErrNotFound] if there is no such
// session.
func (s *Store) LastEvents(session string, n int) ([]Event, error) {
	if n <= 0 {
		if err := s.checkExists(session); err != nil {
			return nil, fmt.Errorf("events of session %q: %w", session, err)
		}
		return nil, nil
	}
	evs, err := s.events(session, `SELECT seq, type, agent, data FROM events
		WHERE session = ? ORDER BY seq DESC LIMIT ?`, session, n)
	if err != nil {
		return nil, fmt.Errorf("events of session %q: %w", session, err)
	}
	slices.Reverse(evs)
	return evs, nil
}

// EventsOfType returns the committed events of the session of type typ,
// oldest first. It fails with [ErrNotFound] if there is no such session.
func (s *Store) EventsOfType(session, typ string) ([]Event, error) {
	evs, err := s.events(session, `SELECT seq, type, agent, data FROM events
		WHERE session = ? AND type = ? ORDER BY seq`, session, typ)
	if err != nil {
		return nil, fmt.Errorf("events of session %q: %w", session, err)
	}
	return evs, nil
}

// events runs query and scans its events; when there are none it checks
// that the session exists.
func (s *Store) events(session, query string, args ...any) ([]Event, error) {
	rows, err := s.r.Query(query, args...)
	if err != nil {
		return nil, err
	}
	evs, err := scanEvents(rows)
	if err == nil && len(evs) == 0 {
		err = s.checkExists(session)
	}
	return evs, err
}

func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var evs []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.Seq, &e.Type, &e.Agent, &e.Data); err != nil {
			return nil, err
		}
		if e.Data == nil {
			e.Data = []byte{}
		}
		evs = append(evs, e)
	}
	return evs, rows.Err()
}
