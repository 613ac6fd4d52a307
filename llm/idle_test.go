package llm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

// TestNewDeadlines checks how New resolves the three deadline options:
// 0 is the default, negative is no limit (0 inside the Client).
func TestNewDeadlines(t *testing.T) {
	t.Parallel()
	get := map[string]func(Options) time.Duration{
		"HeaderTimeout": func(o Options) time.Duration { return o.HeaderTimeout },
		"IdleTimeout":   func(o Options) time.Duration { return o.IdleTimeout },
		"TotalTimeout":  func(o Options) time.Duration { return o.TotalTimeout },
	}
	set := map[string]func(*Options, time.Duration){
		"HeaderTimeout": func(o *Options, d time.Duration) { o.HeaderTimeout = d },
		"IdleTimeout":   func(o *Options, d time.Duration) { o.IdleTimeout = d },
		"TotalTimeout":  func(o *Options, d time.Duration) { o.TotalTimeout = d },
	}
	defaults := map[string]time.Duration{
		"HeaderTimeout": DefaultHeaderTimeout,
		"IdleTimeout":   DefaultIdleTimeout,
		"TotalTimeout":  DefaultTotalTimeout,
	}
	for field, def := range defaults {
		tests := []struct {
			name string
			in   time.Duration
			want time.Duration // 0 = no limit
		}{
			{"zero is the default", 0, def},
			{"negative is no limit", -1, 0},
			{"positive kept", 5 * time.Second, 5 * time.Second},
		}
		for _, tt := range tests {
			t.Run(field+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				opts := Options{Model: "m"}
				set[field](&opts, tt.in)
				c, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := get[field](c.opts); got != tt.want {
					t.Errorf("%s %v became %v, want %v", field, tt.in, got, tt.want)
				}
			})
		}
	}
	if DefaultHeaderTimeout <= 0 || DefaultIdleTimeout <= 0 || DefaultTotalTimeout < max(DefaultHeaderTimeout, DefaultIdleTimeout) {
		t.Errorf("defaults header %v, idle %v, total %v: want all set and the total not below the others",
			DefaultHeaderTimeout, DefaultIdleTimeout, DefaultTotalTimeout)
	}
}

// TestDeadlineErrorText checks that each deadline error names the deadline
// and its length, and matches its sentinel only.
func TestDeadlineErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind error
		want string
	}{
		{ErrHeaderTimeout, "no response headers from the model within 1m30s"},
		{ErrIdleTimeout, "no data from the model for 1m30s"},
		{ErrTotalTimeout, "model call exceeded its total time limit of 1m30s"},
	}
	for _, tt := range tests {
		err := error(&deadlineError{kind: tt.kind, limit: 90 * time.Second})
		if err.Error() != tt.want {
			t.Errorf("Error() = %q, want %q", err, tt.want)
		}
		for _, other := range []error{ErrHeaderTimeout, ErrIdleTimeout, ErrTotalTimeout} {
			if got := errors.Is(err, other); got != (other == tt.kind) {
				t.Errorf("errors.Is(%q, %v) = %v", err, other, got)
			}
		}
	}
}

// endedStream is a chunk stream that has already ended with err.
type endedStream struct{ err error }

func (endedStream) Next() bool                          { return false }
func (endedStream) Current() openai.ChatCompletionChunk { return openai.ChatCompletionChunk{} }
func (s endedStream) Err() error                        { return s.err }
func (endedStream) Close() error                        { return nil }

// TestConsumeCanceledBeatsIdle covers the race the end-to-end tests cannot
// force: a deadline (idle, header or total) fired and the caller canceled,
// both before the attempt looked. The caller's cancel must be what is
// reported.
func TestConsumeCanceledBeatsIdle(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []error{ErrIdleTimeout, ErrHeaderTimeout, ErrTotalTimeout} {
		for _, chunks := range []int{0, 2} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			actx, abort := context.WithCancelCause(context.Background())
			abort(&deadlineError{kind: kind, limit: time.Second})
			a := &attemptState{actx: actx, status: 200, chunks: chunks}
			err := c.consume(ctx, endedStream{err: context.Canceled}, &collector{}, a)
			if !errors.Is(err, context.Canceled) || errors.Is(err, kind) || errors.Is(err, ErrStreamCut) {
				t.Errorf("%v, chunks %d: err = %v, want only context.Canceled", kind, chunks, err)
			}
			if a.retryable || a.timedOut {
				t.Errorf("%v, chunks %d: a canceled attempt was marked retryable or timed out", kind, chunks)
			}
		}
	}
}

// TestConsumeDeadlines checks how consume reports each deadline that ended
// an attempt, and which ones it marks for a retry.
func TestConsumeDeadlines(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kind      error
		status    int
		chunks    int
		want      string
		retryable bool
	}{
		{ErrHeaderTimeout, 0, 0, "no response headers from the model within 1s", true},
		{ErrIdleTimeout, 200, 0, "model stream stalled before the first chunk: no data from the model for 1s", true},
		{ErrIdleTimeout, 200, 3, "model stream ended unexpectedly after 3 chunks: no data from the model for 1s", false},
		{ErrTotalTimeout, 0, 0, "model call exceeded its total time limit of 1s", false},
		{ErrTotalTimeout, 200, 0, "model call exceeded its total time limit of 1s", false},
		{ErrTotalTimeout, 500, 0, "model call exceeded its total time limit of 1s", false},
		{ErrTotalTimeout, 200, 3, "model stream ended unexpectedly after 3 chunks: model call exceeded its total time limit of 1s", false},
	}
	for _, tt := range tests {
		actx, abort := context.WithCancelCause(context.Background())
		abort(&deadlineError{kind: tt.kind, limit: time.Second})
		a := &attemptState{actx: actx, status: tt.status, chunks: tt.chunks}
		err := c.consume(context.Background(), endedStream{err: context.Canceled}, &collector{}, a)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v, status %d, %d chunks: err = %v, want %q", tt.kind, tt.status, tt.chunks, err, tt.want)
			continue
		}
		if !errors.Is(err, tt.kind) || errors.Is(err, context.Canceled) {
			t.Errorf("err = %v: want it to match %v and not context.Canceled", err, tt.kind)
		}
		if got := errors.Is(err, ErrStreamCut); got != (tt.chunks > 0) {
			t.Errorf("err = %v: errors.Is(ErrStreamCut) = %v, want %v", err, got, tt.chunks > 0)
		}
		if a.retryable != tt.retryable || a.timedOut != tt.retryable {
			t.Errorf("err = %v: retryable %v, timedOut %v; want both %v", err, a.retryable, a.timedOut, tt.retryable)
		}
	}
}
