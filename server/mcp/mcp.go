// Package mcp is Zero's MCP face: `zero mcp` speaks the Model Context
// Protocol over stdio (or streamable HTTP on loopback) with mcp-go and turns
// the session manager into tools.
//
// One blocking tool call cannot be the only way to run the agent: some hosts
// cut a call off after about 60 s and many never send a progress token. So
// zero_start returns at once and zero_status long-polls the session's event
// log with a cursor; zero_run blocks with progress notifications for the
// hosts that handle them, and returns early rather than wait for an
// answer nobody can give. Approvals and the trust question go through
// elicitation when the client advertised it, and the client's roots
// through roots/list (all three as input requests from protocol 2026-07-28
// on); approvals through zero_approve otherwise. Sessions are resources
// (their transcript as markdown). zero_undo, zero_rewind, zero_fork and
// zero_compact work on a session's checkpoints (see checkpoints.go).
//
// Inside the package, "mcp" is mcp-go's wire package; importers name this
// one as they like (cmd/zero: mcpface).
package mcp

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Options configures the face. Manager is required; the zero value of every
// other field works.
type Options struct {
	Manager *server.Manager // required
	// Catalog lists the profiles offered (tool descriptions and enums); nil
	// accepts any profile name and lets the manager judge it.
	Catalog server.Catalog
	Version string
	Logger  *slog.Logger
	// DefaultWorkspace is used when a call names no workspace and the client
	// advertises no roots; "" makes such a call fail with a clear error.
	DefaultWorkspace string
	// Sandbox says where commands run, for the instructions the client's
	// model reads (for example "in a Docker container"); "" says "in a
	// sandbox".
	Sandbox string
	// Backend is the configured sandbox backend ("docker", "local", or
	// "auto"/"" when either may run): the tools offer only the profiles
	// written for it or for any (server.Choice.Backend).
	Backend string
	// RunBudget is how long a zero_run call may last before it returns the
	// run's state and cursor while the run goes on; 0 means DefaultRunBudget.
	RunBudget time.Duration
}

// DefaultRunBudget keeps a blocking zero_run under the roughly 60 s after
// which hosts such as Claude Desktop give up on a tool call.
const DefaultRunBudget = 50 * time.Second

const (
	// stdioWorkers is mcp-go's maximum: tools/call runs on this pool, and a
	// zero_run holds its worker for the whole run, so a small pool would
	// make parallel calls queue behind long runs.
	stdioWorkers = 100
	stdioQueue   = 1000
	// keepalive is how often zero_run sends progress with no news, well
	// under the 60 s after which some hosts give up on a call.
	keepalive = 10 * time.Second
	// stopGrace bounds how long the face waits for its runs to end.
	stopGrace = time.Second
)

// ServeStdio speaks MCP on in/out until in ends or ctx is done; then it
// cancels the runs of the sessions it drove and returns: nil on EOF, ctx's
// error when ctx ended it. Until the client sent initialize, every request
// but initialize and ping gets a "server not initialized" error (-32600).
// A line longer than MaxMessageSize is read past and answered with an
// error; the connection goes on.
//
// mcp-go keeps the stdio client session in a package variable, so one
// process serves at most one ServeStdio at a time.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	f, err := newFace(opts)
	if err != nil {
		return err
	}
	return f.serveStdio(ctx, in, out)
}

// ServeHTTP serves MCP's streamable HTTP transport at /mcp on ln until ctx
// is done. A request with an Origin header that is not a loopback address
// (a web page; see loopbackOrigin) gets 403 first; then every request needs
// "Authorization: Bearer <token>" (401 otherwise). A body longer than
// MaxMessageSize gets 413 and a JSON-RPC error. Only the protocol
// versions with the initialize handshake are served (up to 2025-11-25), and
// a request outside an initialized session gets a JSON-RPC error (see
// requireSession). The caller checks that ln is on loopback. It returns nil
// after ctx ends, having cancelled the runs of the sessions it drove.
func ServeHTTP(ctx context.Context, ln net.Listener, token string, opts Options) error {
	if token == "" {
		return ErrNoToken
	}
	f, err := newFace(opts)
	if err != nil {
		return err
	}
	return f.serveHTTP(ctx, ln, token)
}

func (f *face) serveStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	f.start(ctx)
	ss := mcpserver.NewStdioServer(f.srv)
	ss.SetErrorLogger(slogLogLogger(f.log))
	mcpserver.WithWorkerPoolSize(stdioWorkers)(ss)
	mcpserver.WithQueueSize(stdioQueue)(ss)
	// Listen returns once every request handler has returned; its ctx
	// ends zero_run's runs and zero_status's waits. It reads the client's
	// lines through stdioInput, which keeps lines over the limit from it.
	h := newHygiene()
	w := &lockedWriter{w: out, h: h}
	input := newStdioInput(in, f.maxMessage, w, f.log)
	input.h = h
	// mcp-go cancels the requests' contexts without a cause when its input
	// ends, before the runs they drive can be cancelled for the right one.
	// So Listen gets a context of ours that ends first, with the cause
	// (see endCause): the client left (its stdin ended, which stdioInput
	// reports before mcp-go reads it) or Zero stops (ctx). A
	// notifications/cancelled cancels its request's context alone: the
	// user's cancel.
	lctx, end := context.WithCancelCause(context.WithoutCancel(ctx))
	defer end(nil)
	stopWatch := context.AfterFunc(ctx, func() { end(loop.ErrShutdown) })
	defer stopWatch()
	readEnd := make(chan error, 1)
	input.ended = func(err error) {
		readEnd <- err
		end(loop.ErrDisconnected)
	}
	err := ss.Listen(lctx, input, w)
	// Listen returns when the client closed stdin (it left) or when Zero
	// stops (ctx): the runs in flight are cancelled for that cause.
	cause := endCause(lctx)
	if cause == loop.ErrCancelled { // Listen ended by itself (a write failed)
		cause = loop.ErrDisconnected
		if ctx.Err() != nil {
			cause = loop.ErrShutdown
		}
	}
	f.stop(cause)
	select {
	case rerr := <-readEnd:
		// The input ended: Listen may have seen that or its context
		// ending; the read's error says how the input ended.
		err = nil
		if !errors.Is(rerr, io.EOF) {
			err = rerr
		}
	default:
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	return ctx.Err()
}

// endCause is the cause to cancel a run with when ctx, a request's
// context, ended: loop.ErrDisconnected when the client went away,
// loop.ErrShutdown when Zero stops, loop.ErrCancelled (the user's) for any
// other, such as the client's notifications/cancelled.
func endCause(ctx context.Context) error {
	cause := context.Cause(ctx)
	for _, c := range []error{loop.ErrDisconnected, loop.ErrShutdown} {
		if errors.Is(cause, c) {
			return c
		}
	}
	return loop.ErrCancelled
}

func (f *face) serveHTTP(ctx context.Context, ln net.Listener, token string) error {
	f.start(ctx)
	// Requests get a context that ends with the server, so a zero_run in
	// flight does not hold up the shutdown; its cause says Zero stops (see
	// endCause).
	reqCtx, endRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer endRequests(loop.ErrShutdown)
	hs := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slogLogLogger(f.log),
	}
	sh := mcpserver.NewStreamableHTTPServer(f.srv,
		mcpserver.WithStreamableHTTPServer(hs),
		mcpserver.WithStateful(true),
		mcpserver.WithEndpointPath("/mcp"),
		mcpserver.WithStreamableHTTPLogger(f.log),
		mcpserver.WithHeartbeatInterval(25*time.Second),
	)
	mux := http.NewServeMux()
	mux.Handle("/mcp", connCause(f.limitBody(f.requireSession(f.hygienic(sh)))))
	hs.Handler = requireLoopbackOrigin(requireBearer(token, mux), func(origin string) {
		f.log.Warn("mcp http: refused a request from a web page", "origin", origin)
	})

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }() // owned: awaited below
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	endRequests(loop.ErrShutdown)
	f.stop(loop.ErrShutdown)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	sh.CloseSessions(sctx)
	if serr := hs.Shutdown(sctx); serr != nil {
		_ = hs.Close()
	}
	if err == nil {
		err = <-served
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("mcp http: %w", err)
	}
	return nil
}

// connCause gives a request a context that ends with its cause (see
// endCause): net/http ends a request's context without one when the
// client's connection closes under it, which is the client leaving
// (loop.ErrDisconnected), not its cancel; Zero's shutdown keeps its own.
func connCause(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rctx := r.Context()
		ctx, cancel := context.WithCancelCause(context.WithoutCancel(rctx))
		stop := context.AfterFunc(rctx, func() {
			cause := context.Cause(rctx)
			if !errors.Is(cause, loop.ErrShutdown) {
				cause = loop.ErrDisconnected
			}
			cancel(cause)
		})
		defer func() {
			stop()
			cancel(context.Canceled)
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// requireBearer answers 401 to any request without the token, comparing in
// constant time so the token cannot be guessed byte by byte.
func requireBearer(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zero"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// slogLogLogger adapts the injected logger for mcp-go and net/http, which
// take a *log.Logger (and would otherwise write to stderr on their own).
func slogLogLogger(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}

// face is the state shared by the tool handlers of one Serve call.
type face struct {
	opts Options
	mgr  *server.Manager
	log  *slog.Logger
	srv  *mcpserver.MCPServer

	keepalive  time.Duration // zero_run's quiet progress interval; tests shorten it
	runBudget  time.Duration // how long a zero_run call lasts at most
	maxMessage int64         // the longest message read (MaxMessageSize); tests lower it

	mu      sync.Mutex
	ctx     context.Context // the Serve call's; elicitations live under it
	cancel  context.CancelFunc
	closed  bool
	wg      sync.WaitGroup // watch and elicitation goroutines
	driven  map[string]*driven
	asking  map[string]context.CancelFunc // approval or question id → its elicitation (or its input request)
	running map[string]context.Context    // session → ctx of a zero_run in flight

	initialized sync.Map // mcp-go session id → true once it completed initialize
	hygiene     sessionHygiene
}

// driven is a session this face has worked on (a goroutine watches it for
// approvals): the client that last drove it, who is asked for them.
type driven struct {
	client mcpserver.ClientSession
	// modern: the client speaks 2026-07-28 or later, where a server sends
	// no requests; zero_run asks it for approvals in its result instead.
	modern bool
}

func newFace(opts Options) (*face, error) {
	if opts.Manager == nil {
		return nil, ErrNoManager
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	f := &face{
		opts: opts, mgr: opts.Manager, log: opts.Logger, keepalive: keepalive, maxMessage: MaxMessageSize,
		runBudget: cmp.Or(opts.RunBudget, DefaultRunBudget),
		driven:    map[string]*driven{}, asking: map[string]context.CancelFunc{}, running: map[string]context.Context{},
		hygiene: sessionHygiene{sessions: map[string]*hygiene{}},
	}
	f.srv = f.newMCPServer()
	return f, nil
}

func (f *face) start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
}

// stop cancels the runs of the sessions this face drove for cause (the
// client left, or Zero stops), ends its elicitations and waits (up to
// stopGrace) for the runs to end. Sessions stay in the manager: the caller
// decides whether to close them.
func (f *face) stop(cause error) {
	f.mu.Lock()
	f.closed = true
	f.cancel()
	var sessions []string
	for id := range f.driven {
		sessions = append(sessions, id)
	}
	f.driven = map[string]*driven{}
	f.mu.Unlock()
	f.wg.Wait()
	deadline := time.Now().Add(stopGrace)
	for _, id := range sessions {
		s, err := f.mgr.Get(id)
		if err != nil {
			continue
		}
		s.CancelWith(cause)
		for s.Running() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}
