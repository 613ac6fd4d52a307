package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
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

func newEnv(t *testing.T, policy *server.Policy, replies ...llmtest.Reply) *servertest.Env {
	t.Helper()
	return servertest.New(t, servertest.Options{Replies: replies, Policy: policy})
}

// note is one notification the client got.
type note struct {
	method string
	params json.RawMessage
}

// clientOpts says what the test client can do.
type clientOpts struct {
	noProgress, noShowDocument bool
	initOptions                map[string]any // initializationOptions
	// answer is the showMessageRequest result (nil: dismissed); the default
	// is "Allow".
	answer func(protocol.ShowMessageRequestParams) any
	// failAsk makes the client refuse showMessageRequest (MethodNotFound).
	failAsk bool
}

// client is a test editor on the other end of Serve.
type client struct {
	t      *testing.T
	rc     *jsonrpc2.Conn
	raw    net.Conn
	served chan error
	opts   clientOpts

	mu      sync.Mutex
	notes   []note
	changed chan struct{}
	asked   []protocol.ShowMessageRequestParams
	created []string
	shown   []json.RawMessage
}

func (c *client) Handle(ctx context.Context, rc *jsonrpc2.Conn, r *jsonrpc2.Request) {
	var params json.RawMessage
	if r.Params != nil {
		params = *r.Params
	}
	if r.Notif {
		c.mu.Lock()
		c.notes = append(c.notes, note{r.Method, params})
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		return
	}
	// Answer from another goroutine, as editors do: over net.Pipe a reply
	// written on this read loop would wait for the server's read loop, which
	// may itself be writing to us.
	go c.answer(ctx, rc, r, params)
}

func (c *client) answer(ctx context.Context, rc *jsonrpc2.Conn, r *jsonrpc2.Request, params json.RawMessage) {
	switch r.Method {
	case "window/workDoneProgress/create":
		var p struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(params, &p)
		c.mu.Lock()
		c.created = append(c.created, p.Token)
		c.mu.Unlock()
		_ = rc.Reply(ctx, r.ID, nil)
	case "window/showMessageRequest":
		if c.opts.failAsk {
			_ = rc.ReplyWithError(ctx, r.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no"})
			return
		}
		var p protocol.ShowMessageRequestParams
		_ = json.Unmarshal(params, &p)
		c.mu.Lock()
		c.asked = append(c.asked, p)
		c.mu.Unlock()
		var res any = protocol.MessageActionItem{Title: "Allow"}
		if c.opts.answer != nil {
			res = c.opts.answer(p)
		}
		_ = rc.Reply(ctx, r.ID, res)
	case "window/showDocument":
		c.mu.Lock()
		c.shown = append(c.shown, params)
		c.mu.Unlock()
		_ = rc.Reply(ctx, r.ID, map[string]bool{"success": true})
	default:
		_ = rc.ReplyWithError(ctx, r.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: r.Method})
	}
}

// start runs Serve over net.Pipe and connects a client to it.
func start(t *testing.T, env *servertest.Env, opts clientOpts) *client {
	t.Helper()
	a, b := net.Pipe()
	c := &client{t: t, raw: b, served: make(chan error, 1), opts: opts, changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.served <- Serve(ctx, a, a, Options{Manager: env.Manager, Catalog: env.Catalog, Version: "test",
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	}()
	c.rc = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), c,
		jsonrpc2.SetLogger(testLogger{t}))
	t.Cleanup(func() {
		_ = c.rc.Close()
		select {
		case <-c.served:
		case <-time.After(time.Minute):
			t.Errorf("Serve did not return after the client left")
		}
		cancel()
	})
	return c
}

// testWriter sends logs to t.Log until the test ends.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	defer func() { _ = recover() }() // a log line after the test ended
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type testLogger struct{ t *testing.T }

func (l testLogger) Printf(format string, v ...any) {
	defer func() { _ = recover() }()
	l.t.Logf(format, v...)
}

// initialize sends initialize with the workspace as rootUri.
func (c *client) initialize(workspace string) map[string]any {
	c.t.Helper()
	window := map[string]any{"workDoneProgress": !c.opts.noProgress}
	if !c.opts.noShowDocument {
		window["showDocument"] = map[string]any{"support": true}
	}
	var res map[string]any
	params := map[string]any{"processId": nil, "rootUri": string(uri.File(workspace)),
		"capabilities": map[string]any{"window": window}}
	if c.opts.initOptions != nil {
		params["initializationOptions"] = c.opts.initOptions
	}
	c.call("initialize", params, &res)
	return res
}

// call sends a request and fails the test on an error.
func (c *client) call(method string, params, result any) {
	c.t.Helper()
	if err := c.try(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) try(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	return c.rc.Call(ctx, method, params, result)
}

// rpcErr calls and wants a JSON-RPC error back.
func (c *client) rpcErr(method string, params any) *jsonrpc2.Error {
	c.t.Helper()
	err := c.try(method, params, nil)
	var e *jsonrpc2.Error
	if !errors.As(err, &e) {
		c.t.Fatalf("%s: want a JSON-RPC error, got %v", method, err)
	}
	return e
}

func (c *client) newSession() string {
	c.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.call("zero/newSession", map[string]any{}, &res)
	if res.SessionID == "" {
		c.t.Fatal("zero/newSession: no sessionId")
	}
	return res.SessionID
}

// promptAsync sends zero/prompt and returns where its answer will come.
type promptOutcome struct {
	res PromptResult
	err error
}

func (c *client) promptAsync(id string, params map[string]any) <-chan promptOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	out := make(chan promptOutcome, 1)
	w, err := c.rc.DispatchCall(ctx, "zero/prompt", params, jsonrpc2.PickID(jsonrpc2.ID{Str: id, IsString: true}))
	if err != nil {
		cancel()
		out <- promptOutcome{err: err}
		return out
	}
	go func() {
		defer cancel()
		var o promptOutcome
		o.err = w.Wait(ctx, &o.res)
		out <- o
	}()
	return out
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLong):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// snapshot copies what the client got so far.
func (c *client) snapshot() []note {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.notes)
}

// waitFor waits until cond holds for the notifications so far.
func (c *client) waitFor(what string, cond func([]note) bool) []note {
	c.t.Helper()
	deadline := time.After(waitLong)
	for {
		c.mu.Lock()
		ns, ch := slices.Clone(c.notes), c.changed
		c.mu.Unlock()
		if cond(ns) {
			return ns
		}
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s; got %d notifications: %s", what, len(ns), summary(ns))
		}
	}
}

func summary(ns []note) string {
	var b strings.Builder
	for _, n := range ns {
		if n.method == "zero/event" {
			var e server.Event
			_ = json.Unmarshal(n.params, &e)
			fmt.Fprintf(&b, "%s:%s ", e.Session, e.Type)
		} else {
			fmt.Fprintf(&b, "%s ", n.method)
		}
	}
	return b.String()
}

// events are the zero/event notifications of session (all sessions for "").
func events(ns []note, session string) []server.Event {
	var out []server.Event
	for _, n := range ns {
		if n.method != "zero/event" {
			continue
		}
		var e server.Event
		if err := json.Unmarshal(n.params, &e); err != nil {
			panic(err)
		}
		if session == "" || e.Session == session {
			out = append(out, e)
		}
	}
	return out
}

func hasEvent(session string, pred func(server.Event) bool) func([]note) bool {
	return func(ns []note) bool { return slices.ContainsFunc(events(ns, session), pred) }
}

func ofType(ty loop.EventType) func(server.Event) bool {
	return func(e server.Event) bool { return e.Type == ty }
}

func index(evs []server.Event, pred func(server.Event) bool) int { return slices.IndexFunc(evs, pred) }

// progress is one $/progress notification.
type progress struct {
	Token string         `json:"token"`
	Value map[string]any `json:"value"`
}

func progresses(ns []note) []progress {
	var out []progress
	for _, n := range ns {
		if n.method == "$/progress" {
			var p progress
			if err := json.Unmarshal(n.params, &p); err != nil {
				panic(err)
			}
			out = append(out, p)
		}
	}
	return out
}

// rawFrames reads Content-Length frames from r.
func rawFrames(r io.Reader) <-chan map[string]any {
	out := make(chan map[string]any, 64)
	go func() {
		defer close(out)
		st := newStream(r, io.Discard, slog.New(slog.DiscardHandler))
		for {
			var m map[string]any
			if err := st.ReadObject(&m); err != nil {
				return
			}
			out <- m
		}
	}()
	return out
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
