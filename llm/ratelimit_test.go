package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeModel is an in-memory OpenAI-compatible endpoint: a RoundTripper, so
// that synctest bubbles (which cannot wait on real sockets) still run the
// whole client. Every request answers content; with usage set, a usage chunk
// follows. The first failFirst requests get a 503.
type fakeModel struct {
	content   string
	usage     *Usage
	failFirst int
	calls     atomic.Int32
}

func (f *fakeModel) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	n := int(f.calls.Add(1))
	if n <= f.failFirst {
		return &http.Response{
			StatusCode: http.StatusServiceUnavailable,
			// An exact server delay, so the retry's timing is not jittered.
			Header:  http.Header{"Content-Type": {"application/json"}, "Retry-After-Ms": {"1"}},
			Body:    io.NopCloser(strings.NewReader(`{"error":{"message":"busy"}}`)),
			Request: r,
		}, nil
	}
	const head = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",`
	var b strings.Builder
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", head, f.content)
	fmt.Fprintf(&b, "data: %s\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", head)
	if f.usage != nil {
		fmt.Fprintf(&b, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n",
			head, f.usage.PromptTokens, f.usage.CompletionTokens, f.usage.TotalTokens)
	}
	b.WriteString("data: [DONE]\n\n")
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(b.String())),
		Request:    r,
	}, nil
}

// limitedClient returns a client for fm whose rate-limit window is private
// to the test (keyed by its name, and dropped when the test ends so -count=N
// reruns do not see events stamped with another bubble's clock). countTokens is replaced
// by a byte count, so token numbers in tests are plain arithmetic, and
// *counted tallies its calls.
func limitedClient(t *testing.T, fm *fakeModel, rl RateLimit, counted *atomic.Int32, edit ...func(*Options)) *Client {
	t.Helper()
	opts := Options{
		Model:      "m",
		BaseURL:    "http://rate.invalid/" + url.PathEscape(t.Name()),
		HTTPClient: &http.Client{Transport: fm},
		RateLimit:  rl,
		RetryDelay: time.Millisecond,
	}
	for _, e := range edit {
		e(&opts)
	}
	resetWindow(t, opts.BaseURL, opts.Model)
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	c.countTokens = func(s string) int {
		if counted != nil {
			counted.Add(1)
		}
		return len(s)
	}
	return c
}

func resetWindow(t *testing.T, baseURL, model string) {
	t.Helper()
	t.Cleanup(func() {
		windows.Lock()
		delete(windows.m, baseURL+"\x00"+model)
		windows.Unlock()
	})
}

// say is a one-message request of n bytes (n tokens under limitedClient).
func say(n int) Request {
	return Request{Messages: []Message{{Role: User, Content: strings.Repeat("x", n)}}}
}

// waits records OnRateLimit calls.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) add(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// elapsed runs one Stream and returns how much (fake) time it took.
func elapsed(t *testing.T, c *Client, req Request) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return time.Since(start)
}

func TestRateLimitWaits(t *testing.T) {
	t.Parallel()
	// Each step runs one Stream after sleeping `after`; took is how long the
	// Stream then waited for the limit.
	type step struct {
		after time.Duration
		req   Request
		took  time.Duration
	}
	tests := []struct {
		name      string
		rl        RateLimit
		fm        *fakeModel
		steps     []step
		wantWaits []time.Duration
	}{
		{
			name: "requests: the 4th of 3/min waits for the 1st to expire",
			rl:   RateLimit{Requests: 3},
			fm:   &fakeModel{content: "ok"},
			steps: []step{
				{0, say(1), 0}, {10 * time.Second, say(1), 0}, {0, say(1), 0},
				{5 * time.Second, say(1), 45 * time.Second}, // admitted at t=60
				{0, say(1), 10 * time.Second},               // the t=10 one expires at 70
			},
			wantWaits: []time.Duration{45 * time.Second, 10 * time.Second},
		},
		{
			name: "input tokens slide: room comes back as old prompts expire",
			rl:   RateLimit{InputTokens: 100},
			fm:   &fakeModel{content: "ok"},
			steps: []step{
				{0, say(40), 0}, {10 * time.Second, say(40), 0},
				{0, say(40), 50 * time.Second}, // 120 > 100 until the t=0 prompt leaves at t=60
				{0, say(20), 0},                // 40+40+20 = 100 fits exactly
			},
			wantWaits: []time.Duration{50 * time.Second},
		},
		{
			name: "output tokens from the server's usage",
			rl:   RateLimit{OutputTokens: 10},
			fm:   &fakeModel{content: "ok", usage: &Usage{PromptTokens: 1, CompletionTokens: 10, TotalTokens: 11}},
			steps: []step{
				{0, say(1), 0},
				{20 * time.Second, say(1), 40 * time.Second},
			},
			wantWaits: []time.Duration{40 * time.Second},
		},
		{
			name: "output tokens counted from the text without usage",
			rl:   RateLimit{OutputTokens: 12},
			fm:   &fakeModel{content: "twelve bytes"}, // 12 tokens under limitedClient
			steps: []step{
				{0, say(1), 0},
				{0, say(1), time.Minute},
			},
			wantWaits: []time.Duration{time.Minute},
		},
		{
			name: "output below the limit leaves room",
			rl:   RateLimit{OutputTokens: 13},
			fm:   &fakeModel{content: "twelve bytes"},
			steps: []step{
				{0, say(1), 0}, {0, say(1), 0}, // 12 < 13: room for one more token
				{0, say(1), time.Minute},
			},
			wantWaits: []time.Duration{time.Minute},
		},
		{
			name: "an oversized prompt is admitted when the window is empty",
			rl:   RateLimit{InputTokens: 10},
			fm:   &fakeModel{content: "ok"},
			steps: []step{
				{0, say(50), 0},
				{0, say(50), time.Minute},
				{time.Minute, say(5), 0},
				{0, say(50), time.Minute}, // 5 + 50 > 10: waits for the small one to leave
			},
			wantWaits: []time.Duration{time.Minute, time.Minute},
		},
		{
			name: "retries count as requests",
			rl:   RateLimit{Requests: 2},
			fm:   &fakeModel{content: "ok", failFirst: 1},
			steps: []step{
				{0, say(1), time.Millisecond}, // the retry backoff, not the limit
				{0, say(1), time.Minute - time.Millisecond},
			},
			wantWaits: []time.Duration{time.Minute - time.Millisecond},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var w waits
				c := limitedClient(t, tt.fm, tt.rl, nil, func(o *Options) { o.OnRateLimit = w.add })
				var took []time.Duration
				var want []time.Duration
				for _, s := range tt.steps {
					time.Sleep(s.after)
					took = append(took, elapsed(t, c, s.req))
					want = append(want, s.took)
				}
				if diff := cmp.Diff(want, took); diff != "" {
					t.Errorf("time each Stream took (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantWaits, w.get()); diff != "" {
					t.Errorf("OnRateLimit waits (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestRateLimitTokenCounting checks that tokens are counted only for the
// limits that need them: tokenizing a long history costs real time.
func TestRateLimitTokenCounting(t *testing.T) {
	t.Parallel()
	withUsage := &Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}
	req := Request{Messages: []Message{{Role: System, Content: "sys"}, {Role: User, Content: "hi"}}}
	tests := []struct {
		name  string
		rl    RateLimit
		usage *Usage
		want  int32 // countTokens calls for one Stream
	}{
		{"no limit", RateLimit{}, nil, 0},
		{"requests only", RateLimit{Requests: 5}, nil, 0},
		{"negative limits are no limit", RateLimit{Requests: -1, InputTokens: -1, OutputTokens: -1}, nil, 0},
		{"input: one count per message", RateLimit{InputTokens: 1000}, withUsage, 2},
		{"output with usage: the server's count", RateLimit{OutputTokens: 1000}, withUsage, 0},
		{"output without usage: the text is counted", RateLimit{OutputTokens: 1000}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var counted atomic.Int32
				c := limitedClient(t, &fakeModel{content: "ok", usage: tt.usage}, tt.rl, &counted)
				if got := c.gate != nil; got != tt.rl.on() {
					t.Errorf("gate present = %v for %+v", got, tt.rl)
				}
				if _, err := c.Stream(t.Context(), req, nil); err != nil {
					t.Fatal(err)
				}
				if got := counted.Load(); got != tt.want {
					t.Errorf("countTokens called %d times, want %d", got, tt.want)
				}
			})
		})
	}
}

func TestRateLimitCancel(t *testing.T) {
	t.Parallel()
	t.Run("while waiting", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			fm := &fakeModel{content: "ok"}
			var w waits
			c := limitedClient(t, fm, RateLimit{Requests: 1}, nil, func(o *Options) { o.OnRateLimit = w.add })
			elapsed(t, c, say(1))
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				time.Sleep(5 * time.Second)
				cancel()
			})
			start := time.Now()
			_, err := c.Stream(ctx, say(1), nil)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if got := time.Since(start); got != 5*time.Second {
				t.Errorf("Stream returned after %v, want 5s (at the cancel)", got)
			}
			if got := fm.calls.Load(); got != 1 {
				t.Errorf("server got %d requests, want 1", got)
			}
			if diff := cmp.Diff([]time.Duration{time.Minute}, w.get()); diff != "" {
				t.Errorf("OnRateLimit waits (-want +got):\n%s", diff)
			}
		})
	})
	t.Run("already canceled", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			fm := &fakeModel{content: "ok"}
			c := limitedClient(t, fm, RateLimit{Requests: 100}, nil)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, err := c.Stream(ctx, say(1), nil); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if got := fm.calls.Load(); got != 0 {
				t.Errorf("server got %d requests, want 0", got)
			}
		})
	})
}

// TestRateLimitShared checks that clients built with the same BaseURL and
// model draw from one window, each with its own limits, and that another
// model does not.
func TestRateLimitShared(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fm := &fakeModel{content: "ok"}
		a := limitedClient(t, fm, RateLimit{Requests: 2}, nil)
		b := limitedClient(t, fm, RateLimit{Requests: 2}, nil)
		loose := limitedClient(t, fm, RateLimit{Requests: 3}, nil)
		other := limitedClient(t, fm, RateLimit{Requests: 2}, nil, func(o *Options) { o.Model = "other" })
		for _, step := range []struct {
			c    *Client
			want time.Duration
		}{
			{a, 0}, {b, 0},
			{other, 0}, {other, 0},
			{loose, 0}, // 3 in the window is within its own limit of 3
			{a, time.Minute},
		} {
			if got := elapsed(t, step.c, say(1)); got != step.want {
				t.Errorf("%s Stream took %v, want %v", step.c.opts.Model, got, step.want)
			}
		}
	})
}

// TestRateLimitConcurrent runs Streams at once against a limit of 2/min:
// two pass at t=0, two at t=60, and the loser of each race re-checks rather
// than overrunning the limit.
func TestRateLimitConcurrent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c := limitedClient(t, &fakeModel{content: "ok"}, RateLimit{Requests: 2}, nil)
		start := time.Now()
		var (
			mu  sync.Mutex
			got = map[time.Duration]int{}
			wg  sync.WaitGroup
		)
		for range 5 {
			wg.Go(func() {
				if _, err := c.Stream(t.Context(), say(1), nil); err != nil {
					t.Error(err)
				}
				mu.Lock()
				got[time.Since(start)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		want := map[time.Duration]int{0: 2, time.Minute: 2, 2 * time.Minute: 1}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Streams done at (-want +got):\n%s", diff)
		}
	})
}

// TestRateGateClock drives the gate with an injected clock and sleep, no
// bubble: the wait is computed from the events' expiry, and a wait after
// which the room is gone again (a concurrent caller took it) is recomputed.
func TestRateGateClock(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var slept []time.Duration
	var notified []time.Duration
	w := &window{}
	g := &rateGate{
		w:      w,
		limit:  RateLimit{Requests: 1, InputTokens: 100},
		onWait: func(d time.Duration) { notified = append(notified, d) },
		now:    func() time.Time { return now },
	}
	g.sleep = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		now = now.Add(d)
		if len(slept) == 1 {
			// Someone else got in just as the first wait ended.
			w.addLocked(usageEvent{at: now, requests: 1})
		}
		return nil
	}
	ctx := t.Context()
	if err := g.acquire(ctx, 30); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * time.Second)
	if err := g.acquire(ctx, 30); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{40 * time.Second, time.Minute}
	if diff := cmp.Diff(want, slept); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, notified); diff != "" {
		t.Errorf("OnRateLimit (-want +got):\n%s", diff)
	}
	if got, wantAt := now, t0.Add(2*time.Minute); !got.Equal(wantAt) {
		t.Errorf("admitted at %v, want %v", got, wantAt)
	}
	// Output recorded by a clock that stepped back keeps the events ordered.
	now = now.Add(-time.Hour)
	g.recordOutput(5)
	if last := w.events[len(w.events)-1]; !last.at.Equal(t0.Add(2*time.Minute)) || last.output != 5 {
		t.Errorf("last event = %+v, want 5 output tokens at the previous event's time", last)
	}
}
