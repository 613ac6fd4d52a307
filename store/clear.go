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
