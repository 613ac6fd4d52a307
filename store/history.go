package store

import (
	"fmt"
)

// Message is one raw message of an agent's history (the store's copy of the
// engine's history message).
type Message struct {
	// N numbers the agent's messages from 0 in the order they were added.
	N int
	// Topic numbers the topics from 0; a user message starts a new one.
	Topic   int
	AI      bool
	Content string
	// Tokens is the message's token count, 0 while it was not counted.
	Tokens int
	// Calls are the native tool calls of a model's message, as the engine
	// encodes them (JSON); "" for none.
	Calls string
	// CallID is the native call a tool result answers; "" for none.
	CallID string
}

// Summary stands for the raw messages From..To (inclusive) of an agent's
// history once compressed (the store's copy of the engine's summary).
type Summary struct {
	// ID numbers the agent's summaries from 1 in the order they were made.
	ID int
	// Kind is the engine's kind of summary ("message", "topic", ...).
	Kind     string
	From, To int
	Content  string
	Tokens   int
}

// History is an agent's history as stored: both lists only grow.
type History struct {
	Messages  []Message // ordered by N
	Summaries []Summary // ordered by ID
}

const (
	qInsertMessage = `INSERT INTO messages (session, agent, n, topic, ai, content, tokens, calls, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qInsertSummary = `INSERT INTO summaries (session, agent, id, kind, from_n, to_n, content, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	qSetTokens     = `UPDATE messages SET tokens = ? WHERE session = ? AND agent = ? AND n = ?`
)

// AddMessage queues m at the end of the agent's history in the session. A
// message N already stored is an error reported by Flush.
func (s *Store) AddMessage(session string, agent int, m Message) {
	s.write("add message", session, false, func(b *batch) error {
		_, err := b.exec(qInsertMessage, session, agent, m.N, m.Topic, m.AI, m.Content, m.Tokens, m.Calls, m.CallID)
		return err
	})
}

// AddSummary queues sm for the agent's history in the session. A summary ID
// already stored is an error reported by Flush.
func (s *Store) AddSummary(session string, agent int, sm Summary) {
	s.write("add summary", session, false, func(b *batch) error {
		_, err := b.exec(qInsertSummary, session, agent, sm.ID, sm.Kind, sm.From, sm.To, sm.Content, sm.Tokens)
		return err
	})
}

// SetTokens queues the token count of the agent's message n, counted after
// the message was added. A missing message is an error reported by Flush.
func (s *Store) SetTokens(session string, agent, n, tokens int) {
	s.write("set tokens", session, false, func(b *batch) error {
		res, err := b.exec(qSetTokens, tokens, session, agent, n)
		return oneRow(res, err, fmt.Sprintf("message %d of agent %d", n, agent))
	})
}

// History returns the committed history of the agent in the session (empty
// if it has none). It fails with [ErrNotFound] if there is no such session.
func (s *Store) History(session string, agent int) (History, error) {
	h, err := s.history(session, agent)
	if err != nil {
		return History{}, fmt.Errorf("history of agent %d in session %q: %w", agent, session, err)
	}
	return h, nil
}

func (s *Store) history(session string, agent int) (History, error) {
	// One read transaction, so that messages and summaries agree.
	tx, err := s.r.Begin()
	if err != nil {
		return History{}, err
	}
	defer tx.Rollback()
	var h History
	rows, err := tx.Query(`SELECT n, topic, ai, content, tokens, calls, call_id FROM messages
		WHERE session = ? AND agent = ? ORDER BY n`, session, agent)
	if err != nil {
		return History{}, err
	}
	for rows.Next() {
		var m Message
		if err := rows.Scan(&m.N, &m.Topic, &m.AI, &m.Content, &m.Tokens, &m.Calls, &m.CallID); err != nil {
			rows.Close()
			return History{}, err
		}
		h.Messages = append(h.Messages, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return History{}, err
	}
	rows, err = tx.Query(`SELECT id, kind, from_n, to_n, content, tokens FROM summaries
		WHERE session = ? AND agent = ? ORDER BY id`, session, agent)
	if err != nil {
		return History{}, err
	}
	for rows.Next() {
		var sm Summary
		if err := rows.Scan(&sm.ID, &sm.Kind, &sm.From, &sm.To, &sm.Content, &sm.Tokens); err != nil {
			rows.Close()
			return History{}, err
		}
		h.Summaries = append(h.Summaries, sm)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return History{}, err
	}
	if len(h.Messages) == 0 && len(h.Summaries) == 0 {
		var one int
		if err := tx.QueryRow(`SELECT 1 FROM sessions WHERE id = ?`, session).Scan(&one); err != nil {
			return History{}, notFound(err)
		}
	}
	return h, nil
}

// Agents returns the numbers of the agents that have a committed history in
// the session, in increasing order. It fails with [ErrNotFound] if there is
// no such session.
func (s *Store) Agents(session string) ([]int, error) {
	rows, err := s.r.Query(`SELECT agent FROM messages WHERE session = ?
		UNION SELECT agent FROM summaries WHERE session = ? ORDER BY 1`, session, session)
	if err != nil {
		return nil, fmt.Errorf("agents of session %q: %w", session, err)
	}
	defer rows.Close()
	var agents []int
	for rows.Next() {
		var a int
		if err := rows.Scan(&a); err != nil {
			return nil, fmt.Errorf("agents of session %q: %w", session, err)
		}
		agents = append(agents, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("agents of session %q: %w", session, err)
	}
	if len(agents) == 0 {
		if err := s.checkExists(session); err != nil {
			return nil, fmt.Errorf("agents of session %q: %w", session, err)
		}
	}
	return agents, nil
}
