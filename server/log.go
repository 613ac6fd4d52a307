package server

import "sync"

// DefaultLogLimit is how many events a memory log keeps per session.
const DefaultLogLimit = 10_000

// Log is the event log of one session: the cursor a face replays from or
// hands out as "events since N". Sessions live in memory for now; a store
// implements Log to keep them across restarts. A Log must be safe for
// concurrent use.
type Log interface {
	// Append stores e with Seq set to one more than the last stored event's
	// and returns it as stored.
	Append(e Event) Event
	// Since returns the events still stored whose Seq is greater than since,
	// oldest first, and the Seq of the newest event ever appended (0 when
	// none): the cursor to pass next time.
	Since(since int64) ([]Event, int64)
}

// memLog is a bounded in-memory Log: once full, the oldest events are
// dropped, whatever their type. Dropping deltas first would keep more of a
// long session's shape, but it would punch holes in the sequence a face
// replays; a gap only at the start is easy to explain (the first Seq
// returned is above since+1).
type memLog struct {
	mu    sync.Mutex
	buf   []Event // ring, len == limit once full
	start int     // index of the oldest event in buf
	last  int64   // Seq of the newest event
	limit int
}

// NewMemLog returns an in-memory Log keeping the last limit events
// (DefaultLogLimit when limit <= 0).
func NewMemLog(limit int) Log {
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	return &memLog{limit: limit}
}

func (l *memLog) Append(e Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	e.Seq = l.last
	if len(l.buf) < l.limit {
		l.buf = append(l.buf, e)
		return e
	}
	l.buf[l.start] = e
	l.start = (l.start + 1) % l.limit
	return e
}

func (l *memLog) Since(since int64) ([]Event, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.buf)
	if n == 0 || since >= l.last {
		return nil, l.last
	}
	first := l.last - int64(n) + 1 // Seq of the oldest kept event
	skip := 0
	if since >= first {
		skip = int(since - first + 1)
	}
	out := make([]Event, 0, n-skip)
	for i := skip; i < n; i++ {
		out = append(out, l.buf[(l.start+i)%n])
	}
	return out, l.last
}
