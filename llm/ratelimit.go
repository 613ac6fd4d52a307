package llm

import (
	"context"
	"sync"
	"time"
)

// RateLimit bounds one model's use per minute; zero fields mean no limit.
//
// The minute is a sliding window: a request is admitted when it keeps the
// last 60 seconds within every limit, otherwise [Client.Stream] waits until
// enough of the window has expired. Every attempt counts (a retry sends the
// prompt again). Input tokens are the prompt's, estimated with [CountTokens]
// before the request; output tokens are recorded when the call ends, from
// [Usage.CompletionTokens] or, when the server sent no usage, by counting the
// text received. As the size of a response is unknown in advance, the output
// limit admits a request while the window still has room for at least one
// token.
//
// A single request larger than a whole limit (a prompt of more input tokens
// than InputTokens) can never fit: it is admitted once that limit's window is
// empty, so it waits at most a minute instead of forever.
type RateLimit struct {
	Requests     int // requests per minute
	InputTokens  int // prompt tokens per minute
	OutputTokens int // completion tokens per minute
}

// on reports whether any limit is set.
func (l RateLimit) on() bool {
	return l.Requests > 0 || l.InputTokens > 0 || l.OutputTokens > 0
}

// rateWindow is how long usage counts against a [RateLimit].
const rateWindow = time.Minute

// usageEvent is usage recorded at one instant: a request admitted with its
// input tokens, or the output tokens of a finished call.
type usageEvent struct {
	at       time.Time
	requests int
	input    int
	output   int
}

// window is the usage of one model endpoint over the last [rateWindow].
type window struct {
	mu     sync.Mutex
	events []usageEvent // in order of at
}

// windows holds one window per BaseURL and model, so every Client of the
// process built for the same endpoint and model draws from one budget. A
// package-level registry is acceptable here, unlike most global state,
// because what it models is global: the limit is the provider's, enforced
// per account and model whatever Client object the requests came from, and
// two clients counting separately would together overrun it. Windows are
// never removed; a process talks to a handful of models, and an idle window
// holds no events after its next use.
var windows = struct {
	sync.Mutex
	m map[string]*window
}{m: map[string]*window{}}

// windowFor returns the shared window for the endpoint and model.
func windowFor(baseURL, model string) *window {
	key := baseURL + "\x00" + model // NUL cannot occur in either, so keys never collide
	windows.Lock()
	defer windows.Unlock()
	w := windows.m[key]
	if w == nil {
		w = &window{}
		windows.m[key] = w
	}
	return w
}

// pruneLocked drops events that have left the window at now.
func (w *window) pruneLocked(now time.Time) {
	i := 0
	for i < len(w.events) && !now.Before(w.events[i].at.Add(rateWindow)) {
		i++
	}
	if i > 0 {
		w.events = append(w.events[:0], w.events[i:]...)
	}
}

// addLocked appends e, keeping events in time order: delayLocked relies on
// it. time.Now's monotonic reading never steps back, but an injected clock
// shared by clients might, so an early event is filed as of the last one.
func (w *window) addLocked(e usageEvent) {
	if n := len(w.events); n > 0 && e.at.Before(w.events[n-1].at) {
		e.at = w.events[n-1].at
	}
	w.events = append(w.events, e)
}

// delayLocked returns how long from now until a request with input prompt
// tokens fits lim, 0 if it fits at once. It assumes pruneLocked(now) ran.
func (w *window) delayLocked(now time.Time, lim RateLimit, input int) time.Duration {
	dims := [...]struct {
		limit, need int
		of          func(usageEvent) int
	}{
		{lim.Requests, 1, func(e usageEvent) int { return e.requests }},
		{lim.InputTokens, input, func(e usageEvent) int { return e.input }},
		// The response size is unknown: ask for room for one token.
		{lim.OutputTokens, 1, func(e usageEvent) int { return e.output }},
	}
	var wait time.Duration
	for _, d := range dims {
		if d.limit <= 0 {
			continue
		}
		// An empty window admits anything, so an oversized request waits
		// for the window to drain rather than forever.
		fits := func(used int) bool { return used == 0 || used+d.need <= d.limit }
		used := 0
		for _, e := range w.events {
			used += d.of(e)
		}
		if fits(used) {
			continue
		}
		// Events leave the window oldest first: find the one whose expiry
		// makes room.
		for _, e := range w.events {
			used -= d.of(e)
			if fits(used) {
				wait = max(wait, e.at.Add(rateWindow).Sub(now))
				break
			}
		}
	}
	return wait
}

// rateGate is one Client's use of a shared window, with its own limits:
// clients sharing a window may be configured differently, and each enforces
// its limits against the usage of all of them.
type rateGate struct {
	w      *window
	limit  RateLimit
	onWait func(time.Duration) // Options.OnRateLimit; may be nil
	// now and sleep are the clock, replaced in tests.
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func newRateGate(baseURL, model string, limit RateLimit, onWait func(time.Duration)) *rateGate {
	return &rateGate{
		w:      windowFor(baseURL, model),
		limit:  limit,
		onWait: onWait,
		now:    time.Now,
		sleep:  sleep,
	}
}

// acquire waits until a request with input prompt tokens fits the limits,
// then records it. It returns ctx's error as soon as ctx is done. The wait
// is computed exactly (when the blocking events expire) rather than polled;
// after it the check runs again, because a concurrent caller may have taken
// the room meanwhile.
func (g *rateGate) acquire(ctx context.Context, input int) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.w.mu.Lock()
		now := g.now()
		g.w.pruneLocked(now)
		d := g.w.delayLocked(now, g.limit, input)
		if d <= 0 {
			g.w.addLocked(usageEvent{at: now, requests: 1, input: input})
			g.w.mu.Unlock()
			return nil
		}
		g.w.mu.Unlock()
		if g.onWait != nil {
			g.onWait(d)
		}
		if err := g.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// recordOutput adds the output tokens of a finished call.
func (g *rateGate) recordOutput(tokens int) {
	if tokens <= 0 {
		return
	}
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	now := g.now()
	g.w.pruneLocked(now)
	g.w.addLocked(usageEvent{at: now, output: tokens})
}
