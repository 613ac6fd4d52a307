package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/llm"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ask(t *testing.T, c *llm.Client, text string) (llm.Result, error) {
	t.Helper()
	return c.Stream(testCtx(t), llm.Request{Messages: []llm.Message{
		{Role: llm.System, Content: "system prompt"},
		{Role: llm.User, Content: text},
	}}, nil)
}

func TestReplySelection(t *testing.T) {
	t.Parallel()
	srv := NewServer(t,
		Reply{Content: "first"},
		Reply{Match: "weather", Content: "sunny"},
		Reply{Content: "second"},
		Reply{Match: "never asked", Content: "unused"},
	)
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range []string{"hello", "what's the weather?", "more weather", "bye"} {
		res, err := ask(t, c, q)
		if err != nil {
			got = append(got, "error: "+err.Error())
			continue
		}
		got = append(got, res.Content)
	}
	want := []string{"first", "sunny", "second", "error: model API error 400: " + NoReplyMessage}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	var idx []int
	for _, r := range srv.Requests() {
		idx = append(idx, r.Reply)
	}
	if diff := cmp.Diff([]int{0, 1, 2, -1}, idx); diff != "" {
		t.Errorf("reply indexes (-want +got):\n%s", diff)
	}

	srv.Push(Reply{Content: "pushed"})
	if res, err := ask(t, c, "again"); err != nil || res.Content != "pushed" {
		t.Errorf("after Push: %q, %v; want pushed", res.Content, err)
	}
}

// sse posts a chat request and returns the response and its data lines.
func sse(t *testing.T, srv *Server, body string) (*http.Response, []string) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		} else if line != "" {
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	return resp, data
}

type wireChunk struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int               `json:"index"`
		Delta        map[string]string `json:"delta"`
		FinishReason *string           `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

func TestWireFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		includeUsage bool
	}{
		{"with usage", true},
		{"without usage", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, Reply{Reasoning: "hmm", ReasoningField: "reasoning", Content: "héllo wörld", ChunkSize: 4,
				Usage: &Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}})
			body := `{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
			if tt.includeUsage {
				body = `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
			}
			resp, data := sse(t, srv, body)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type = %q", ct)
			}
			if n := len(data); n < 4 || data[n-1] != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %q", data)
			}
			var chunks []wireChunk
			for _, d := range data[:len(data)-1] {
				var c wireChunk
				if err := json.Unmarshal([]byte(d), &c); err != nil {
					t.Fatalf("chunk %s: %v", d, err)
				}
				if c.Object != "chat.completion.chunk" || c.Model != "gpt-x" {
					t.Errorf("chunk header = %q %q", c.Object, c.Model)
				}
				chunks = append(chunks, c)
			}
			if role := chunks[0].Choices[0].Delta["role"]; role != "assistant" {
				t.Errorf("first chunk role = %q, want assistant", role)
			}
			var reasoning, content, finish string
			var usage *Usage
			for _, c := range chunks {
				if len(c.Choices) == 0 {
					usage = c.Usage
					continue
				}
				reasoning += c.Choices[0].Delta["reasoning"]
				content += c.Choices[0].Delta["content"]
				if f := c.Choices[0].FinishReason; f != nil {
					finish = *f
				}
			}
			if reasoning != "hmm" || content != "héllo wörld" || finish != "stop" {
				t.Errorf("reasoning %q, content %q, finish %q", reasoning, content, finish)
			}
			if got := usage != nil; got != tt.includeUsage {
				t.Errorf("usage chunk present = %v, want %v", got, tt.includeUsage)
			}
			if tt.includeUsage && *usage != (Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}) {
				t.Errorf("usage = %+v", *usage)
			}
			rec := srv.Requests()[0]
			if diff := cmp.Diff([]llm.Message{{Role: llm.User, Content: "hi"}}, rec.Messages); diff != "" {
				t.Errorf("recorded messages (-want +got):\n%s", diff)
			}
			if rec.ChunksSent != 5 || rec.ClientClosed {
				t.Errorf("recorded ChunksSent %d ClientClosed %v, want 5 false", rec.ChunksSent, rec.ClientClosed)
			}
		})
	}
}

func TestClientClosed(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Reply{Content: strings.Repeat("x", 400), ChunkSize: 4, Delay: Duration(2 * time.Millisecond)})
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rec := srv.Requests()[0]
	if !rec.ClientClosed || rec.ChunksSent >= 100 {
		t.Errorf("ClientClosed %v after %d chunks, want true and fewer than 100", rec.ClientClosed, rec.ChunksSent)
	}
}

// TestFirstDelay checks that the headers go out before the silence, so a
// client sees a stream that has started and then says nothing.
func TestFirstDelay(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Reply{Content: "late", FirstDelay: Duration(5 * time.Minute)})
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || time.Since(start) > time.Minute { // the delay is 5 min
		t.Errorf("status %d after %v, want 200 at once", resp.StatusCode, time.Since(start))
	}
	resp.Body.Close()
	rec := srv.Requests()[0]
	if !rec.ClientClosed || rec.ChunksSent != 0 {
		t.Errorf("ClientClosed %v after %d chunks, want true after none", rec.ClientClosed, rec.ChunksSent)
	}
}

// TestHeaderDelay checks that HeaderDelay holds back the response headers
// themselves, and that the server sees the client give up while it waits.
func TestHeaderDelay(t *testing.T) {
	t.Parallel()
	const delay = 200 * time.Millisecond
	srv := NewServer(t, Reply{Content: "late", HeaderDelay: Duration(delay)}, Reply{Content: "never", HeaderDelay: Duration(5 * time.Minute)})
	post := func(ctx context.Context) (*http.Response, error) { return tryStream(t, ctx, srv) }
	start := time.Now()
	resp, err := post(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("headers after %v, want no sooner than %v", elapsed, delay)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"content":"late"`) || !strings.Contains(string(b), "data: [DONE]") {
		t.Errorf("body after the delay = %s, want the whole stream", b)
	}

	ctx, cancel := context.WithTimeout(testCtx(t), 50*time.Millisecond)
	defer cancel()
	if resp, err := post(ctx); err == nil {
		resp.Body.Close()
		t.Fatalf("status %d before the 5m header delay, want the client's timeout", resp.StatusCode)
	}
	recs := srv.Requests()
	if len(recs) != 2 || recs[0].ClientClosed || !recs[1].ClientClosed || recs[1].ChunksSent != 0 {
		t.Errorf("records %+v, want the second one abandoned with no chunk", recs)
	}
}

// TestTrickle checks that Trickle is written during FirstDelay, Delay and a
// stall, between (never inside) the events, and during FirstDelay before an
// error body.
func TestTrickle(t *testing.T) {
	t.Parallel()
	every := Duration(5 * time.Millisecond)
	srv := NewServer(t,
		Reply{Content: "abcd", ChunkSize: 2, FirstDelay: Duration(60 * time.Millisecond), Delay: Duration(30 * time.Millisecond),
			Trickle: ": ping\n\n", TrickleEvery: every},
		Reply{Status: 503, Message: "busy", FirstDelay: Duration(60 * time.Millisecond), Trickle: " ", TrickleEvery: every},
		Reply{Content: "abcd", ChunkSize: 2, StallAfter: 1, Trickle: "\n", TrickleEvery: every},
	)
	post := func(ctx context.Context) *http.Response { return postStream(t, ctx, srv) }

	resp := post(testCtx(t))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var data, comments int
	for line := range strings.SplitSeq(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "data: "):
			data++
		case line == ": ping":
			comments++
		case line != "":
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	if data != 5 || comments == 0 { // role, 2 content, finish, [DONE]
		t.Errorf("%d data lines and %d comments, want 5 and some comments:\n%s", data, comments, b)
	}

	resp = post(testCtx(t))
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.HasPrefix(string(b), " ") || !strings.Contains(string(b), `"message":"busy"`) {
		t.Errorf("status %d body %q, want 503 with spaces before the error", resp.StatusCode, b)
	}

	ctx, cancel := context.WithCancel(testCtx(t))
	resp = post(ctx)
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.HasSuffix(got.String(), "\n\n\n\n") { // blank lines after the stall
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("read: %v after %q", err, got.String())
		}
	}
	cancel()
	resp.Body.Close()

	recs := srv.Requests()
	if len(recs) != 3 {
		t.Fatalf("%d requests, want 3", len(recs))
	}
	for i, r := range recs {
		if r.Trickled == 0 {
			t.Errorf("request %d: Trickled = 0", i)
		}
	}
	if !recs[2].ClientClosed || recs[2].ChunksSent != 1 {
		t.Errorf("stalled request: ClientClosed %v after %d chunks, want true after 1", recs[2].ClientClosed, recs[2].ChunksSent)
	}
}

func TestOtherRoutes(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	tests := []struct {
		method, path string
		status       int
		want         string
	}{
		{http.MethodGet, "/models", 200, `"id":"llmtest"`},
		{http.MethodGet, "/chat/completions", 404, `"message":"llmtest: no route for GET /v1/chat/completions"`},
		{http.MethodPost, "/embeddings", 400, `"message":"llmtest: the request is not JSON`},
		{http.MethodPost, "/audio/speech", 404, `"type":"invalid_request_error"`},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(testCtx(t), tt.method, srv.URL()+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
			t.Errorf("%s %s = %d %s, want %d containing %s", tt.method, tt.path, resp.StatusCode, b, tt.status, tt.want)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Reply{Content: "plain", Reasoning: "r"})
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"q"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Object  string `json:"object"`
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Object != "chat.completion" || v.Choices[0].Message["content"] != "plain" || v.Choices[0].Message["reasoning_content"] != "r" {
		t.Errorf("got %+v", v)
	}
}

func TestLoadScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"replies":[
		{"content":"hi","delay":"50ms","chunk_size":3},
		{"match":"x","reasoning":"r","reasoning_field":"reasoning","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}},
		{"status":429,"message":"slow","retry_after":"1"},
		{"content":"abc","first_delay":"1s","stall_after":1},
		{"header_delay":"2s","trickle":": ping\n\n","trickle_every":"1s","stall_after":1},
		{"flood":1048576,"flood_line":100,"flood_first":true}
	]}`)
	got, err := LoadScript(good)
	if err != nil {
		t.Fatalf("LoadScript: %v", err)
	}
	want := Script{Replies: []Reply{
		{Content: "hi", Delay: Duration(50 * time.Millisecond), ChunkSize: 3},
		{Match: "x", Reasoning: "r", ReasoningField: "reasoning", Usage: &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
		{Status: 429, Message: "slow", RetryAfter: "1"},
		{Content: "abc", FirstDelay: Duration(time.Second), StallAfter: 1},
		{HeaderDelay: Duration(2 * time.Second), Trickle: ": ping\n\n", TrickleEvery: Duration(time.Second), StallAfter: 1},
		{Flood: 1 << 20, FloodLine: 100, FloodFirst: true},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}

	bad := []struct{ name, text string }{
		{"unknown field", `{"replies":[{"contnet":"typo"}]}`},
		{"bad duration", `{"replies":[{"delay":"soon"}]}`},
		{"bad reasoning field", `{"replies":[{"reasoning_field":"thoughts"}]}`},
		{"bad status", `{"replies":[{"status":200}]}`},
		{"negative first_delay", `{"replies":[{"first_delay":"-1s"}]}`},
		{"negative stall_after", `{"replies":[{"stall_after":-1}]}`},
		{"negative header_delay", `{"replies":[{"header_delay":"-1s"}]}`},
		{"negative trickle_every", `{"replies":[{"trickle_every":"-1ms"}]}`},
		{"negative flood", `{"replies":[{"flood":-1}]}`},
		{"negative flood_line", `{"replies":[{"flood":10,"flood_line":-1}]}`},
		{"not json", `replies: []`},
	}
	for _, b := range bad {
		if _, err := LoadScript(write(b.name+".json", b.text)); !errors.Is(err, ErrBadScript) {
			t.Errorf("%s: err = %v, want ErrBadScript", b.name, err)
		}
	}
	if _, err := LoadScript(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Duration(1500 * time.Millisecond))
	if err != nil || string(b) != `"1.5s"` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	var d Duration
	if err := json.Unmarshal([]byte(`2000000`), &d); err != nil || d != Duration(2*time.Millisecond) {
		t.Errorf("Unmarshal number = %v, %v", d, err)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		size int
		want []string
	}{
		{"", 4, nil},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"aé€b", 2, []string{"a", "é", "€", "b"}},
		{"€€", 4, []string{"€", "€"}},
		{strings.Repeat("a", 20), 0, []string{strings.Repeat("a", 16), "aaaa"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, split(tt.in, tt.size)); diff != "" {
			t.Errorf("split(%q, %d) (-want +got):\n%s", tt.in, tt.size, diff)
		}
	}
}

func TestStart(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80", "nonsense"} {
		if _, err := Start(addr, Script{}, nil); err == nil {
			t.Errorf("Start(%q) succeeded, want a loopback error", addr)
		}
	}
	srv, err := Start("127.0.0.1:0", Script{Replies: []Reply{{Content: "from Start"}}}, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/v1") {
		t.Errorf("URL() = %q", srv.URL())
	}
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ask(t, c, "hi"); err != nil || res.Content != "from Start" {
		t.Errorf("Stream = %q, %v", res.Content, err)
	}
	srv.Close()
	srv.Close() // idempotent
}

// TestFlood checks what Flood sends: bytes that never end an SSE event
// (one endless data line, or data lines and no blank line), exactly Flood
// of them, after the content or before any chunk, and then an aborted
// connection; and that a client leaving early stops it.
func TestFlood(t *testing.T) {
	t.Parallel()
	srv := NewServer(t,
		Reply{Content: "ab", Flood: 100_000},
		Reply{Flood: 50_000, FloodLine: 100, FloodFirst: true},
		Reply{Flood: 256 << 20, FloodLine: 1000},
	)
	post := func(ctx context.Context) *http.Response { return postStream(t, ctx, srv) }

	// The endless line comes after the content events, and the connection
	// is aborted after it: no finish, no [DONE], no end of the chunked body.
	resp := post(testCtx(t))
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("reading the flooded body: err = %v, want io.ErrUnexpectedEOF", err)
	}
	events, flood, ok := strings.Cut(string(b), "\n\ndata: x")
	if !ok || strings.Count(events, "data: ") != 2 || !strings.Contains(events, `"content":"ab"`) {
		t.Fatalf("want the role and content events before the flood, got %.300q", b)
	}
	flood = "data: x" + flood
	if len(flood) != 100_000 || strings.Trim(flood[len("data: "):], "x") != "" {
		t.Errorf("flood is %d bytes %.100q…, want 100000 bytes of one data line of x's", len(flood), flood)
	}

	// Data lines and no blank line, before any event.
	resp = post(testCtx(t))
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	line := "data: " + strings.Repeat("x", 100) + "\n"
	if want := strings.Repeat(line, 50_000/len(line)+1)[:50_000]; string(b) != want {
		t.Errorf("flood is %d bytes %.300q…, want the first 50000 bytes of endless %q lines", len(b), b, line)
	}

	// A client that stops reading and leaves ends the flood.
	resp = post(testCtx(t))
	if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	recs := srv.Requests()
	if len(recs) != 3 {
		t.Fatalf("%d requests, want 3", len(recs))
	}
	if r := recs[0]; r.Flooded != 100_000 || r.ClientClosed || r.ChunksSent != 1 {
		t.Errorf("after the content: Flooded %d, ClientClosed %v, ChunksSent %d; want 100000, false, 1", r.Flooded, r.ClientClosed, r.ChunksSent)
	}
	if r := recs[1]; r.Flooded != 50_000 || r.ClientClosed || r.ChunksSent != 0 {
		t.Errorf("first: Flooded %d, ClientClosed %v, ChunksSent %d; want 50000, false, 0", r.Flooded, r.ClientClosed, r.ChunksSent)
	}
	if r := recs[2]; r.Flooded >= 256<<20 || !r.ClientClosed {
		t.Errorf("client left: Flooded %d, ClientClosed %v; want less than all and true", r.Flooded, r.ClientClosed)
	}
}

// HoldAfter stops a reply mid-stream until the test releases it, and tells
// the test when it got there: tests interrupt a model mid-stream without
// guessing at timing.
func TestHoldAfter(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Reply{Content: "one two three four", ChunkSize: 4, HoldAfter: 2})
	held := srv.Held()
	resp := postStream(t, testCtx(t), srv)
	defer resp.Body.Close()
	select {
	case <-held:
	case <-testCtx(t).Done():
		t.Fatal("the reply never reached its hold")
	}
	// What was sent before the hold is readable now; the rest waits.
	r := bufio.NewReader(resp.Body)
	var before strings.Builder
	for !strings.Contains(before.String(), `"content":"two "`) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading before the hold: %v (%q)", err, before.String())
		}
		before.WriteString(line)
	}
	if strings.Contains(before.String(), "thr") {
		t.Fatalf("content after the hold was sent: %s", before.String())
	}
	srv.Release()
	rest, _ := io.ReadAll(r)
	if !strings.Contains(string(rest), `"content":"thre"`) || !strings.Contains(string(rest), "data: [DONE]") {
		t.Errorf("after Release: %s", rest)
	}
}

// tryStream posts a streaming chat request to srv.
func tryStream(t *testing.T, ctx context.Context, srv *Server) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	return http.DefaultClient.Do(req)
}

// postStream is tryStream that fails the test on an error.
func postStream(t *testing.T, ctx context.Context, srv *Server) *http.Response {
	t.Helper()
	resp, err := tryStream(t, ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A reply's usage reaches the client as an endpoint sends it: the cached
// tokens in prompt_tokens_details, the cost as OpenRouter adds it.
func TestUsageCachedAndCost(t *testing.T) {
	t.Parallel()
	want := Usage{PromptTokens: 100, CompletionTokens: 7, TotalTokens: 107, CachedTokens: 60, Cost: 0.0042}
	srv := NewServer(t, Reply{Content: "hi", Usage: &want})
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ask(t, c, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}
