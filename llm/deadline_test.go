package llm_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

// forever is a server wait that only the client leaving ends: a test that
// returns at all shows that a deadline ended it (testCtx gives up after 10 s,
// and then the error is the context's, which every test here rejects).
const forever = llmtest.Duration(5 * time.Minute)

// deadlineCase is one end-to-end deadline scenario.
type deadlineCase struct {
	name    string
	replies []llmtest.Reply
	opts    func(*llm.Options) // on top of the test's deadlines
	want    llm.Result         // Usage ignored
	wantErr string             // exact error text; "" = success
	is      []error            // the error must match each
	isNot   []error            // and none of these
	wantN   int                // requests the server got
	atLeast time.Duration      // lower bound on the elapsed time
}

func runDeadlineCase(t *testing.T, tt deadlineCase, base func(*llm.Options)) {
	t.Helper()
	srv := llmtest.NewServer(t, tt.replies...)
	c := newClient(t, srv, base, func(o *llm.Options) {
		if tt.opts != nil {
			tt.opts(o)
		}
	})
	start := time.Now()
	res, err := c.Stream(testCtx(t), hello, nil)
	elapsed := time.Since(start)
	if tt.wantErr == "" {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
	} else if err == nil || err.Error() != tt.wantErr {
		t.Fatalf("err = %v, want %q", err, tt.wantErr)
	}
	for _, target := range tt.is {
		if !errors.Is(err, target) {
			t.Errorf("err = %v, want it to match %q", err, target)
		}
	}
	for _, target := range append(tt.isNot, context.Canceled, context.DeadlineExceeded) {
		if errors.Is(err, target) {
			t.Errorf("err = %v, want it not to match %q", err, target)
		}
	}
	if diff := cmp.Diff(tt.want, res, cmpopts.IgnoreFields(llm.Result{}, "Usage")); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	if elapsed < tt.atLeast {
		t.Errorf("took %v, want at least %v", elapsed, tt.atLeast)
	}
	if n := len(srv.Requests()); n != tt.wantN {
		t.Errorf("server got %d requests, want %d", n, tt.wantN)
	}
}

// TestStreamHeaderTimeout: a server that never sends the response headers
// ends the attempt after HeaderTimeout, which is retried once and no more.
func TestStreamHeaderTimeout(t *testing.T) {
	t.Parallel()
	const header = 150 * time.Millisecond
	base := func(o *llm.Options) {
		o.HeaderTimeout = header
		o.IdleTimeout = 5 * time.Second
		o.TotalTimeout = 8 * time.Second
	}
	tests := []deadlineCase{
		{
			name:    "no headers, then an answer on the retry",
			replies: []llmtest.Reply{{HeaderDelay: forever}, {Content: "ok"}},
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   2,
			atLeast: header,
		},
		{
			name:    "no headers twice: retried only once",
			replies: []llmtest.Reply{{HeaderDelay: forever}, {HeaderDelay: forever}, {Content: "unused"}},
			wantErr: "model request failed after 2 attempts: no response headers from the model within 150ms",
			is:      []error{llm.ErrHeaderTimeout},
			isNot:   []error{llm.ErrIdleTimeout, llm.ErrTotalTimeout, llm.ErrStreamCut},
			wantN:   2,
			atLeast: 2 * header,
		},
		{
			name:    "no headers, no retries",
			replies: []llmtest.Reply{{HeaderDelay: forever}, {Content: "unused"}},
			opts:    func(o *llm.Options) { o.MaxRetries = -1 },
			wantErr: "no response headers from the model within 150ms",
			is:      []error{llm.ErrHeaderTimeout},
			wantN:   1,
			atLeast: header,
		},
		{
			name: "a slow first chunk after prompt headers is idle time, not header time",
			replies: []llmtest.Reply{{Content: "ok", HeaderDelay: llmtest.Duration(20 * time.Millisecond),
				FirstDelay: llmtest.Duration(3 * header)}},
			opts:    func(o *llm.Options) { o.HeaderTimeout = 2 * header; o.MaxRetries = -1 },
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   1,
			atLeast: 3 * header,
		},
		{
			name:    "negative HeaderTimeout means no limit",
			replies: []llmtest.Reply{{Content: "ok", HeaderDelay: llmtest.Duration(3 * header)}},
			opts:    func(o *llm.Options) { o.HeaderTimeout = -1; o.MaxRetries = -1 },
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   1,
			atLeast: 3 * header,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDeadlineCase(t, tt, base)
		})
	}
}

// TestStreamIdleIgnoresKeepalive: bytes that complete no chunk (whitespace,
// blank lines, SSE comments) do not hold an attempt open; only chunks do.
func TestStreamIdleIgnoresKeepalive(t *testing.T) {
	t.Parallel()
	const idle = 150 * time.Millisecond
	base := func(o *llm.Options) {
		o.HeaderTimeout = 5 * time.Second
		o.IdleTimeout = idle
		o.TotalTimeout = 8 * time.Second
	}
	stalled := "model stream stalled before the first chunk: no data from the model for 150ms"
	tests := []deadlineCase{
		{
			name:    "spaces before the first chunk",
			replies: []llmtest.Reply{{FirstDelay: forever, Trickle: " "}, {Content: "unused"}},
			opts:    func(o *llm.Options) { o.MaxRetries = -1 },
			wantErr: stalled,
			is:      []error{llm.ErrIdleTimeout},
			isNot:   []error{llm.ErrStreamCut, llm.ErrHeaderTimeout, llm.ErrTotalTimeout},
			wantN:   1,
			atLeast: idle,
		},
		{
			name:    "blank lines before the first chunk",
			replies: []llmtest.Reply{{FirstDelay: forever, Trickle: "\n"}, {Content: "unused"}},
			opts:    func(o *llm.Options) { o.MaxRetries = -1 },
			wantErr: stalled,
			is:      []error{llm.ErrIdleTimeout},
			wantN:   1,
			atLeast: idle,
		},
		{
			name:    "SSE comments before the first chunk",
			replies: []llmtest.Reply{{FirstDelay: forever, Trickle: ": keep-alive\n\n"}, {Content: "unused"}},
			opts:    func(o *llm.Options) { o.MaxRetries = -1 },
			wantErr: stalled,
			is:      []error{llm.ErrIdleTimeout},
			wantN:   1,
			atLeast: idle,
		},
		{
			name:    "keep-alive before the first chunk, then an answer on the retry",
			replies: []llmtest.Reply{{FirstDelay: forever, Trickle: ": ping\n\n"}, {Content: "ok"}},
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   2,
			atLeast: idle,
		},
		{
			name: "keep-alive before the first chunk twice: retried only once",
			replies: []llmtest.Reply{
				{FirstDelay: forever, Trickle: ": ping\n\n"},
				{FirstDelay: forever, Trickle: " "},
				{Content: "unused"},
			},
			wantErr: "model request failed after 2 attempts: " + stalled,
			is:      []error{llm.ErrIdleTimeout},
			wantN:   2,
			atLeast: 2 * idle,
		},
		{
			name:    "SSE comments mid-answer cut the stream",
			replies: []llmtest.Reply{{Content: "abcdefgh", ChunkSize: 4, StallAfter: 1, Trickle: ": ping\n\n"}, {Content: "unused"}},
			want:    llm.Result{Content: "abcd"},
			wantErr: "model stream ended unexpectedly after 2 chunks: no data from the model for 150ms",
			is:      []error{llm.ErrIdleTimeout, llm.ErrStreamCut},
			wantN:   1,
			atLeast: idle,
		},
		{
			name:    "spaces mid-answer cut the stream",
			replies: []llmtest.Reply{{Reasoning: "hmm", Content: "abcdefgh", ChunkSize: 4, StallAfter: 1, Trickle: " "}, {Content: "unused"}},
			want:    llm.Result{Reasoning: "hmm", Content: "abcd"},
			wantErr: "model stream ended unexpectedly after 3 chunks: no data from the model for 150ms",
			is:      []error{llm.ErrIdleTimeout, llm.ErrStreamCut},
			wantN:   1,
			atLeast: idle,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDeadlineCase(t, tt, base)
		})
	}
}

// TestStreamIdleErrorBodyTrickled: the body of an error answer must come
// whole within IdleTimeout; a body trickled a byte at a time does not hold
// the attempt open, and the status is still reported (and retried).
func TestStreamIdleErrorBodyTrickled(t *testing.T) {
	t.Parallel()
	const idle = 150 * time.Millisecond
	srv := llmtest.NewServer(t,
		llmtest.Reply{Status: 503, Message: "busy", FirstDelay: forever, Trickle: " "},
		llmtest.Reply{Content: "ok"},
	)
	c := newClient(t, srv, func(o *llm.Options) { o.IdleTimeout = idle })
	start := time.Now()
	res, err := c.Stream(testCtx(t), hello, nil)
	if err != nil || res.Content != "ok" {
		t.Fatalf("Stream = %q, %v; want ok on the retry", res.Content, err)
	}
	if elapsed := time.Since(start); elapsed < idle {
		t.Errorf("took %v, want at least %v", elapsed, idle)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].ClientClosed || reqs[0].Trickled == 0 {
		t.Errorf("requests %+v, want 2, the first abandoned while trickling", reqs)
	}
}

// TestStreamSlowChunksAreProgress: a model that sends real chunks slowly is
// never cut by the idle limit, however long the whole answer takes, and
// reasoning-only chunks count as much as answer chunks; keep-alive bytes
// between the chunks change nothing.
func TestStreamSlowChunksAreProgress(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	// 15 chunks 40 ms apart: 600 ms in all, longer than idle; each gap a
	// tenth of it.
	slow := llmtest.Duration(40 * time.Millisecond)
	text := "abcdefghijklmno"
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  llm.Result
	}{
		{
			name:  "reasoning-only chunks",
			reply: llmtest.Reply{Reasoning: text, ChunkSize: 1, Delay: slow},
			want:  llm.Result{Reasoning: text, FinishReason: "stop"},
		},
		{
			name:  "reasoning field chunks, then the answer",
			reply: llmtest.Reply{Reasoning: text, ReasoningField: "reasoning", Content: "ok", ChunkSize: 1, Delay: slow},
			want:  llm.Result{Reasoning: text, Content: "ok", FinishReason: "stop"},
		},
		{
			name:  "answer chunks with SSE comments between",
			reply: llmtest.Reply{Content: text, ChunkSize: 1, Delay: slow, Trickle: ": ping\n\n"},
			want:  llm.Result{Content: text, FinishReason: "stop"},
		},
		{
			name:  "answer chunks with blank lines between",
			reply: llmtest.Reply{Content: text, ChunkSize: 1, Delay: slow, Trickle: "\n"},
			want:  llm.Result{Content: text, FinishReason: "stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDeadlineCase(t, deadlineCase{
				replies: []llmtest.Reply{tt.reply},
				want:    tt.want,
				wantN:   1,
				atLeast: idle,
			}, func(o *llm.Options) {
				o.IdleTimeout = idle
				o.MaxRetries = -1 // a cut would show as an error, not as a quiet retry
			})
		})
	}
}

// TestStreamTotalTimeout: TotalTimeout bounds the whole call, retries and
// their waits included, even when every single wait is within its own limit.
func TestStreamTotalTimeout(t *testing.T) {
	t.Parallel()
	const total = 400 * time.Millisecond
	base := func(o *llm.Options) {
		o.HeaderTimeout = 5 * time.Second
		o.IdleTimeout = 5 * time.Second
		o.TotalTimeout = total
	}
	tests := []deadlineCase{
		{
			name:    "no headers: the total ends the wait",
			replies: []llmtest.Reply{{HeaderDelay: forever}, {Content: "unused"}},
			wantErr: "model call exceeded its total time limit of 400ms",
			is:      []error{llm.ErrTotalTimeout},
			isNot:   []error{llm.ErrHeaderTimeout, llm.ErrIdleTimeout, llm.ErrStreamCut},
			wantN:   1,
			atLeast: total,
		},
		{
			name:    "keep-alive before the first chunk: the total ends the wait",
			replies: []llmtest.Reply{{FirstDelay: forever, Trickle: ": ping\n\n"}, {Content: "unused"}},
			wantErr: "model call exceeded its total time limit of 400ms",
			is:      []error{llm.ErrTotalTimeout},
			isNot:   []error{llm.ErrIdleTimeout, llm.ErrStreamCut},
			wantN:   1,
			atLeast: total,
		},
		{
			name:    "negative TotalTimeout means no limit",
			replies: []llmtest.Reply{{Content: "abc", ChunkSize: 1, Delay: llmtest.Duration(total / 2)}},
			opts:    func(o *llm.Options) { o.TotalTimeout = -1 },
			want:    llm.Result{Content: "abc", FinishReason: "stop"},
			wantN:   1,
			atLeast: total,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runDeadlineCase(t, tt, base)
		})
	}

	// Chunks come every 20 ms, far inside the idle limit, for 4 s: the total
	// cuts the stream and the partial answer is kept.
	t.Run("chunks dripping past the limit", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t,
			llmtest.Reply{Content: strings.Repeat("x", 200), ChunkSize: 1, Delay: llmtest.Duration(20 * time.Millisecond)},
			llmtest.Reply{Content: "unused"})
		c := newClient(t, srv, base)
		start := time.Now()
		res, err := c.Stream(testCtx(t), hello, nil)
		if elapsed := time.Since(start); elapsed < total {
			t.Errorf("took %v, want at least %v", elapsed, total)
		}
		if !errors.Is(err, llm.ErrTotalTimeout) || !errors.Is(err, llm.ErrStreamCut) || errors.Is(err, llm.ErrIdleTimeout) {
			t.Fatalf("err = %v, want ErrTotalTimeout and ErrStreamCut", err)
		}
		if !strings.HasPrefix(err.Error(), "model stream ended unexpectedly after ") ||
			!strings.HasSuffix(err.Error(), " chunks: model call exceeded its total time limit of 400ms") {
			t.Errorf("err = %q, want the cut and the total limit named", err)
		}
		if res.Content == "" || len(res.Content) >= 200 || strings.Trim(res.Content, "x") != "" {
			t.Errorf("partial Content = %q, want some of the x's", res.Content)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || !reqs[0].ClientClosed {
			t.Errorf("requests %+v, want 1, abandoned", reqs)
		}
	})

	// Each 503 asks for a 200 ms wait: the retries and their waits together
	// pass the total of 600 ms, though no one step does.
	t.Run("retries and their waits count", func(t *testing.T) {
		t.Parallel()
		const total = 600 * time.Millisecond
		busy := llmtest.Reply{Status: 503, Message: "busy", RetryAfter: "0.2"}
		srv := llmtest.NewServer(t, busy, busy, busy, busy, busy, busy, busy, busy, busy, busy)
		c := newClient(t, srv, base, func(o *llm.Options) {
			o.TotalTimeout = total
			o.MaxRetries = 9
			o.MaxRetryDelay = time.Second
		})
		start := time.Now()
		_, err := c.Stream(testCtx(t), hello, nil)
		if elapsed := time.Since(start); elapsed < total {
			t.Errorf("took %v, want at least %v", elapsed, total)
		}
		if !errors.Is(err, llm.ErrTotalTimeout) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTotalTimeout", err)
		}
		if !strings.Contains(err.Error(), "model call exceeded its total time limit of 600ms") {
			t.Errorf("err = %q, want the total limit named", err)
		}
		if n := len(srv.Requests()); n < 2 || n > 4 {
			t.Errorf("server got %d requests, want 2 to 4 (retries until the total)", n)
		}
	})
}

// TestStreamCallerDeadlineBeatsTotal: when the caller's own context ends
// first, that is what the error says, not one of the client's deadlines.
func TestStreamCallerDeadlineBeatsTotal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{HeaderDelay: forever})
	c := newClient(t, srv, func(o *llm.Options) {
		o.HeaderTimeout = 5 * time.Second
		o.TotalTimeout = 5 * time.Second
	})
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	_, err := c.Stream(ctx, hello, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, llm.ErrTotalTimeout) || errors.Is(err, llm.ErrHeaderTimeout) {
		t.Fatalf("err = %v, want the caller's deadline only", err)
	}
}

// TestStreamDeadlineLogged: the debug log says which deadline ended an
// attempt, and never carries the key.
func TestStreamDeadlineLogged(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	srv := llmtest.NewServer(t, llmtest.Reply{HeaderDelay: forever}, llmtest.Reply{FirstDelay: forever, Trickle: " "})
	c := newClient(t, srv, func(o *llm.Options) {
		o.HeaderTimeout = 100 * time.Millisecond
		o.IdleTimeout = 100 * time.Millisecond
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	if _, err := c.Stream(testCtx(t), hello, nil); !errors.Is(err, llm.ErrIdleTimeout) {
		t.Fatalf("err = %v, want the second attempt's idle timeout", err)
	}
	out := logs.String()
	for _, want := range []string{
		`deadline="no response headers from the model within 100ms"`,
		`deadline="no data from the model for 100ms"`,
		"timed_out=true",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, testKey) || strings.Contains(out, "sk-test") {
		t.Errorf("log leaks the key:\n%s", out)
	}
}
