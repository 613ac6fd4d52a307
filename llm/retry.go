package llm

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
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
