package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	// Images are the message's pictures. Each is stored once by its Hash
	// (Data is written the first time); History gives them with their
	// data, or without it when the store lost it (Data nil).
	Images []Image
}

// Image is a picture of a message as the store keeps it.
type Image struct {
	Hash   string `json:"sha256"`
	MIME   string `json:"mime"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Name   string `json:"name,omitempty"`
	Data   []byte `json:"-"`
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
	qInsertMessage = `INSERT INTO messages (session, agent, n, topic, ai, content, tokens, calls, call_id, images) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qInsertImage   = `INSERT OR IGNORE INTO images (hash, mime, data) VALUES (?, ?, ?)`
	qInsertSummary = `INSERT INTO summaries (session, agent, id, kind, from_n, to_n, content, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	qSetTokens     = `UPDATE messages SET tokens = ? WHERE session = ? AND agent = ? AND n = ?`
)

// AddMessage queues m at the end of the agent's history in the session. A
// message N already stored is an error reported by Flush.
func (s *Store) AddMessage(session string, agent int, m Message) {
	images := ""
	if len(m.Images) > 0 {
		raw, _ := json.Marshal(m.Images) // strings and numbers only: cannot fail
		images = string(raw)
	}
	s.write("add message", session, false, func(b *batch) error {
		for _, im := range m.Images {
			if len(im.Data) == 0 {
				continue
			}
			if _, err := b.exec(qInsertImage, im.Hash, im.MIME, im.Data); err != nil {
				return err
			}
		}
		_, err := b.exec(qInsertMessage, session, agent, m.N, m.Topic, m.AI, m.Content, m.Tokens, m.Calls, m.CallID, images)
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
	rows, err := tx.Query(`SELECT n, topic, ai, content, tokens, calls, call_id, images FROM messages
		WHERE session = ? AND agent = ? ORDER BY n`, session, agent)
	if err != nil {
		return History{}, err
	}
	for rows.Next() {
		var m Message
		var images string
		if err := rows.Scan(&m.N, &m.Topic, &m.AI, &m.Content, &m.Tokens, &m.Calls, &m.CallID, &images); err != nil {
			rows.Close()
			return History{}, err
		}
		if images != "" && json.Unmarshal([]byte(images), &m.Images) != nil {
			m.Images = nil // damaged: the message keeps its text
		}
		h.Messages = append(h.Messages, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return History{}, err
	}
	if err := loadImages(tx, h.Messages); err != nil {
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

// loadImages reads the data of the messages' images, once per image. One
// whose data is missing or does not match its hash stays without data.
func loadImages(tx *sql.Tx, msgs []Message) error {
	data := map[string][]byte{}
	for i := range msgs {
		for j := range msgs[i].Images {
			im := &msgs[i].Images[j]
			d, ok := data[im.Hash]
			if !ok {
				err := tx.QueryRow(`SELECT data FROM images WHERE hash = ?`, im.Hash).Scan(&d)
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				if sum := sha256.Sum256(d); hex.EncodeToString(sum[:]) != im.Hash {
					d = nil
				}
				data[im.Hash] = d
			}
			im.Data = d
		}
	}
	return nil
}

// collectImages deletes the images no message names any more.
func collectImages(b *batch) error {
	_, err := b.exec(`DELETE FROM images WHERE hash NOT IN (
		SELECT json_extract(j.value, '$.sha256') FROM messages, json_each(messages.images) j WHERE messages.images != '')`)
	return err
}
