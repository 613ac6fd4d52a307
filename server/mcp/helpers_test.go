package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

const waitLong = time.Minute // a guard against a hang, never reached when things work

// The model's replies, shared by the face tests.
var (
	toolReply = servertest.ToolReply
	answer    = servertest.Answer
	command   = servertest.Command
)

var askCommands = servertest.AskCommands()

// notes collects a client's notifications.
type notes struct {
	mu  sync.Mutex
	got []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) { n.mu.Lock(); n.got = append(n.got, x); n.mu.Unlock() }

func (n *notes) find(method string) []map[string]any {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []map[string]any
	for _, x := range n.got {
		if x.Method == method {
			out = append(out, x.Params.AdditionalFields)
		}
	}
	return out
}

type clientOpts struct {
	elicit client.ElicitationHandler
}

type stdioRig struct {
	env   *servertest.Env
	c     *client.Client
	notes *notes
	done  chan error
	in    *io.PipeWriter // client → server; closing it is EOF
}

// startStdio serves an env over io.Pipe and connects mcp-go's client to it.
// Not parallel: mcp-go's stdio session is a package variable.
func startStdio(t *testing.T, env *servertest.Env, co clientOpts) *stdioRig {
	t.Helper()
	return startStdioFace(t, env, co, nil)
}

func startStdioFace(t *testing.T, env *servertest.Env, co clientOpts, tweak func(*face)) *stdioRig {
	t.Helper()
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	f, err := newFace(Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(f)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { // owned: the cleanup waits for done
		err := f.serveStdio(ctx, sr, sw)
		sw.Close()
		done <- err
		close(done)
	}()
	tr := transport.NewIO(cr, cw, io.NopCloser(strings.NewReader("")))
	var opts []client.ClientOption
	opts = append(opts, client.WithLegacyProtocolOnly())
	if co.elicit != nil {
		opts = append(opts, client.WithElicitationHandler(co.elicit))
	}
	c := client.NewClient(tr, opts...)
	r := &stdioRig{env: env, c: c, notes: &notes{}, done: done, in: cw}
	c.OnNotification(r.notes.add)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "1"},
	}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() {
		cw.Close()
		<-done // a face that never returns after EOF is a hang: go test's -timeout names it
		cancel()
		c.Close()
	})
	return r
}

// call calls a tool and returns its structured content decoded into a map.
// It waits for the answer however long a loaded machine takes (a 6 MiB
// message under the race detector takes tens of seconds on two busy
// cores): a deadline here would decide the test by the machine's speed,
// and a face that never answers is a hang that go test's -timeout reports
// with every goroutine's stack.
func call(t *testing.T, c *client.Client, name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return structured(t, res), res
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.StructuredContent == nil {
		return nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func mustOK(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
}

// poll calls zero_status until cond holds for its answer, collecting the
// events, and returns the last answer with all events seen.
func poll(t *testing.T, c *client.Client, session string, since float64, cond func(st map[string]any) bool) (map[string]any, []map[string]any) {
	t.Helper()
	var evs []map[string]any
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		st, res := call(t, c, "zero_status", map[string]any{"session": session, "since": since, "wait": 2})
		mustOK(t, res)
		for _, e := range st["events"].([]any) {
			evs = append(evs, e.(map[string]any))
		}
		since = st["cursor"].(float64)
		if cond(st) {
			return st, evs
		}
	}
	t.Fatalf("zero_status never met the condition; events %v", evs)
	return nil, nil
}

func finished(st map[string]any) bool { return st["running"] == false && st["result"] != nil }

func types(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return out
}

func index(evs []map[string]any, pred func(map[string]any) bool) int {
	for i, e := range evs {
		if pred(e) {
			return i
		}
	}
	return -1
}

func newEnv(t *testing.T, policy *server.Policy, replies ...llmtest.Reply) *servertest.Env {
	return servertest.New(t, servertest.Options{Replies: replies, Policy: policy})
}

// serveRaw serves env over pipes for a test that writes raw JSON-RPC
// lines: it returns the client's end to write to and the server's lines.
func serveRaw(t *testing.T, env *servertest.Env) (io.WriteCloser, chan string) {
	t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(t.Context(), sr, sw, Options{Manager: env.Manager}); sw.Close() }()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("ServeStdio did not return after EOF")
		}
	})
	return cw, rawLines(cr)
}

// rawLines reads the server's output lines.
func rawLines(r io.Reader) chan string {
	ch := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
		close(ch)
	}()
	return ch
}

// newRiskyEnv is the environment of the approval tests: the model asks to
// run a command that needs the user's approval, answers "ran:
// approved-42" when it ran and "not allowed" when the user refused.
func newRiskyEnv(t *testing.T) *servertest.Env {
	t.Helper()
	return newEnv(t, askCommands,
		llmtest.Reply{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
		llmtest.Reply{Match: "approved-42", Content: answer("ran: approved-42")},
		llmtest.Reply{Match: "refused by", Content: answer("not allowed")})
}

// listTools returns the tools c is offered.
func listTools(t *testing.T, c *client.Client) []mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return tools.Tools
}

// startModern serves env over pipes to mcp-go's client speaking the
// stateless 2026-07-28 protocol, with opts (its handlers: elicitation,
// roots). The client does the input-request round trips by itself.
func startModern(t *testing.T, env *servertest.Env, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, version := startClient(t, env, opts...)
	if !mcp.IsModernProtocol(version) {
		t.Fatalf("negotiated %s, want the stateless protocol", version)
	}
	return c
}

// startClient serves env over pipes to mcp-go's client with opts and
// returns it with the protocol version it negotiated.
func startClient(t *testing.T, env *servertest.Env, opts ...client.ClientOption) (*client.Client, string) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(t.Context(), sr, sw, Options{Manager: env.Manager, Catalog: env.Catalog})
		sw.Close()
	}()
	c := client.NewClient(transport.NewIO(cr, cw, io.NopCloser(strings.NewReader(""))), opts...)
	t.Cleanup(func() { cw.Close(); <-done; c.Close() })
	if err := c.Start(t.Context()); err != nil { // its ctx serves the server's requests
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, res.ProtocolVersion
}

// rootsLister is a client's roots handler: it offers dirs as file://
// roots and counts the times it was asked.
type rootsLister struct {
	dirs  []string
	mu    sync.Mutex
	asked int
}

func (r *rootsLister) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	res := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for _, d := range r.dirs {
		res.Roots = append(res.Roots, mcp.Root{URI: "file://" + d, Name: "root"})
	}
	return res, nil
}

func (r *rootsLister) times() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// rawCall sends one JSON-RPC line on a raw connection (see serveRaw) and
// returns the answer to it.
func rawCall(t *testing.T, cw io.Writer, lines chan string, line string) rpcReply {
	t.Helper()
	if _, err := io.WriteString(cw, line+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("server output ended")
		}
		return decodeReply(t, l)
	case <-time.After(waitLong):
		t.Fatal("no answer")
	}
	return rpcReply{}
}
