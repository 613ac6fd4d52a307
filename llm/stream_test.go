package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

const testKey = "sk-test-9f8e7d6c5b4a3210"

// newClient returns a client for srv with fast retries, so retry tests take
// milliseconds.
func newClient(t *testing.T, srv *llmtest.Server, edit ...func(*llm.Options)) *llm.Client {
	t.Helper()
	opts := llm.Options{
		Model:         "test-model",
		BaseURL:       srv.URL(),
		APIKey:        testKey,
		RetryDelay:    time.Millisecond,
		MaxRetryDelay: 50 * time.Millisecond,
	}
	for _, e := range edit {
		e(&opts)
	}
	c, err := llm.New(opts)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var hello = llm.Request{Messages: []llm.Message{
	{Role: llm.System, Content: "You are a test."},
	{Role: llm.User, Content: "hello"},
}}

// merge joins consecutive deltas of the same kind: how the text was chunked
// is the server's business, the order of kinds is ours.
func merge(ds []llm.Delta) []llm.Delta {
	var out []llm.Delta
	for _, d := range ds {
		if n := len(out); n > 0 && out[n-1].Kind == d.Kind {
			out[n-1].Text += d.Text
			continue
		}
		out = append(out, d)
	}
	return out
}

func collect(ds *[]llm.Delta) llm.StreamFunc {
	return func(d llm.Delta) error {
		if d.Text == "" {
			return errors.New("empty delta delivered")
		}
		*ds = append(*ds, d)
		return nil
	}
}

func TestStreamReasoningSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  []llm.Delta
	}{
		{
			name:  "reasoning_content field",
			reply: llmtest.Reply{Reasoning: "Let me think it over.", Content: "The answer is 4.", ChunkSize: 4},
			want:  []llm.Delta{{Kind: llm.Reasoning, Text: "Let me think it over."}, {Kind: llm.Content, Text: "The answer is 4."}},
		},
		{
			name:  "reasoning field",
			reply: llmtest.Reply{Reasoning: "Hmm, größer?", ReasoningField: "reasoning", Content: "Ja.", ChunkSize: 3},
			want:  []llm.Delta{{Kind: llm.Reasoning, Text: "Hmm, größer?"}, {Kind: llm.Content, Text: "Ja."}},
		},
		{
			name:  "think tags split across chunks",
			reply: llmtest.Reply{Content: "<think>plan: add 2 and 2</think>\n\nThe answer is 4.", ChunkSize: 3},
			want:  []llm.Delta{{Kind: llm.Reasoning, Text: "plan: add 2 and 2"}, {Kind: llm.Content, Text: "The answer is 4."}},
		},
		{
			name:  "reasoning tags after whitespace, one byte per chunk",
			reply: llmtest.Reply{Content: " \n<reasoning>why not</reasoning>ok", ChunkSize: 1},
			want:  []llm.Delta{{Kind: llm.Reasoning, Text: "why not"}, {Kind: llm.Content, Text: "ok"}},
		},
		{
			name:  "other tag is content",
			reply: llmtest.Reply{Content: "<thought>x</thought>", ChunkSize: 2},
			want:  []llm.Delta{{Kind: llm.Content, Text: "<thought>x</thought>"}},
		},
		{
			name:  "think tag later in the text is content",
			reply: llmtest.Reply{Content: "Answer: <think>no</think>", ChunkSize: 5},
			want:  []llm.Delta{{Kind: llm.Content, Text: "Answer: <think>no</think>"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.reply)
			var got []llm.Delta
			res, err := newClient(t, srv).Stream(testCtx(t), hello, collect(&got))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tt.want, merge(got)); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			var want llm.Result
			for _, d := range tt.want {
				if d.Kind == llm.Reasoning {
					want.Reasoning += d.Text
				} else {
					want.Content += d.Text
				}
			}
			want.FinishReason = "stop"
			if diff := cmp.Diff(want, res, cmpopts.IgnoreFields(llm.Result{}, "Usage")); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamRequestAndUsage(t *testing.T) {
	t.Parallel()
	usage := &llmtest.Usage{PromptTokens: 21, CompletionTokens: 7, TotalTokens: 28}
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "hi", Usage: usage})
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.System, Content: "sys"},
		{Role: llm.User, Content: "u1"},
		{Role: llm.Assistant, Content: "a1"},
		{Role: llm.User, Content: "u2"},
	}}
	res, err := newClient(t, srv).Stream(testCtx(t), req, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if diff := cmp.Diff(llm.Usage(*usage), res.Usage); diff != "" {
		t.Errorf("Usage (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	if diff := cmp.Diff(req.Messages, reqs[0].Messages); diff != "" {
		t.Errorf("messages sent (-want +got):\n%s", diff)
	}
	if reqs[0].Model != "test-model" {
		t.Errorf("model sent = %q, want test-model", reqs[0].Model)
	}
	if reqs[0].Authorization != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the bearer key", reqs[0].Authorization)
	}
	body := string(reqs[0].Body)
	for _, want := range []string{`"stream":true`, `"include_usage":true`} {
		if !strings.Contains(body, want) {
			t.Errorf("request body lacks %s: %s", want, body)
		}
	}
}

func TestStreamRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []llmtest.Reply
		retries int
		wantErr bool
		wantN   int
		check   func(t *testing.T, err error)
	}{
		{
			name:    "500 then success",
			replies: []llmtest.Reply{{Status: 500, Message: "boom"}, {Content: "ok"}},
			wantN:   2,
		},
		{
			name:    "connection reset then success",
			replies: []llmtest.Reply{{Hangup: true}, {Content: "ok"}},
			wantN:   2,
		},
		{
			name:    "408, 409 and 502 all retried",
			replies: []llmtest.Reply{{Status: 408}, {Status: 409}, {Status: 502}, {Content: "ok"}},
			wantN:   4,
		},
		{
			name:    "retries exhausted",
			replies: []llmtest.Reply{{Status: 503}, {Status: 503}, {Status: 503}, {Content: "unused"}},
			retries: 2,
			wantErr: true,
			wantN:   3,
			check: func(t *testing.T, err error) {
				var ae *llm.APIError
				if !errors.As(err, &ae) || ae.StatusCode != 503 {
					t.Errorf("err = %v, want *APIError 503", err)
				}
				if !strings.Contains(err.Error(), "after 3 attempts") {
					t.Errorf("err = %q, want it to count the attempts", err)
				}
			},
		},
		{
			name:    "negative MaxRetries disables retries",
			replies: []llmtest.Reply{{Status: 500}, {Content: "unused"}},
			retries: -1,
			wantErr: true,
			wantN:   1,
		},
		{
			name:    "404 not retried",
			replies: []llmtest.Reply{{Status: 404, Message: "model 'x' not found"}, {Content: "unused"}},
			wantErr: true,
			wantN:   1,
			check: func(t *testing.T, err error) {
				if got, want := err.Error(), "model API error 404: model 'x' not found"; got != want {
					t.Errorf("err = %q, want %q", got, want)
				}
			},
		},
		{
			name:    "400 not retried",
			replies: []llmtest.Reply{{Status: 400, Message: "bad"}, {Content: "unused"}},
			wantErr: true,
			wantN:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.replies...)
			// Backoff from a minute, capped at 50 ms: an uncapped delay
			// would take minutes, far beyond the bound, which a loaded
			// machine never reaches.
			c := newClient(t, srv, func(o *llm.Options) { o.MaxRetries = tt.retries; o.RetryDelay = time.Minute })
			start := time.Now()
			res, err := c.Stream(testCtx(t), hello, nil)
			if elapsed := time.Since(start); elapsed > 20*time.Second {
				t.Errorf("took %v: a delay was not capped", elapsed)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Stream err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && res.Content != "ok" {
				t.Errorf("Content = %q, want ok", res.Content)
			}
			if n := len(srv.Requests()); n != tt.wantN {
				t.Errorf("server got %d requests, want %d", n, tt.wantN)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

// TestStreamRetryAfter checks that the server's Retry-After sets the wait:
// the fallback backoff here is about 1 ms, so a wait at or above the lower
// bound can only come from the header, and the upper bound shows the cap.
func TestStreamRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter string
		maxDelay   time.Duration
		atLeast    time.Duration
		below      time.Duration
	}{
		// The bounds below are far from what it takes, and below what a
		// wrong wait would take (the cap of a minute, the 300 s asked for).
		{name: "fractional seconds honoured", retryAfter: "0.3", maxDelay: time.Minute, atLeast: 300 * time.Millisecond, below: 30 * time.Second},
		{name: "long value capped by MaxRetryDelay", retryAfter: "300", maxDelay: 100 * time.Millisecond, atLeast: 100 * time.Millisecond, below: 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t,
				llmtest.Reply{Status: 429, Message: "slow down", RetryAfter: tt.retryAfter},
				llmtest.Reply{Content: "ok"},
			)
			c := newClient(t, srv, func(o *llm.Options) {
				o.RetryDelay = time.Millisecond
				o.MaxRetryDelay = tt.maxDelay
			})
			start := time.Now()
			res, err := c.Stream(testCtx(t), hello, nil)
			elapsed := time.Since(start)
			if err != nil || res.Content != "ok" {
				t.Fatalf("Stream = %q, %v; want ok after one retry", res.Content, err)
			}
			if elapsed < tt.atLeast || elapsed >= tt.below {
				t.Errorf("took %v, want at least %v (the Retry-After wait) and below %v", elapsed, tt.atLeast, tt.below)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("server got %d requests, want 2", n)
			}
		})
	}
}

// TestStreamIdleTimeout stalls the server before and after the first chunk.
// Every server here would hang for 5 minutes, so a test that finishes at
// all shows the idle limit worked.
func TestStreamIdleTimeout(t *testing.T) {
	t.Parallel()
	const idle = 100 * time.Millisecond
	stall := llmtest.Duration(5 * time.Minute)
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		idle     time.Duration
		retries  int
		want     llm.Result
		wantErr  string // exact error text; "" = success
		wantCut  bool   // errors.Is ErrStreamCut
		wantN    int
		atLeast  time.Duration
		callback func(llm.Delta) error
	}{
		{
			name:    "silent before the first chunk is retried",
			replies: []llmtest.Reply{{FirstDelay: stall}, {Content: "ok"}},
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   2,
			atLeast: idle,
		},
		{
			name:    "silent before the first chunk, no retries left",
			replies: []llmtest.Reply{{FirstDelay: stall}, {Content: "unused"}},
			retries: -1,
			wantErr: "model stream stalled before the first chunk: no data from the model for 100ms",
			wantN:   1,
			atLeast: idle,
		},
		{
			name:    "Delay 5m after the role chunk cuts the stream",
			replies: []llmtest.Reply{{Content: "never sent", Delay: stall}, {Content: "unused"}},
			wantErr: "model stream ended unexpectedly after 1 chunks: no data from the model for 100ms",
			wantCut: true,
			wantN:   1,
			atLeast: idle,
		},
		{
			name: "stall mid-answer keeps the partial result",
			replies: []llmtest.Reply{
				{Reasoning: "hmm", Content: "abcdefghijkl", ChunkSize: 4, StallAfter: 2},
				{Content: "unused"},
			},
			want:    llm.Result{Reasoning: "hmm", Content: "abcdefgh"},
			wantErr: "model stream ended unexpectedly after 4 chunks: no data from the model for 100ms",
			wantCut: true,
			wantN:   1,
			atLeast: idle,
		},
		{
			name: "a slow StreamFunc is not idleness",
			// The delay keeps the rest out of the first read, so it must be
			// read after the sleep.
			replies: []llmtest.Reply{{Content: "abcdefgh", ChunkSize: 2, Delay: llmtest.Duration(idle / 5)}},
			callback: func(d llm.Delta) error {
				if d.Text == "ab" {
					time.Sleep(2 * idle) // the rest arrives and waits in the socket buffer meanwhile
				}
				return nil
			},
			want:  llm.Result{Content: "abcdefgh", FinishReason: "stop"},
			wantN: 1,
		},
		{
			name:    "negative IdleTimeout means no limit",
			replies: []llmtest.Reply{{Content: "ok", Delay: llmtest.Duration(3 * idle)}},
			idle:    -1,
			want:    llm.Result{Content: "ok", FinishReason: "stop"},
			wantN:   1,
			atLeast: 3 * idle,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.replies...)
			c := newClient(t, srv, func(o *llm.Options) {
				o.IdleTimeout = idle
				if tt.idle != 0 {
					o.IdleTimeout = tt.idle
				}
				o.MaxRetries = tt.retries
			})
			start := time.Now()
			res, err := c.Stream(testCtx(t), hello, tt.callback)
			elapsed := time.Since(start)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
			} else {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, llm.ErrIdleTimeout) {
					t.Errorf("err = %v, want it to wrap ErrIdleTimeout", err)
				}
				if got := errors.Is(err, llm.ErrStreamCut); got != tt.wantCut {
					t.Errorf("errors.Is(err, ErrStreamCut) = %v, want %v", got, tt.wantCut)
				}
			}
			if diff := cmp.Diff(tt.want, res, cmpopts.IgnoreFields(llm.Result{}, "Usage")); diff != "" {
				t.Errorf("Result (-want +got):\n%s", diff)
			}
			if elapsed < tt.atLeast || elapsed > time.Minute { // the stalls last 5 min
				t.Errorf("took %v, want at least %v and far less than the 5 min stall", elapsed, tt.atLeast)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.wantN {
				t.Fatalf("server got %d requests, want %d", len(reqs), tt.wantN)
			}
			if tt.atLeast == idle && !reqs[0].ClientClosed {
				t.Error("server did not see the stalled request abandoned")
			}
		})
	}
}

// TestStreamIdleCanceled checks that the caller's cancel is reported as
// such while the server is silent, not as idleness.
func TestStreamIdleCanceled(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{FirstDelay: llmtest.Duration(5 * time.Minute)})
	c := newClient(t, srv, func(o *llm.Options) { o.IdleTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
	defer cancel()
	_, err := c.Stream(ctx, hello, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, llm.ErrIdleTimeout) {
		t.Fatalf("err = %v, want the context's deadline and no idle error", err)
	}
	// On a loaded machine the deadline may come before the request is sent:
	// what matters is that it is not sent again.
	if n := len(srv.Requests()); n > 1 {
		t.Errorf("server got %d requests, want no retry after the context's deadline", n)
	}
}

// TestStreamThinkAfterRetry checks that a failed attempt leaves the think
// splitter untouched for the retry.
func TestStreamThinkAfterRetry(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 503}, llmtest.Reply{Hangup: true},
		llmtest.Reply{Content: "<think>a</think>b", ChunkSize: 2})
	res, err := newClient(t, srv).Stream(testCtx(t), hello, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if res.Reasoning != "a" || res.Content != "b" {
		t.Errorf("Reasoning %q Content %q, want a and b", res.Reasoning, res.Content)
	}
}

func TestStreamNoRetryAfterFirstChunk(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: "abcdefghijklmnopqrstuvwxyz", ChunkSize: 4, CutAfter: 2},
		llmtest.Reply{Content: "must not be used"},
	)
	var got []llm.Delta
	res, err := newClient(t, srv).Stream(testCtx(t), hello, collect(&got))
	if !errors.Is(err, llm.ErrStreamCut) {
		t.Fatalf("err = %v, want ErrStreamCut", err)
	}
	// role chunk + 2 content chunks
	if want := "model stream ended unexpectedly after 3 chunks"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want prefix %q", err, want)
	}
	if res.Content != "abcdefgh" {
		t.Errorf("partial Content = %q, want abcdefgh", res.Content)
	}
	if diff := cmp.Diff([]llm.Delta{{Kind: llm.Content, Text: "abcdefgh"}}, merge(got)); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want exactly 1 (no retry after a chunk)", n)
	}
}

func TestStreamEarlyStop(t *testing.T) {
	t.Parallel()
	const total = 100
	srv := llmtest.NewServer(t, llmtest.Reply{
		Reasoning: "first I think",
		Content:   strings.Repeat("word ", total),
		ChunkSize: 5,
		Delay:     llmtest.Duration(time.Second), // 100 s if the body were drained
	})
	var got []llm.Delta
	start := time.Now()
	res, err := newClient(t, srv).Stream(testCtx(t), hello, func(d llm.Delta) error {
		got = append(got, d)
		if d.Kind == llm.Content {
			return llm.ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second { // 3 s of reasoning chunks, then the stop
		t.Errorf("Stream took %v after stopping: the body was not closed at once", elapsed)
	}
	want := llm.Result{Reasoning: "first I think", Content: "word ", Stopped: true}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Result (-want +got):\n%s", diff)
	}
	if last := got[len(got)-1]; last != (llm.Delta{Kind: llm.Content, Text: "word "}) {
		t.Errorf("last delta = %+v, want the first content delta", last)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	if !reqs[0].ClientClosed {
		t.Error("server did not see the client close the connection")
	}
	if reqs[0].ChunksSent > total/4 {
		t.Errorf("server sent %d of %d chunks: the stream kept running after the stop", reqs[0].ChunksSent, total)
	}
}

func TestStreamCallbackError(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "one two three", ChunkSize: 4}, llmtest.Reply{Content: "unused"})
	boom := errors.New("editor went away")
	res, err := newClient(t, srv).Stream(testCtx(t), hello, func(llm.Delta) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap the callback error", err)
	}
	if res.Content != "one " || res.Stopped {
		t.Errorf("Result = %+v, want the first delta and Stopped false", res)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestStreamCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{
		Content:   strings.Repeat("slow ", 200),
		ChunkSize: 5,
		Delay:     llmtest.Duration(time.Second), // 200 s to the end

	})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	start := time.Now()
	res, err := newClient(t, srv).Stream(ctx, hello, func(d llm.Delta) error {
		cancel() // e.g. the user pressed Stop in the editor
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second { // a chunk, then the cancel
		t.Errorf("Stream returned after %v, want promptly", elapsed)
	}
	if !strings.HasPrefix(res.Content, "slow ") {
		t.Errorf("partial Content = %q, want what arrived before the cancel", res.Content)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestStreamAuthErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		key      string
		status   int
		message  string
		wantAuth string
		wantText string
	}{
		{
			name:     "401 rejected key",
			key:      testKey,
			status:   401,
			message:  fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com.", testKey),
			wantAuth: "Bearer " + testKey,
			wantText: "the API key was rejected; check OPENAI_API_KEY",
		},
		{
			name:     "401 masked key echoed",
			key:      testKey,
			status:   401,
			message:  "Incorrect API key provided: sk-test***3210.",
			wantAuth: "Bearer " + testKey,
			wantText: "check OPENAI_API_KEY",
		},
		{
			name:     "403",
			key:      testKey,
			status:   403,
			message:  "forbidden",
			wantAuth: "Bearer " + testKey,
			wantText: "model API error 403: forbidden",
		},
		{
			name:     "401 without a key",
			status:   401,
			message:  "missing key",
			wantText: "no API key was sent; set OPENAI_API_KEY",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Status: tt.status, Message: tt.message}, llmtest.Reply{Content: "unused"})
			c := newClient(t, srv, func(o *llm.Options) { o.APIKey = tt.key })
			_, err := c.Stream(testCtx(t), hello, nil)
			var ae *llm.APIError
			if !errors.As(err, &ae) || ae.StatusCode != tt.status {
				t.Fatalf("err = %v, want *APIError %d", err, tt.status)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "sk-test") {
				t.Errorf("error leaks the key: %q", err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantText)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1 (auth errors are not retried)", len(reqs))
			}
			if reqs[0].Authorization != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", reqs[0].Authorization, tt.wantAuth)
			}
		})
	}
}

func TestStreamScriptExhausted(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	_, err := newClient(t, srv).Stream(testCtx(t), hello, nil)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Message != llmtest.NoReplyMessage {
		t.Fatalf("err = %v, want *APIError 400 %q", err, llmtest.NoReplyMessage)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestStreamConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	base := srv.URL()
	srv.Close() // nothing listens there any more
	c, err := llm.New(llm.Options{Model: "m", BaseURL: base, APIKey: testKey,
		RetryDelay: time.Millisecond, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(testCtx(t), hello, nil)
	if err == nil {
		t.Fatal("Stream succeeded against a closed port")
	}
	msg := err.Error()
	if !strings.Contains(msg, "model connection failed") || !strings.Contains(msg, "after 2 attempts") {
		t.Errorf("err = %q, want a connection failure after 2 attempts", msg)
	}
	if strings.Contains(msg, testKey) || strings.Contains(msg, "http://") {
		t.Errorf("err leaks the URL or key: %q", msg)
	}
}

// TestStreamIgnoresEnvironment checks that OPENAI_API_KEY does not sneak in
// when the caller configured no key (not parallel: it sets the environment).
func TestStreamIgnoresEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env-should-not-be-sent")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "ok"})
	c := newClient(t, srv, func(o *llm.Options) { o.APIKey = "" })
	if _, err := c.Stream(testCtx(t), hello, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if auth := srv.Requests()[0].Authorization; auth != "" {
		t.Errorf("Authorization = %q, want none", auth)
	}
}

func TestNewAndRequestErrors(t *testing.T) {
	t.Parallel()
	if _, err := llm.New(llm.Options{}); !errors.Is(err, llm.ErrNoModel) {
		t.Errorf("New without model: err = %v, want ErrNoModel", err)
	}
	srv := llmtest.NewServer(t)
	c := newClient(t, srv)
	if c.Model() != "test-model" {
		t.Errorf("Model() = %q", c.Model())
	}
	_, err := c.Stream(testCtx(t), llm.Request{Messages: []llm.Message{{Role: "function", Content: "x"}}}, nil)
	if !errors.Is(err, llm.ErrUnknownRole) {
		t.Errorf("unknown role: err = %v, want ErrUnknownRole", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server got %d requests for an invalid request, want 0", n)
	}
}

func TestCountTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"hello", 1},
		{"Hello, world!", 4},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel() // also exercises concurrent first use
			if got := llm.CountTokens(tt.in); got != tt.want {
				t.Errorf("CountTokens(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func BenchmarkStream(b *testing.B) {
	srv := llmtest.NewServer(b)
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("All work and no play. ", 200) // 4.4 KB in 16-byte chunks
	b.ReportAllocs()
	for b.Loop() {
		srv.Push(llmtest.Reply{Content: content})
		if _, err := c.Stream(b.Context(), hello, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCountTokens(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	llm.CountTokens("warm up")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		llm.CountTokens(text)
	}
}
