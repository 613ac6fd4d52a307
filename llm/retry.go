package llm

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// serverDelay reads how long the server asked us to wait: retry-after-ms
// (OpenAI's millisecond form) wins over Retry-After, which may be seconds or
// an HTTP date. A date in the past means "now".
func serverDelay(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return durationOf(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsNaN(s) {
			return 0, false
		}
		return durationOf(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// durationOf converts nanoseconds held in a float, saturating instead of
// overflowing for absurd header values.
func durationOf(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// retryDelay is the wait before retry number attempt+1. A server-given delay
// is honoured exactly (it is the server's schedule, so no jitter), but never
// beyond maxDelay. Otherwise base·2^attempt, capped at maxDelay, with "equal
// jitter": half fixed, half random, so concurrent clients spread out but
// never retry at once. jitter(n) returns a value in [0, n).
func retryDelay(attempt int, base, maxDelay time.Duration, h http.Header, now time.Time, jitter func(int64) int64) time.Duration {
	if d, ok := serverDelay(h, now); ok {
		return min(d, maxDelay)
	}
	d := maxDelay
	if attempt < 62 {
		if exp := float64(base) * math.Pow(2, float64(attempt)); exp < float64(maxDelay) {
			d = time.Duration(exp)
		}
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return d - half + time.Duration(jitter(int64(half)+1))
}

// sleep waits for d or until ctx is done, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reachTransport tells a model server that is not there from a transient
// failure. Backing off for seconds is right for a server that is
// overloaded or dropped a connection, but a refused connection means
// nothing listens (the server is not running, or the port is wrong), and a
// name that does not resolve will not resolve a second later either. So
// such a failure becomes an [*UnreachableError]: a refused connection
// keeps its network error for one retry (the server may be starting), and
// when the next attempt is refused too, the error comes without it, which
// Stream does not retry. The state is the Client's, not one call's: while
// the server stays away, later calls get one attempt each, and the first
// answer of any kind clears it. It lasts downFor: a server that was away
// a while ago and is starting now gets its retry again.
type reachTransport struct {
	base http.RoundTripper
	down atomic.Int64 // Unix nanoseconds of the last attempt that found nothing there; 0: none
}

// downFor is how long a server found away is taken to be away still.
const downFor = 15 * time.Second

func (t *reachTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		t.down.Store(0)
		return resp, nil
	}
	ue := unreachable(err, r.URL.Host)
	if ue == nil {
		return resp, err
	}
	now := time.Now().UnixNano()
	last := t.down.Swap(now)
	if wasDown := last != 0 && now-last < int64(downFor); !wasDown && ue.Reason == "connection refused" {
		ue.cause = err // worth one more try
	}
	return nil, ue
}

// CloseIdleConnections passes the call on, so http.Client's works.
func (t *reachTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// unreachable classifies a transport error: an [*UnreachableError] (without
// cause) when it means the server is not there, else nil. host is the
// request's, used when the error does not name the address dialled (with a
// proxy, the proxy's address is the one that failed, and is named).
func unreachable(err error, host string) *UnreachableError {
	if d, ok := errors.AsType[*net.DNSError](err); ok {
		if !d.IsNotFound {
			return nil // a resolver that timed out or failed may answer next time
		}
		return &UnreachableError{Host: d.Name, Reason: "no such host", Hint: "is the host name right?"}
	}
	op, ok := errors.AsType[*net.OpError](err)
	if !ok || op.Op != "dial" {
		return nil
	}
	if op.Addr != nil {
		host = op.Addr.String()
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &UnreachableError{Host: host, Reason: "connection refused", Hint: "is the server running, and on that port?"}
	case errors.Is(err, syscall.EHOSTUNREACH):
		return &UnreachableError{Host: host, Reason: "no route to host", Hint: "is the address right, and the network up?"}
	case errors.Is(err, syscall.ENETUNREACH):
		return &UnreachableError{Host: host, Reason: "network is unreachable", Hint: "is the network up?"}
	}
	return nil
}
