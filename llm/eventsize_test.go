package llm_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

// responseBytes returns the "bytes" of each "model response" debug line in
// a JSON log: how much of each attempt's body the decoder was given.
func responseBytes(t *testing.T, logs string) []int64 {
	t.Helper()
	var out []int64
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var line struct {
			Msg   string `json:"msg"`
			Bytes int64  `json:"bytes"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if line.Msg == "model response" {
			out = append(out, line.Bytes)
		}
	}
	return out
}

// TestStreamEventTooLarge: a server that sends one endless line, or data
// lines and never a blank line, is cut once the event passes MaxEventBytes,
// with ErrEventTooLarge, without a retry and with the partial Result; the
// client takes in no more than the limit (plus the events before), and the
// server cannot write its whole flood. With no limit the flood is read to
// the end.
func TestStreamEventTooLarge(t *testing.T) {
	t.Parallel()
	const flood = 64 << 20
	tests := []struct {
		name    string
		reply   llmtest.Reply
		max     int64  // Options.MaxEventBytes
		limit   int64  // the limit in effect; 0 = none
		wantErr string // exact; "" = not checked (no limit)
		content string
	}{
		{
			name:    "endless line after content",
			reply:   llmtest.Reply{Content: "Hello", ChunkSize: 2, Flood: flood},
			max:     1 << 20,
			limit:   1 << 20,
			wantErr: "model stream ended unexpectedly after 4 chunks: the model sent one stream event over 1 MiB",
			content: "Hello",
		},
		{
			name:    "endless data lines after content",
			reply:   llmtest.Reply{Content: "Hello", ChunkSize: 2, Flood: flood, FloodLine: 1000},
			max:     1 << 20,
			limit:   1 << 20,
			wantErr: "model stream ended unexpectedly after 4 chunks: the model sent one stream event over 1 MiB",
			content: "Hello",
		},
		{
			name:    "endless line before any chunk",
			reply:   llmtest.Reply{Flood: flood, FloodFirst: true},
			max:     1 << 20,
			limit:   1 << 20,
			wantErr: "model stream: the model sent one stream event over 1 MiB",
		},
		{
			name:    "endless data lines before any chunk",
			reply:   llmtest.Reply{Flood: flood, FloodLine: 100, FloodFirst: true},
			max:     1 << 20,
			limit:   1 << 20,
			wantErr: "model stream: the model sent one stream event over 1 MiB",
		},
		{
			name:    "default limit",
			reply:   llmtest.Reply{Content: "Hello", Flood: flood, FloodLine: 4000},
			limit:   llm.DefaultMaxEventBytes,
			wantErr: "model stream ended unexpectedly after 2 chunks: the model sent one stream event over 8 MiB",
			content: "Hello",
		},
		{
			name:    "no limit",
			reply:   llmtest.Reply{Content: "Hello", Flood: 3 << 20, FloodLine: 1000},
			max:     -1,
			content: "Hello",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs proctest.Buffer
			srv := llmtest.NewServer(t, tt.reply)
			c := newClient(t, srv, func(o *llm.Options) {
				o.MaxEventBytes = tt.max
				o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			res, err := c.Stream(testCtx(t), hello, nil)
			if tt.limit == 0 {
				// The server aborts after its flood: a plain cut.
				if !errors.Is(err, llm.ErrStreamCut) || errors.Is(err, llm.ErrEventTooLarge) {
					t.Errorf("err = %v, want ErrStreamCut and not ErrEventTooLarge", err)
				}
			} else {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, llm.ErrEventTooLarge) {
					t.Errorf("err = %v, want it to match ErrEventTooLarge", err)
				}
				if got, want := errors.Is(err, llm.ErrStreamCut), tt.content != ""; got != want {
					t.Errorf("err = %v: errors.Is(ErrStreamCut) = %v, want %v", err, got, want)
				}
			}
			if res.Content != tt.content || res.FinishReason != "" {
				t.Errorf("Result %+v, want the partial content %q and no finish", res, tt.content)
			}

			recs := srv.Requests()
			if len(recs) != 1 {
				t.Fatalf("server got %d requests, want 1 (no retry)", len(recs))
			}
			rec := recs[0]
			bytes := responseBytes(t, logs.String())
			if len(bytes) != 1 {
				t.Fatalf("%d responses logged, want 1", len(bytes))
			}
			if tt.limit == 0 {
				if rec.Flooded != tt.reply.Flood || bytes[0] < int64(tt.reply.Flood) {
					t.Errorf("server wrote %d, client read %d bytes; want the whole flood of %d", rec.Flooded, bytes[0], tt.reply.Flood)
				}
				return
			}
			// The events before the flood are a few hundred bytes each.
			if bytes[0] < tt.limit || bytes[0] > tt.limit+4096 {
				t.Errorf("client read %d bytes, want the limit %d and at most the small events before it", bytes[0], tt.limit)
			}
			if !rec.ClientClosed || rec.Flooded >= tt.reply.Flood {
				t.Errorf("server wrote %d of %d flood bytes, ClientClosed %v; want it stopped by the client leaving",
					rec.Flooded, tt.reply.Flood, rec.ClientClosed)
			}
		})
	}
}

// TestStreamLargeEventPasses: legitimately large chunks pass: a 1 MiB
// content chunk under the default limit, and several events of about the
// limit each (the count starts again at every blank line).
func TestStreamLargeEventPasses(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	tests := []struct {
		name  string
		reply llmtest.Reply
		max   int64
	}{
		{"1 MiB chunk, default limit", llmtest.Reply{Reasoning: "r", Content: big, ChunkSize: len(big)}, 0},
		{"3 chunks of 1 MiB, limit just above one", llmtest.Reply{Reasoning: big, Content: big + big, ChunkSize: len(big)}, 1<<20 + 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, tt.reply)
			c := newClient(t, srv, func(o *llm.Options) { o.MaxEventBytes = tt.max })
			var deltas int
			res, err := c.Stream(testCtx(t), hello, func(llm.Delta) error { deltas++; return nil })
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if res.Content != tt.reply.Content || res.Reasoning != tt.reply.Reasoning || res.FinishReason != "stop" {
				t.Errorf("got %d bytes of content, %d of reasoning, finish %q; want %d, %d, stop",
					len(res.Content), len(res.Reasoning), res.FinishReason, len(tt.reply.Content), len(tt.reply.Reasoning))
			}
			if deltas == 0 {
				t.Error("no delta delivered")
			}
		})
	}
}

// TestStreamReplyTooLarge: a model that goes on in small chunks, each far
// under MaxEventBytes, is cut once its content and reasoning together pass
// MaxReplyBytes, with ErrReplyTooLarge, without a retry, and with the
// answer up to the limit; one under the limit passes whole.
func TestStreamReplyTooLarge(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	reply := llmtest.Reply{Reasoning: strings.Repeat("r", limit/2), Content: strings.Repeat("c", limit), ChunkSize: 1024}
	srv := llmtest.NewServer(t, reply, llmtest.Reply{Content: strings.Repeat("c", limit-1), ChunkSize: 1024})
	c := newClient(t, srv, func(o *llm.Options) { o.MaxReplyBytes = limit })
	res, err := c.Stream(testCtx(t), hello, nil)
	if !errors.Is(err, llm.ErrReplyTooLarge) || !strings.Contains(err.Error(), "256 KiB") {
		t.Fatalf("err = %v, want ErrReplyTooLarge naming the limit", err)
	}
	if n := len(res.Content) + len(res.Reasoning); n > limit || n < limit-1024 {
		t.Errorf("the partial answer holds %d bytes, want up to the limit %d", n, limit)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry)", n)
	}
	if res, err := c.Stream(testCtx(t), hello, nil); err != nil || len(res.Content) != limit-1 {
		t.Fatalf("an answer under the limit: %d bytes, %v", len(res.Content), err)
	}
}
