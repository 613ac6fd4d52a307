package store

// ClearHistory queues the removal of every agent's history in the session
// (a reset: the conversation starts over, the event log stays). Messages
// added after it start again from N 0.
func (s *Store) ClearHistory(session string) {
	s.write("clear history", session, false, func(b *batch) error {
		if _, err := b.exec(`DELETE FROM summaries WHERE session = ?`, session); err != nil {
			return err
		}
		_, err := b.exec(`DELETE FROM messages WHERE session = ?`, session)
		return err
	})
}

// ClearAgentHistory queues the removal of one agent's history in the
// session: a subordinate replaced by a new one (or the first one after a
// reload) starts its history again from N 0.
func (s *Store) ClearAgentHistory(session string, agent int) {
	s.write("clear agent history", session, false, func(b *batch) error {
		if _, err := b.exec(`DELETE FROM summaries WHERE session = ? AND agent = ?`, session, agent); err != nil {
			return err
		}
		_, err := b.exec(`DELETE FROM messages WHERE session = ? AND agent = ?`, session, agent)
		return err
	})
}
