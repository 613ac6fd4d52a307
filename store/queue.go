package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// op is one write in the queue.
type op struct {
	name    string // for logs and errors: "append event", ...
	session string // for logs
	// apply performs the write inside the batch's transaction; nil for a
	// flush marker.
	apply func(b *batch) error
	// appends marks an AppendEvent, whose update of the session row may be
	// merged with the next ones (see batch.touch).
	appends bool
	flush   bool       // a Flush: reply with the errors queued writes had so far
	reply   chan error // non-nil for a synchronous call (and a flush)

	err error // this op's result in the current attempt
}

// Batches that find the database locked by another process for longer than
// the busy timeout are retried this many times, after a pause that doubles
// from retryPause.
const (
	maxRetries = 4
	retryPause = 50 * time.Millisecond
	// maxPause bounds the pause before a failed batch's writes are tried
	// again (see requeue).
	maxPause = 2 * time.Second
)

// enqueue adds o to the queue, reporting false if the store is closed.
func (s *Store) enqueue(o op) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.queue = append(s.queue, o)
	s.mu.Unlock()
	s.signal()
	return true
}

func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// write queues an asynchronous write; after Close it is dropped.
func (s *Store) write(name, session string, appends bool, apply func(b *batch) error) {
	if !s.enqueue(op{name: name, session: session, apply: apply, appends: appends}) {
		s.log.Warn("store write after close dropped", "op", name, "session", session)
	}
}

// do queues o and waits until its batch is committed, returning its error.
func (s *Store) do(o op) error {
	o.reply = make(chan error, 1)
	if !s.enqueue(o) {
		return ErrClosed
	}
	return <-o.reply
}

// run is the writer goroutine: it commits what was queued, batch by batch,
// until the store is closed and the queue is empty.
func (s *Store) run() {
	defer close(s.done)
	var spare []op
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		ops := s.queue
		s.queue = spare
		s.mu.Unlock()
		if len(ops) == 0 {
			return // closed and drained
		}
		s.commit(ops)
		clear(ops) // drop references to event data
		spare = ops[:0]
		if cap(spare) > 4096 {
			spare = nil // do not keep a burst's array forever
		}
	}
}

// commit commits ops in one transaction and replies to their callers. It
// first tries the whole batch plainly; if a write fails, it rolls back and
// runs the batch again with each write in a savepoint, so that the failing
// write alone is undone and the others still commit.
func (s *Store) commit(ops []op) {
	var err error
	for attempt := 0; ; attempt++ {
		err = s.exec(ops, false)
		if _, ok := errors.AsType[*opFailed](err); ok {
			err = s.exec(ops, true)
		}
		if !isBusy(err) || attempt == maxRetries {
			break
		}
		pause := retryPause << attempt
		s.log.Warn("store locked by another process, retrying", "writes", len(ops), "pause", pause)
		time.Sleep(pause)
	}
	if err != nil {
		err = fmt.Errorf("store: commit %d writes: %w", len(ops), damaged(s.path, err))
		if IsDamaged(err) {
			s.sayDamaged(err)
		} else {
			s.log.Error("store write failed", "err", err)
		}
		// Synchronous callers hear it directly, and a Flush learns that what
		// came before it is not written yet. The asynchronous writes are
		// not dropped: a hole in a session's events or history would make it
		// inconsistent, so they go back to the head of the queue, in order,
		// and are tried again after a pause (the database may be locked by a
		// stopped process, or the disk full), unless the store is closing
		// or the file is damaged (trying again cannot help).
		var keep []op
		for i := range ops {
			o := &ops[i]
			switch {
			case o.reply != nil:
				o.reply <- err
			default:
				keep = append(keep, *o)
			}
		}
		if len(keep) > 0 && IsDamaged(err) {
			s.errs = append(s.errs, fmt.Errorf("%w (%d writes dropped)", err, len(keep)))
		} else if len(keep) > 0 && !s.requeue(keep) {
			s.errs = append(s.errs, fmt.Errorf("%w (%d writes lost at close)", err, len(keep)))
		}
		return
	}
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
	for i := range ops {
		o := &ops[i]
		switch {
		case o.flush:
			o.reply <- s.takeErrs()
		case o.reply != nil:
			o.reply <- o.err
		case o.err != nil:
			err := fmt.Errorf("store: %s (session %q): %w", o.name, o.session, damaged(s.path, o.err))
			if IsDamaged(err) {
				s.sayDamaged(err)
			} else {
				s.log.Error("store write failed", "op", o.name, "session", o.session, "err", o.err)
			}
			s.errs = append(s.errs, err)
		}
	}
}

// sayDamaged tells, once, that a write found the file damaged: to
// OpenOptions.OnDamage, else to the log.
func (s *Store) sayDamaged(err error) {
	if s.damaged {
		return
	}
	s.damaged = true
	if s.onDamage != nil {
		s.onDamage(err)
		return
	}
	s.log.Error("the database file is damaged: writes that reach a damaged page fail, and are not tried again", "path", s.path, "err", err)
}

// requeue puts ops back at the head of the queue after a failed batch and
// pauses the writer, reporting false (the ops are dropped) when the store
// is closing: Close must not wait for ever for a locked database.
func (s *Store) requeue(ops []op) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.queue = append(ops, s.queue...)
	s.failures++
	pause := min(retryPause<<min(s.failures, 6), maxPause)
	s.mu.Unlock()
	s.log.Warn("store writes kept for a retry", "writes", len(ops), "pause", pause)
	select {
	case <-time.After(pause):
	case <-s.closing:
	}
	return true
}

// takeErrs returns the recorded errors joined and forgets them.
func (s *Store) takeErrs() error {
	err := errors.Join(s.errs...)
	s.errs = nil
	return err
}

// opFailed aborts a plain attempt at a batch when one of its writes fails.
type opFailed struct{ err error }

func (e *opFailed) Error() string { return e.err.Error() }
func (e *opFailed) Unwrap() error { return e.err }

// exec runs ops in one transaction and commits it. With safe false, the
// first failing write aborts the attempt with an *opFailed error. With safe
// true, each write runs in a savepoint and a failing one is undone and keeps
// its error in op.err. A returned error means nothing was committed.
func (s *Store) exec(ops []op, safe bool) (err error) {
	tx, err := s.w.Begin() // BEGIN IMMEDIATE (_txlock): waits for other writers
	if err != nil {
		return err
	}
	b := &batch{s: s, tx: tx}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for i := range ops {
		o := &ops[i]
		o.err = nil
		if !o.appends {
			if err := b.flushTouches(ops, safe); err != nil {
				return err
			}
		}
		if o.apply == nil {
			continue
		}
		b.cur = i
		if !safe {
			if err := o.apply(b); err != nil {
				return &opFailed{err}
			}
			continue
		}
		o.err, err = b.savepoint(func() error { return o.apply(b) })
		if err != nil {
			return err
		}
	}
	if err := b.flushTouches(ops, safe); err != nil {
		return err
	}
	return tx.Commit()
}

// batch is the transaction of one attempt at a batch of writes.
type batch struct {
	s     *Store
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	// touches are the session rows that appended events still have to
	// advance: merged into one UPDATE per session, and applied before any
	// other kind of write, so the order of writes is kept.
	touches []touch
	cur     int // index of the write being applied
}

type touch struct {
	session string
	seq     int64
	updated int64
	op      int // index of the last append that touched it, for errors
}

// stmt returns the statement for query in the batch's transaction: the
// one prepared at Open for the writer connection if there is one, else one
// prepared for this batch.
func (b *batch) stmt(query string) (*sql.Stmt, error) {
	if st, ok := b.stmts[query]; ok {
		return st, nil
	}
	var tst *sql.Stmt
	if st, ok := b.s.stmts[query]; ok {
		tst = b.tx.Stmt(st) // reuses st's preparation on the one connection
	} else {
		var err error
		if tst, err = b.tx.Prepare(query); err != nil {
			return nil, err
		}
	}
	if b.stmts == nil {
		b.stmts = make(map[string]*sql.Stmt)
	}
	b.stmts[query] = tst
	return tst, nil
}

// exec runs query with args in the batch's transaction.
func (b *batch) exec(query string, args ...any) (sql.Result, error) {
	st, err := b.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.Exec(args...)
}

// queryRow runs query with args in the batch's transaction.
func (b *batch) queryRow(query string, args ...any) (*sql.Row, error) {
	st, err := b.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryRow(args...), nil
}

// touch records that the event with seq, appended to session at updated
// (Unix nanoseconds) by the write being applied, must advance the session.
func (b *batch) touch(session string, seq, updated int64) {
	for i := range b.touches {
		if t := &b.touches[i]; t.session == session {
			t.seq, t.updated, t.op = max(t.seq, seq), updated, b.cur
			return
		}
	}
	b.touches = append(b.touches, touch{session: session, seq: seq, updated: updated, op: b.cur})
}

// hotWrites are the queued writes' statements, prepared once at Open.
var hotWrites = []string{qInsertEvent, qTouch, qInsertMessage, qInsertSummary, qSetTokens, qUpdateSession}

const qTouch = `UPDATE sessions SET last_seq = max(last_seq, ?), updated = ? WHERE id = ?`

// flushTouches applies the pending touches. In safe mode, a failing one
// is undone and its error given to the last append that touched the session.
func (b *batch) flushTouches(ops []op, safe bool) error {
	for _, t := range b.touches {
		apply := func() error {
			_, err := b.exec(qTouch, t.seq, t.updated, t.session)
			return err
		}
		if !safe {
			if err := apply(); err != nil {
				return &opFailed{err}
			}
			continue
		}
		operr, err := b.savepoint(apply)
		if err != nil {
			return err
		}
		if operr != nil && ops[t.op].err == nil {
			ops[t.op].err = operr
		}
	}
	b.touches = b.touches[:0]
	return nil
}

// savepoint runs f in a savepoint: if f fails, what it did is undone and its
// error returned as operr. err is an error of the savepoint itself, which
// ends the attempt.
func (b *batch) savepoint(f func() error) (operr, err error) {
	if _, err := b.tx.Exec("SAVEPOINT w"); err != nil {
		return nil, err
	}
	if operr = f(); operr != nil {
		if _, err := b.tx.Exec("ROLLBACK TO w"); err != nil {
			return operr, err
		}
	}
	_, err = b.tx.Exec("RELEASE w")
	return operr, err
}
