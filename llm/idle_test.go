package llm

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

func TestNewIdleTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   time.Duration
		want time.Duration // 0 = no limit
	}{
		{"zero is the default", 0, DefaultIdleTimeout},
		{"negative is no limit", -1, 0},
		{"positive kept", 5 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Options{Model: "m", IdleTimeout: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if c.opts.IdleTimeout != tt.want {
				t.Errorf("IdleTimeout %v became %v, want %v", tt.in, c.opts.IdleTimeout, tt.want)
			}
		})
	}
}

// endedStream is a chunk stream that has already ended with err.
type endedStream struct{ err error }

func (endedStream) Next() bool                          { return false }
func (endedStream) Current() openai.ChatCompletionChunk { return openai.ChatCompletionChunk{} }
func (s endedStream) Err() error                        { return s.err }
func (endedStream) Close() error                        { return nil }

// TestConsumeCanceledBeatsIdle covers the race the end-to-end tests cannot
// force: the idle watch fired and the caller canceled, both before the
// attempt looked. The caller's cancel must be what is reported.
func TestConsumeCanceledBeatsIdle(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, chunks := range []int{0, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		a := &attemptState{status: 200, chunks: chunks, idle: &idleWatch{d: time.Second}}
		a.idle.fired.Store(true)
		err := c.consume(ctx, endedStream{err: context.Canceled}, &collector{}, a)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrIdleTimeout) || errors.Is(err, ErrStreamCut) {
			t.Errorf("chunks %d: err = %v, want only context.Canceled", chunks, err)
		}
		if a.retryable {
			t.Errorf("chunks %d: a canceled attempt was marked retryable", chunks)
		}
	}
}
