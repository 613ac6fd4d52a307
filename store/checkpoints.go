package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// Checkpoint is a point a session can go back to (an undo, a rewind, a
// fork), as the store keeps it: the engine's data as JSON.
type Checkpoint struct {
	// ID numbers the session's checkpoints from 1.
	ID      int
	Run     int // the run it was taken before (or in)
	Created time.Time
	Data    json.RawMessage
}

// PutCheckpoint queues c for the session, replacing the one with its ID
// (a checkpoint is completed when its run ends).
func (s *Store) PutCheckpoint(session string, c Checkpoint) {
	data := []byte(c.Data)
	if data == nil {
		data = []byte("null")
	}
	s.write("put checkpoint", session, false, func(b *batch) error {
		_, err := b.exec(`INSERT OR REPLACE INTO checkpoints (session, id, run, created, data) VALUES (?, ?, ?, ?, ?)`,
			session, c.ID, c.Run, c.Created.UnixNano(), data)
		return err
	})
}

// Checkpoints returns the session's committed checkpoints by ID. It fails
// with [ErrNotFound] if there is no such session.
func (s *Store) Checkpoints(session string) ([]Checkpoint, error) {
	rows, err := s.r.Query(`SELECT id, run, created, data FROM checkpoints WHERE session = ? ORDER BY id`, session)
	if err != nil {
		return nil, fmt.Errorf("checkpoints of session %q: %w", session, err)
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		var c Checkpoint
		var created int64
		var data []byte
		if err := rows.Scan(&c.ID, &c.Run, &created, &data); err != nil {
			return nil, fmt.Errorf("checkpoints of session %q: %w", session, err)
		}
		c.Created, c.Data = time.Unix(0, created), data
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checkpoints of session %q: %w", session, err)
	}
	if len(out) == 0 {
		if err := s.checkExists(session); err != nil {
			return nil, fmt.Errorf("checkpoints of session %q: %w", session, err)
		}
	}
	return out, nil
}

// AllCheckpoints returns the Data of every session's checkpoints (what a
// prune of the snapshots must keep).
func (s *Store) AllCheckpoints() ([]json.RawMessage, error) {
	rows, err := s.r.Query(`SELECT data FROM checkpoints`)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("checkpoints: %w", err)
		}
		out = append(out, data)
	}
	return out, rows.Err()
}

// TruncateHistory queues the removal of the agent's messages from N
// messages on and of its summaries after ID summaries (a rewind: the
// history goes back to what it was).
func (s *Store) TruncateHistory(session string, agent, messages, summaries int) {
	s.write("truncate history", session, false, func(b *batch) error {
		if _, err := b.exec(`DELETE FROM summaries WHERE session = ? AND agent = ? AND id > ?`, session, agent, summaries); err != nil {
			return err
		}
		return deleteMessages(b, `session = ? AND agent = ? AND n >= ?`, session, agent, messages)
	})
}
