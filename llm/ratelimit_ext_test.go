package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

// TestRateLimitRealServer runs the limiter against the loopback server with
// real sockets (the synctest tests use an in-memory transport). Two clients
// built with equal options share the window; the second one's wait is cut
// short from OnRateLimit, so nothing waits in real time.
func TestRateLimitRealServer(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "one"}, llmtest.Reply{Content: "two"})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var waited []time.Duration
	limited := func(o *llm.Options) {
		o.Model = "rate-limit-real-server" // a window no other test uses
		o.RateLimit = llm.RateLimit{Requests: 1, InputTokens: 1000, OutputTokens: 1000}
		o.OnRateLimit = func(d time.Duration) {
			waited = append(waited, d)
			cancel()
		}
	}
	first, second := newClient(t, srv, limited), newClient(t, srv, limited)
	res, err := first.Stream(ctx, hello, nil)
	if err != nil || res.Content != "one" {
		t.Fatalf("first Stream = %q, %v; want \"one\", nil", res.Content, err)
	}
	start := time.Now()
	_, err = second.Stream(ctx, hello, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("second Stream err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 30*time.Second { // the wait is just under a minute
		t.Errorf("canceled wait took %v", took)
	}
	if len(waited) != 1 || waited[0] <= 55*time.Second || waited[0] > time.Minute {
		t.Errorf("OnRateLimit got %v, want one wait of just under a minute", waited)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}
