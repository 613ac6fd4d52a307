package mcpclient

import (
	"context"
	"errors"
	"sync"
	"time"
)

// clock is the time a call's timeout counts; a test sets its own, to
// show the timeout paused without waiting for it.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// errCallTimedOut is the cause of a call's context when its CallTimeout
// ran out (not the run's end).
var errCallTimedOut = errors.New("the call's timeout ran out")

// call is one tool call in flight: its context, which ends with the run,
// when CallTimeout runs out, or when the call returns; and that timeout,
// which stops while the server has a question open for the person (a
// person takes longer to answer than a server to work) and goes on with
// what was left once it is answered.
type call struct {
	ctx context.Context

	mu     sync.Mutex
	clock  clock
	left   time.Duration // of the timeout, when it last started
	since  time.Time     // when it last started
	stop   func() bool   // the running timer's; nil while paused
	paused int           // questions open that pause it
	fire   func()
}

// startCall starts a call's timeout of d under parent; end releases it.
func startCall(parent context.Context, d time.Duration, clk clock) (c *call, end func()) {
	ctx, cancel := context.WithCancelCause(parent)
	c = &call{ctx: ctx, clock: clk, left: d, since: clk.Now()}
	c.fire = func() { cancel(errCallTimedOut) }
	c.mu.Lock()
	c.stop = clk.AfterFunc(d, c.fire)
	c.mu.Unlock()
	return c, func() {
		c.mu.Lock()
		if c.stop != nil {
			c.stop()
			c.stop = nil
		}
		c.paused = -1 << 30 // never started again
		c.mu.Unlock()
		cancel(context.Canceled)
	}
}

// timedOut tells that the call ended because its timeout ran out.
func (c *call) timedOut() bool { return errors.Is(context.Cause(c.ctx), errCallTimedOut) }

// pause stops the timeout (for one more open question).
func (c *call) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused++
	if c.paused != 1 || c.stop == nil {
		return
	}
	if c.stop() {
		c.left -= c.clock.Now().Sub(c.since)
	}
	// else it has fired: the call is ending, and stays so.
	c.stop = nil
}

// resume starts the timeout again, with what was left of it, once no
// question pauses it.
func (c *call) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused--
	if c.paused != 0 || c.stop != nil || c.ctx.Err() != nil {
		return
	}
	c.since = c.clock.Now()
	c.stop = c.clock.AfterFunc(max(c.left, 0), c.fire)
}
