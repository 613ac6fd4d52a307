package store

// ClearHistory queues the removal of every agent's history in the session
// (a reset: the conversation starts over, the event log stays). Messages
// added after it start again from N 0.
func (s *Store) ClearHistory(session string) {
	s.write("clear history", session, false, func(b *batch) error {
		if _, err := b.exec(`DELETE FROM summaries WHERE session = ?`, session); err != nil {
			return err
		}
		return deleteMessages(b, `session = ?`, session)
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
		return deleteMessages(b, `session = ? AND agent = ?`, session, agent)
	})
}

// deleteMessages deletes the messages where cond holds and, when some of
// them had images, the images no message names any more.
func deleteMessages(b *batch, cond string, args ...any) error {
	row, err := b.queryRow(`SELECT EXISTS (SELECT 1 FROM messages WHERE `+cond+` AND images != '')`, args...)
	if err != nil {
		return err
	}
	var had bool
	if err := row.Scan(&had); err != nil {
		return err
	}
	if _, err := b.exec(`DELETE FROM messages WHERE `+cond, args...); err != nil {
		return err
	}
	if !had {
		return nil
	}
	return collectImages(b)
}
