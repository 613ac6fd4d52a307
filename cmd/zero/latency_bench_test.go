package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server/acp"
	"github.com/zeroagent/zero/server/lsp"
	mcpface "github.com/zeroagent/zero/server/mcp"
)

var chunkToken = regexp.MustCompile(`k\d{5}`)

// stamps records when each chunk token was first seen.
type stamps struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (s *stamps) mark(text string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range chunkToken.FindAllString(text, -1) {
		if _, ok := s.seen[tok]; !ok {
			s.seen[tok] = at
		}
	}
}

// stampWriter is the face's stdout: it notes when each token leaves.
type stampWriter struct {
	st *stamps
	w  io.Writer
}

func (w stampWriter) Write(p []byte) (int, error) {
	w.st.mark(string(p), time.Now())
	return w.w.Write(p)
}

// BenchmarkChunkToNotification measures, in process, the time from a
// model chunk reaching the engine (as the OpenAI client hands it over) to
// the notification that carries it being written to the face's stdout.
// For ACP and the LSP-style session each iteration streams 200 reasoning
// chunks, 1 ms apart, each a thought notification. MCP sends no
// notification per chunk: zero_run reports each headline as progress, so
// there each iteration is 40 turns whose streamed reply carries a
// headline.
func BenchmarkChunkToNotification(b *testing.B) {
	const chunks = 200
	var reasoning strings.Builder
	for i := range chunks {
		fmt.Fprintf(&reasoning, "k%05d ", i)
	}
	thinking := []llmtest.Reply{{Reasoning: reasoning.String(), ChunkSize: 7, Delay: llmtest.Duration(time.Millisecond),
		Content: `{"thoughts":["done"],"headline":"Answer","tool_name":"response","tool_args":{"text":"done"}}`}}
	// The replies stream in 16-byte chunks 1 ms apart like the thoughts
	// above; each headline and its closing quote are padded into one chunk,
	// so the chunk that carries the token is the one that completes the
	// headline.
	var headlines []llmtest.Reply
	for i := range 40 {
		pad := ""
		for len(`{"thoughts":["next`+pad+`"],"headline":"`)%16 > 9 {
			pad += " "
		}
		headlines = append(headlines, llmtest.Reply{ChunkSize: 16, Delay: llmtest.Duration(time.Millisecond), Content: fmt.Sprintf(
			`{"thoughts":["next%s"],"headline":"k%05d","tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"true %d"}}`, pad, i, i)})
	}
	headlines = append(headlines, llmtest.Reply{Content: `{"thoughts":["done"],"headline":"Answer","tool_name":"response","tool_args":{"text":"done"}}`})
	faces := []struct {
		name    string
		replies []llmtest.Reply
		serve   func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error
		drive   func(b *testing.B, in io.Writer, out *bufio.Reader, ws string)
	}{
		{"acp", thinking, func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return acp.Serve(ctx, in, out, acp.Options{Manager: env.Manager, Catalog: env.Catalog})
		}, driveACP},
		{"lsp", thinking, func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return lsp.Serve(ctx, in, out, lsp.Options{Manager: env.Manager, Catalog: env.Catalog})
		}, driveLSP},
		{"mcp", headlines, func(ctx context.Context, env *servertest.Env, in io.Reader, out io.Writer) error {
			return mcpface.ServeStdio(ctx, in, out, mcpface.Options{Manager: env.Manager, Catalog: env.Catalog})
		}, driveMCP},
	}
	for _, f := range faces {
		b.Run(f.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				st := &stamps{seen: map[string]time.Time{}}
				arrived := &stamps{seen: map[string]time.Time{}}
				env := servertest.New(b, servertest.Options{
					Replies: f.replies,
					OnChunk: func(d llm.Delta) { arrived.mark(d.Text, time.Now()) },
				})
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- f.serve(ctx, env, inR, stampWriter{st, outW}) }()
				f.drive(b, inW, bufio.NewReader(outR), env.Workspace)
				inW.Close()
				cancel()
				go io.Copy(io.Discard, outR)
				<-done
				outW.Close()
				for tok, t0 := range arrived.seen {
					if t1, ok := st.seen[tok]; ok {
						lat = append(lat, t1.Sub(t0))
					} else {
						b.Fatalf("chunk %s never reached stdout", tok)
					}
				}
			}
			slices.Sort(lat)
			b.ReportMetric(percentile(lat, 0.5)*1000, "p50-µs")
			b.ReportMetric(percentile(lat, 0.99)*1000, "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Microsecond), "max-µs")
		})
	}
}

// framing is how a face delimits its messages: one JSON object per line,
// or LSP's Content-Length headers.
type framing struct{ lsp bool }

var (
	lines  = framing{}
	frames = framing{lsp: true}
)

func (f framing) frame(m []byte) []byte {
	if f.lsp {
		return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(m))), m...)
	}
	return append(m, '\n')
}

func (f framing) read(r *bufio.Reader) ([]byte, error) {
	if !f.lsp {
		return r.ReadBytes('\n')
	}
	n := 0
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
		if l == "" {
			break
		}
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// rpc writes one JSON-RPC message (a notification when id is 0) and,
// for a request, reads until the answer to it.
func rpc(b *testing.B, in io.Writer, out *bufio.Reader, f framing, id int, method string, params any) json.RawMessage {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != 0 {
		msg["id"] = id
	}
	raw, _ := json.Marshal(msg)
	if _, err := in.Write(f.frame(raw)); err != nil {
		b.Fatalf("%s: %v", method, err)
	}
	for id != 0 {
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		raw, err := f.read(out)
		if err != nil {
			b.Fatalf("%s: the face closed its output: %v", method, err)
		}
		if json.Unmarshal(raw, &m) != nil || m.ID == nil || *m.ID != id || m.Method != "" {
			continue
		}
		if m.Error != nil {
			b.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
	return nil
}

func driveACP(b *testing.B, in io.Writer, out *bufio.Reader, ws string) {
	rpc(b, in, out, lines, 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(rpc(b, in, out, lines, 2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s)
	rpc(b, in, out, lines, 3, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "think"}}})
}

func driveLSP(b *testing.B, in io.Writer, out *bufio.Reader, ws string) {
	rpc(b, in, out, frames, 1, "initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}})
	rpc(b, in, out, frames, 0, "initialized", map[string]any{})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(rpc(b, in, out, frames, 2, "zero/newSession", map[string]any{}), &s)
	rpc(b, in, out, frames, 3, "zero/prompt", map[string]any{"sessionId": s.SessionID, "message": "think"})
}

func driveMCP(b *testing.B, in io.Writer, out *bufio.Reader, ws string) {
	rpc(b, in, out, lines, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "1"}})
	rpc(b, in, out, lines, 0, "notifications/initialized", map[string]any{})
	res := rpc(b, in, out, lines, 2, "tools/call", map[string]any{"name": "zero_run",
		"arguments": map[string]any{"message": "go", "workspace": ws}, "_meta": map[string]any{"progressToken": "bench"}})
	if !strings.Contains(string(res), `"response"`) {
		b.Fatalf("zero_run = %s", res)
	}
}
