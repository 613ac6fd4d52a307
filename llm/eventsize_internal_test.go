package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// TestWatchBodyEventLimit feeds SSE bodies through watchBody with a small
// limit, in one read and byte by byte, and checks where it cuts: blank lines
// ("\n\n", "\r\n\r\n", "\n\r\n") end an event, anything else does not.
func TestWatchBodyEventLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		max  int64
		keep int // bytes passed on before ErrEventTooLarge; -1 = all, no error
	}{
		{"events at the limit", strings.Repeat("data: 12\n\n", 5), 10, -1},
		{"event over the limit", strings.Repeat("data: 12\n\n", 5), 9, 9},
		{"second event over", "data: 1\n\ndata: 12345\n\n", 10, 9 + 10},
		{"crlf events at the limit", strings.Repeat("data: 12\r\n\r\n", 5), 12, -1},
		{"crlf event over the limit", strings.Repeat("data: 12\r\n\r\n", 5), 11, 11},
		{"lf then crlf blank line", strings.Repeat("data: 1\n\r\n", 3), 10, -1},
		{"blank lines only", strings.Repeat("\n", 100) + strings.Repeat("\r\n", 100), 2, -1},
		{"lone cr line is blank, cr cr is not", "data: a\n\r\ndata: b\n\n" + "data: a\n\r\r\ndata: b\n\n", 19, 19 + 19},
		{"endless line", "data: " + strings.Repeat("x", 100), 50, 50},
		{"data lines, no blank line", strings.Repeat("data: x\n", 20), 50, 50},
		{"comment lines count", strings.Repeat(": ping\n", 20), 50, 50},
		{"no limit", "data: " + strings.Repeat("x", 1000) + strings.Repeat("data: x\n", 200), 0, -1},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "bytewise"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				var src io.Reader = strings.NewReader(tt.body)
				if mode == "bytewise" {
					src = iotest.OneByteReader(src)
				}
				w := &watchBody{rc: io.NopCloser(src), tail: []byte("\n"), max: tt.max}
				got, err := io.ReadAll(w)
				want, wantErr := tt.body, tt.keep >= 0
				if wantErr {
					want = tt.body[:tt.keep]
				}
				if string(got) != want {
					t.Errorf("passed on %d bytes %.60q…, want %d", len(got), got, len(want))
				}
				if errors.Is(err, ErrEventTooLarge) != wantErr || (!wantErr && err != nil) {
					t.Fatalf("err = %v, want ErrEventTooLarge: %v", err, wantErr)
				}
				if !wantErr {
					return
				}
				if w.err != nil {
					t.Errorf("the limit was recorded as a transport error: %v", w.err)
				}
				if w.n != int64(tt.keep) {
					t.Errorf("counted %d bytes, want %d", w.n, tt.keep)
				}
				if n, err := w.Read(make([]byte, 10)); n != 0 || !errors.Is(err, ErrEventTooLarge) {
					t.Errorf("Read after the cut = %d, %v; want 0, ErrEventTooLarge again", n, err)
				}
			})
		}
	}
}

// TestWatchBodyDecoder runs openai-go's decoder over a watchBody: the events
// completed before an oversized one are decoded, even when they arrive in
// the same read, and then the decoder fails with ErrEventTooLarge having
// held at most the limit.
func TestWatchBodyDecoder(t *testing.T) {
	t.Parallel()
	events := "data: {\"a\":1}\n\n: ping\n\ndata: {\"a\":2}\r\n\r\n"
	body := events + "data: " + strings.Repeat("x", 1<<20)
	// The decoder's first read (4 KiB) takes in the events and the cut.
	const limit = 256
	w := &watchBody{rc: io.NopCloser(strings.NewReader(body)), tail: []byte("\n"), max: limit}
	dec := ssestream.NewDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: w})
	var got []string
	for dec.Next() {
		got = append(got, string(dec.Event().Data))
	}
	if want := []string{"{\"a\":1}\n", "{\"a\":2}\n"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events %q, want %q", got, want)
	}
	if !errors.Is(dec.Err(), ErrEventTooLarge) {
		t.Errorf("decoder err = %v, want ErrEventTooLarge", dec.Err())
	}
	if want := int64(len(events) + limit); w.n != want {
		t.Errorf("passed on %d bytes, want %d", w.n, want)
	}
}

// TestEventTooLargeText checks the error names the limit and matches the
// sentinel only.
func TestEventTooLargeText(t *testing.T) {
	t.Parallel()
	for limit, want := range map[int64]string{
		8 << 20:  "the model sent one stream event over 8 MiB",
		64 << 10: "the model sent one stream event over 64 KiB",
		1000:     "the model sent one stream event over 1000 bytes",
		1:        "the model sent one stream event over 1 byte",
	} {
		err := error(&eventTooLargeError{limit: limit})
		if err.Error() != want {
			t.Errorf("Error() = %q, want %q", err, want)
		}
		if !errors.Is(err, ErrEventTooLarge) || errors.Is(err, ErrStreamCut) || errors.Is(err, ErrIdleTimeout) {
			t.Errorf("%q matches the wrong sentinels", err)
		}
	}
}

// TestConsumeEventTooLarge checks how consume reports an oversized event:
// never retryable, a cut once a chunk arrived.
func TestConsumeEventTooLarge(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for chunks, want := range map[int]string{
		0: "model stream: the model sent one stream event over 8 MiB",
		3: "model stream ended unexpectedly after 3 chunks: the model sent one stream event over 8 MiB",
	} {
		a := &attemptState{actx: context.Background(), status: 200, chunks: chunks,
			body: &watchBody{rc: io.NopCloser(bytes.NewReader(nil))}}
		err := c.consume(context.Background(), endedStream{err: &eventTooLargeError{limit: 8 << 20}}, &collector{}, a)
		if err == nil || err.Error() != want {
			t.Errorf("%d chunks: err = %v, want %q", chunks, err, want)
			continue
		}
		if !errors.Is(err, ErrEventTooLarge) || errors.Is(err, ErrStreamCut) != (chunks > 0) {
			t.Errorf("%d chunks: err = %v matches the wrong sentinels", chunks, err)
		}
		if a.retryable || a.timedOut {
			t.Errorf("%d chunks: marked retryable %v, timed out %v", chunks, a.retryable, a.timedOut)
		}
	}
}

// TestNewMaxEventBytes checks how New resolves MaxEventBytes: 0 is the
// default, negative is no limit (0 inside the Client).
func TestNewMaxEventBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]int64{0: DefaultMaxEventBytes, -1: 0, 4096: 4096} {
		c, err := New(Options{Model: "m", MaxEventBytes: in})
		if err != nil {
			t.Fatal(err)
		}
		if c.opts.MaxEventBytes != want {
			t.Errorf("MaxEventBytes %d became %d, want %d", in, c.opts.MaxEventBytes, want)
		}
	}
	if DefaultMaxEventBytes != 8<<20 {
		t.Errorf("DefaultMaxEventBytes = %d, want 8 MiB", DefaultMaxEventBytes)
	}
}
