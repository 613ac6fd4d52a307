package server

import (
	"context"
	"fmt"

	"github.com/zeroagent/zero/loop"
)

// A Follower hands out a session's events in order, from a cursor on, as
// they come: the one way the faces deliver events. It keeps no queue of its
// own: the session's log is the buffer, bounded, so the run never waits on
// a face however slow its client, and a face cannot make Zero's memory
// grow. A face that falls further behind than the log keeps is told how
// many events it missed.
//
// A Follower is owned by one goroutine.
type Follower struct {
	s      *Session
	cursor int64
}

// Batch is what a follower hands out at once.
type Batch struct {
	// Events are the events after the previous cursor, oldest first, with
	// consecutive deltas of one stream joined (see Coalesce).
	Events []Event
	// Missed counts the events the log dropped before this follower read
	// them.
	Missed int64
	// Closed: the session was closed and every event was handed out.
	Closed bool
}

// Follow returns a follower of s's events with Seq > since: 0 replays the
// whole log, s.Cursor() starts with what comes next.
func (s *Session) Follow(since int64) *Follower {
	return &Follower{s: s, cursor: since}
}

// Cursor is the Seq of the newest event handed out.
func (f *Follower) Cursor() int64 { return f.cursor }

// Ready returns a channel that is closed once Take has something to hand
// out: events, or the news that the session was closed. Call it again
// after each Take.
func (f *Follower) Ready() <-chan struct{} {
	s := f.s
	s.notifyMu.Lock()
	ch := s.notify
	s.notifyMu.Unlock()
	// The channel is read before the log: an event appended after the
	// check closes it.
	if _, last := s.log.Since(maxSeq); last > f.cursor {
		return closedCh
	}
	select {
	case <-s.done:
		return closedCh
	default:
		return ch
	}
}

// maxSeq asks a Log only for its cursor.
const maxSeq = int64(^uint64(0) >> 1)

var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Take hands out what came after the cursor without waiting, and moves the
// cursor past it.
func (f *Follower) Take() Batch {
	s := f.s
	closed := false
	select {
	case <-s.done:
		closed = true // read before the log, so no event is left behind
	default:
	}
	evs, last := s.log.Since(f.cursor)
	var b Batch
	if len(evs) > 0 {
		b.Missed = evs[0].Seq - f.cursor - 1
	} else if last > f.cursor {
		b.Missed = last - f.cursor
	}
	f.cursor = max(f.cursor, last)
	b.Events = Coalesce(evs)
	b.Closed = closed
	return b
}

// Next waits until Take has something and returns it. It fails with ctx's
// error when ctx ends first, and with ErrClosed once the session is closed
// and everything was handed out.
func (f *Follower) Next(ctx context.Context) (Batch, error) {
	for {
		select {
		case <-f.Ready():
		case <-ctx.Done():
			return Batch{}, ctx.Err()
		}
		b := f.Take()
		if len(b.Events) > 0 || b.Missed > 0 {
			b.Closed = false // said by the next call, after these events
			return b, nil
		}
		if b.Closed {
			return b, fmt.Errorf("session %s: %w", f.s.spec.ID, ErrClosed)
		}
	}
}

// Coalesce joins each run of consecutive deltas of one stream (the same
// type, agent and item) into one event carrying their text and the Seq of
// the last; everything else passes as it is. A face that falls behind then
// sends one chunk of a thought or of a command's output instead of many,
// and one that keeps up still streams. It reuses evs' array.
func Coalesce(evs []Event) []Event {
	out := evs[:0]
	for _, e := range evs {
		if n := len(out); n > 0 && isDelta(e.Type) {
			last := &out[n-1]
			if last.Type == e.Type && last.Agent == e.Agent && last.Item == e.Item {
				last.Text += e.Text
				last.Seq = e.Seq
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// isDelta reports whether events of type t are pieces of one stream.
func isDelta(t loop.EventType) bool {
	switch t {
	case loop.EventReasoningDelta, loop.EventThoughtsDelta, loop.EventResponseDelta, loop.EventToolOutputDelta:
		return true
	}
	return false
}

// Interleave puts a face's own items (a message, a marker a request left)
// among a batch of events, in order: an item placed after the event with
// Seq after(it) goes out before the first event with a greater Seq. Items
// must come in the order they were placed. An item placed past cursor (the
// follower's, after the batch) was placed after events not yet taken:
// those items are returned, to go with the next batch.
func Interleave[T any](events []Event, items []T, after func(T) int64, cursor int64, event func(Event), item func(T)) (rest []T) {
	for _, e := range events {
		for len(items) > 0 && after(items[0]) < e.Seq {
			item(items[0])
			items = items[1:]
		}
		event(e)
	}
	for len(items) > 0 && after(items[0]) <= cursor {
		item(items[0])
		items = items[1:]
	}
	return items
}
