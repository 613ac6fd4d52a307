package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/internal/servertest"
)

// The limits tests move tens of MiB through pipes and sockets; they run
// one at a time (not parallel) so their memory does not add up and the
// memory test measures only itself.

// testLimit is the limit the tests lower the face's to.
const testLimit = 1 << 20

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool

// rawStdio drives a stdio face line by line.
type rawStdio struct {
	t     *testing.T
	w     *io.PipeWriter // client → server
	lines chan string
	log   *proctest.Buffer
}

// startRawStdio serves env on stdio with the face's limit set to max and
// initializes the session (with the roots capability, which the client
// answers by hand).
func startRawStdio(t *testing.T, env *servertest.Env, max int64) *rawStdio {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	logs := &proctest.Buffer{}
	f, err := newFace(Options{Manager: env.Manager, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.maxMessage = max
	// Not t.Context(): it ends before the cleanup, which checks that EOF
	// ends ServeStdio with nil.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { // owned: the cleanup waits for done
		done <- f.serveStdio(ctx, sr, sw)
		sw.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		// No deadline (see call): a face that never returns is a hang.
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	})
	r := &rawStdio{t: t, w: cw, lines: rawLines(cr), log: logs}
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.next(); m["id"] != "init" || m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.w, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// sendLong writes head, n bytes of filler, tail and a newline without
// holding them in memory.
func (r *rawStdio) sendLong(head string, n int, tail string) {
	r.t.Helper()
	if _, err := io.Copy(r.w, longReader(head, n, tail+"\n")); err != nil {
		r.t.Fatal(err)
	}
}

// next is the next line from the server, decoded. It waits as long as the
// server takes (see call).
func (r *rawStdio) next() map[string]any {
	r.t.Helper()
	l, ok := <-r.lines
	if !ok {
		r.t.Fatal("server output ended")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		r.t.Fatalf("bad line %q: %v", l, err)
	}
	return m
}

// ping checks that the connection still works: a ping gets its answer
// (and is the next line out, so nothing was answered in between).
func (r *rawStdio) ping(id int) {
	r.t.Helper()
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	if m := r.next(); m["id"] != float64(id) || m["result"] == nil {
		r.t.Errorf("ping %d = %v", id, m)
	}
}

// longReader is head, n bytes of 'a' and tail, made as they are read.
func longReader(head string, n int, tail string) io.Reader {
	return io.MultiReader(strings.NewReader(head), &filler{n: n}, strings.NewReader(tail))
}

type filler struct{ n int }

func (f *filler) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), f.n)
	for i := range k {
		p[i] = 'a'
	}
	f.n -= k
	return k, nil
}

func rpcError(m map[string]any) (code float64, msg string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	msg, _ = e["message"].(string)
	return code, msg
}

// A line over the limit on stdio never reaches mcp-go: a request gets an
// "Invalid request" error naming the limit for its id (wherever the id
// stands), a notification no answer, a line with no usable id a parse
// error for a null id, and the connection goes on.
func TestMCPStdioLineOverLimit(t *testing.T) {
	env := newEnv(t, nil)
	r := startRawStdio(t, env, testLimit)
	start := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zero_start","arguments":{"workspace":` + fmt.Sprintf("%q", env.Workspace) + `,"message":"`

	// A request, id first.
	r.sendLong(start, 3<<20, `"}}}`)
	m := r.next()
	if code, msg := rpcError(m); m["id"] != float64(7) || code != mcp.INVALID_REQUEST ||
		!strings.Contains(msg, "message too large") || !strings.Contains(msg, "over the 1 MiB limit") {
		t.Errorf("request over the limit: %v", m)
	}
	if len(env.Manager.List()) != 0 {
		t.Errorf("the request over the limit started a session: %v", env.Manager.List())
	}
	r.ping(8)

	// A request, id last (a string).
	r.sendLong(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"zero_start","arguments":{"message":"`, 2<<20, `"}},"id":"late"}`)
	m = r.next()
	if code, msg := rpcError(m); m["id"] != "late" || code != mcp.INVALID_REQUEST || !strings.Contains(msg, "message too large") {
		t.Errorf("request over the limit, id last: %v", m)
	}

	// A notification: no answer (the ping's answer is the next line).
	r.sendLong(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"`, 2<<20, `"}}`)
	r.ping(9)

	// Not JSON, and a request cut short: a parse error for a null id.
	for _, head := range []string{"not json ", `{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"`} {
		r.sendLong(head, 2<<20, "")
		m = r.next()
		if code, msg := rpcError(m); m["id"] != nil || code != mcp.PARSE_ERROR || !strings.Contains(msg, "message too large") {
			t.Errorf("%q… over the limit: %v", head, m)
		}
	}
	// A line just under the limit still works.
	r.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"zero_sessions","arguments":{},"_meta":{"pad":"` + strings.Repeat("p", testLimit-200) + `"}}}`)
	if m := r.next(); m["id"] != float64(11) || m["result"] == nil {
		t.Errorf("a line under the limit: %v", trimAny(m))
	}
	r.ping(12)
	if !strings.Contains(r.log.String(), "refused a message too long to read") {
		t.Errorf("nothing logged: %s", r.log.String())
	}
}

// An answer of the client's over the limit fails the request of zero's it
// answers (here roots/list) instead of leaving it waiting.
func TestMCPStdioResponseOverLimit(t *testing.T) {
	env := newEnv(t, nil)
	r := startRawStdio(t, env, testLimit)
	// No workspace: the face asks the client for its roots.
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"hi"}}}`)
	ask := r.next()
	if ask["method"] != "roots/list" {
		t.Fatalf("the face did not ask for roots: %v", ask)
	}
	id, _ := json.Marshal(ask["id"])
	r.sendLong(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"roots":[{"uri":"file:///tmp","name":"`, 2<<20, `"}]}}`)
	m := r.next()
	if m["id"] != float64(1) || !strings.Contains(fmt.Sprint(m["result"]), "workspace") {
		t.Errorf("zero_start = %v", m)
	}
	// The answer over the limit failed the request, which did not wait out
	// its timeout: the log says why it failed.
	if logs := r.log.String(); !strings.Contains(logs, "roots/list failed") || !strings.Contains(logs, "message too large") || strings.Contains(logs, "deadline exceeded") {
		t.Errorf("log: %s", logs)
	}
	r.ping(2)
}

// A large message under the default limit (20 MiB of arguments) reaches
// the tool whole, on both transports. Under the race detector, which
// makes mcp-go's many passes of encoding/json over it take half a minute,
// it is 6 MiB.
func TestMCPLargeMessageAccepted(t *testing.T) {
	env := newEnv(t, nil)
	size := 20 << 20
	if raceEnabled {
		size = 6 << 20
	}
	msg := strings.Repeat("large message ", size/14)

	r := startStdio(t, env, clientOpts{})
	_, res := call(t, r.c, "zero_start", map[string]any{"message": msg, "workspace": env.Workspace})
	checkLargeStart(t, "stdio", msg, res)
	_, res = call(t, r.c, "zero_sessions", map[string]any{})
	mustOK(t, res)

	url, token, _ := startHTTPFace(t, env, MaxMessageSize)
	h := httpSession(t, url, token)
	// Of unknown length (chunked), so the face reads it up to the limit.
	args, _ := json.Marshal(map[string]any{"message": msg, "workspace": env.Workspace})
	body := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"zero_start","arguments":`),
		bytes.NewReader(args), strings.NewReader(`}}`))
	status, out := postReader(t, url, h, body)
	if status != http.StatusOK {
		t.Fatalf("http: status %d: %s", status, trimString(out))
	}
	var reply struct {
		Result mcp.CallToolResult `json:"result"`
	}
	_ = json.Unmarshal([]byte(out), &reply)
	checkLargeStart(t, "http", msg, &reply.Result)
}

// checkLargeStart checks the answer to a zero_start with a large message:
// the run started (the engine then refuses the message as too long for
// the model, a matter of the run).
func checkLargeStart(t *testing.T, name, msg string, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError || !strings.Contains(text(res), "Started run") {
		t.Errorf("%s: zero_start with %d MiB = %s", name, len(msg)>>20, trimString(text(res)))
	}
}

// startHTTPFace serves env over HTTP with the face's limit set to max.
func startHTTPFace(t *testing.T, env *servertest.Env, max int64) (url, token string, logs *proctest.Buffer) {
	t.Helper()
	logs = &proctest.Buffer{}
	f, err := newFace(Options{Manager: env.Manager, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	f.maxMessage = max
	return serveHTTPInTest(t, f.serveHTTP), "secret-token", logs
}

// httpSession initializes a session and returns the headers of a request
// in it.
func httpSession(t *testing.T, url, token string) map[string]string {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + token}
	status, body, h := postH(t, url, auth, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if status != http.StatusOK || decodeReply(t, body).Error != nil || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	session := map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": h.Get("Mcp-Session-Id"), mcp.HeaderProtocolVersion: "2025-11-25"}
	post(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return session
}

// postReader posts body (its length unknown unless it is a
// *strings.Reader or a *bytes.Reader) and returns the status and the
// JSON-RPC answer.
func postReader(t *testing.T, url string, headers map[string]string, body io.Reader) (int, string) {
	t.Helper()
	status, s, _ := postBody(t, url, headers, body)
	return status, s
}

// A request body over the limit gets 413 and a JSON-RPC error for its id,
// whether its length is announced or not and whether or not it is in a
// session; the server goes on serving.
func TestMCPHTTPBodyOverLimit(t *testing.T) {
	env := newEnv(t, nil)
	url, token, logs := startHTTPFace(t, env, testLimit)
	session := httpSession(t, url, token)
	auth := map[string]string{"Authorization": "Bearer " + token}
	head := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"zero_start","arguments":{"workspace":%q,"message":"`, id, env.Workspace)
	}
	const size = 3 << 20
	tests := []struct {
		name    string
		headers map[string]string
		body    func(id int) io.Reader
	}{
		{"known length", session, func(id int) io.Reader {
			return strings.NewReader(head(id) + strings.Repeat("a", size) + `"}}}`)
		}},
		{"chunked", session, func(id int) io.Reader { return longReader(head(id), size, `"}}}`) }},
		{"no session", auth, func(id int) io.Reader { return longReader(head(id), size, `"}}}`) }},
		{"no session, known length", auth, func(id int) io.Reader {
			return strings.NewReader(head(id) + strings.Repeat("a", size) + `"}}}`)
		}},
	}
	for i, tt := range tests {
		id := 10 + i
		status, body := postReader(t, url, tt.headers, tt.body(id))
		r := decodeReply(t, body)
		if status != http.StatusRequestEntityTooLarge || r.Error == nil || r.Error.Code != mcp.INVALID_REQUEST ||
			r.ID != float64(id) || !strings.Contains(r.Error.Message, "message too large") || !strings.Contains(r.Error.Message, "1 MiB") {
			t.Errorf("%s: %d %s, want 413 and an error for id %d", tt.name, status, body, id)
		}
	}
	// Nothing to find an id in: a parse error for a null id.
	status, body := postReader(t, url, session, longReader("", size, ""))
	if r := decodeReply(t, body); status != http.StatusRequestEntityTooLarge || r.Error == nil || r.Error.Code != mcp.PARSE_ERROR || r.ID != nil {
		t.Errorf("not JSON: %d %s", status, body)
	}
	if len(env.Manager.List()) != 0 {
		t.Errorf("a body over the limit started a session: %v", env.Manager.List())
	}
	// Under the limit, in the same session, all is well.
	status, body = post(t, url, session, `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"zero_sessions","arguments":{},"_meta":{"pad":"`+strings.Repeat("p", testLimit-200)+`"}}}`)
	if r := decodeReply(t, body); status != http.StatusOK || r.Error != nil || !strings.Contains(string(r.Result), "sessions") {
		t.Errorf("after the bodies over the limit: %d %s", status, trimString(body))
	}
	if !strings.Contains(logs.String(), "request body too large") {
		t.Errorf("nothing logged: %s", logs.String())
	}
}

// With the real limit, a line far over it streams past: the face holds
// at most about the limit meanwhile (never the whole line), keeps nothing
// of it afterwards, answers it and goes on.
func TestMCPStdioOverLimitMemory(t *testing.T) {
	env := newEnv(t, nil)
	r := startRawStdio(t, env, MaxMessageSize)
	r.ping(1)

	const size = 96 << 20
	base := heapNow()
	peak := watchPeak()
	r.sendLong(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"`, size, `"}}}`)
	m := r.next()
	top := peak()
	if code, msg := rpcError(m); m["id"] != float64(42) || code != mcp.INVALID_REQUEST || !strings.Contains(msg, "over the 64 MiB limit") {
		t.Errorf("a 96 MiB line: %v", m)
	}
	r.ping(2)
	after := heapNow()
	t.Logf("heap: %d MiB before, %d MiB at most while reading, %d MiB after", base>>20, top>>20, after>>20)
	if top > base && top-base > MaxMessageSize+16<<20 {
		t.Errorf("the heap grew by %d MiB while a %d MiB line streamed past, want at most the limit (%d MiB) and a little", (top-base)>>20, size>>20, MaxMessageSize>>20)
	}
	if after > base && after-base > 40<<20 {
		t.Errorf("the heap kept %d MiB after a line over the limit", (after-base)>>20)
	}
}

// heapNow is the heap in use after a collection.
func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// watchPeak samples the heap's objects until the returned func is called,
// which returns the most seen.
func watchPeak() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() { // owned: the returned func waits for it
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-stop:
				done <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-done
	}
}

func trimString(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

func trimAny(m map[string]any) string { return trimString(fmt.Sprint(m)) }
