// Package lsp is Zero's LSP-style face: JSON-RPC 2.0 with LSP's
// Content-Length framing on stdio, for editors that already speak the
// Language Server Protocol (VS Code's vscode-jsonrpc, Neovim, Emacs).
//
// The session is driven by custom requests: zero/newSession, zero/prompt
// (answers when the run ends), zero/cancel, zero/intervene, zero/approve,
// zero/sessions and zero/loadSession, and by workspace/executeCommand with
// zero.prompt, zero.cancel and zero.newSession. Every engine event of the
// sessions the connection created, prompted or loaded arrives as a
// zero/event notification (the server.Event object as params), in order. A
// question an MCP server asks during a run (question_requested) is
// answered with zero/answer, or put to the user with
// window/showMessageRequest when it fits buttons (see questions.go). A
// run is also a work-done progress ($/progress) when the client supports
// it; approvals are asked with window/showMessageRequest, and files the
// agent wrote are shown with window/showDocument.
//
// Choices the protocol leaves open:
//   - A zero/prompt cancelled with $/cancelRequest cancels the run and
//     answers with LSP's RequestCancelled error (-32800) once the run has
//     stopped; cancelled through zero/cancel or window/workDoneProgress/cancel
//     it answers normally with stopReason "cancelled".
//   - A dismissed showMessageRequest (null) denies the call; a client that
//     answers showMessageRequest with an error (it does not support it)
//     leaves the request pending for zero/approve {id, approve, always?},
//     which any client may use. initializationOptions {"approvals":"events"}
//     turns showMessageRequest off altogether.
//   - zero/sessions answers {sessions: [server.Info]}.
//   - zero/memories {workspace?, query?, area?, limit?} answers {memories:
//     [server.MemoryInfo]}: the newest memories of the workspace and the
//     user's, or those most relevant to query.
//   - zero/commands {sessionId?} answers {commands: [server.Command]}: the
//     saved commands of the session's workspace (or initialize's) and the
//     user's; a
//     zero/prompt whose message is "/name arguments" runs one (its text
//     expanded, the run narrowed to its allowed-tools).
//   - zero/prompt and zero/intervene take attachments: at most
//     loop.MaxInputImages pictures, each {name?, mimeType?, data} (base64,
//     at most vision.MaxSourceBytes decoded) or {path} (a file in the
//     session's workspace). A bad one fails the request with InvalidParams
//     naming it (attachments[i]) and why; nothing is sent then. Events name
//     pictures by sha256 (images); zero/image {sessionId, sha256} answers
//     {mimeType, data, width, height, name?}, for replays too.
//   - zero/checkpoints, zero/undo, zero/rewind, zero/fork and zero/compact
//     go back in a session (see checkpoints.go): a rewind that meets files
//     changed outside the agent fails with codeConflict (-32010), data
//     {conflicts, to}, having changed nothing; the client asks and sends
//     it again with conflicts "keep" or "overwrite".
//   - exit without shutdown makes Serve return ErrExitWithoutShutdown.
package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Options configures Serve. Manager is required; the zero value of every
// other field works.
type Options struct {
	Manager *server.Manager // required
	Catalog server.Catalog  // may be nil: then profiles and models are not checked up front
	Version string
	Logger  *slog.Logger
}

// stopGrace is how long Serve waits for the read loop after closing the
// input: an input that cannot be closed (a terminal) may keep it blocked.
const stopGrace = 500 * time.Millisecond

// Serve speaks the LSP-style session on in/out until the client sends exit,
// in ends, or ctx is done; then it cancels its runs and returns (nil after
// shutdown+exit or EOF) within about a second. When in is an io.Closer,
// Serve closes it so its reading goroutine ends too. Logs go to
// opts.Logger, never to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Manager == nil {
		panic("lsp: Options.Manager is required")
	}
	opts.Version = cmp.Or(opts.Version, "dev")
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	serveCtx := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	c := newConn(ctx, opts)
	st := newStream(in, out, opts.Logger)
	rc := jsonrpc2.NewConn(ctx, st, c, jsonrpc2.SetLogger(printfLogger{opts.Logger}))

	var err error
	select {
	case <-rc.DisconnectNotify():
	case <-c.exited:
		err = c.exitErr()
	case <-ctx.Done():
	}
	// The runs end for why the connection does: Zero stops (ctx ended),
	// or the client left (EOF, exit).
	cause := loop.ErrDisconnected
	if serveCtx.Err() != nil {
		cause = loop.ErrShutdown
	}
	c.stop(cause)
	cancel()
	_ = rc.Close()
	c.wg.Wait()
	if ended, rerr := st.waitReader(stopGrace); ended && err == nil && rerr != nil &&
		!errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) && !errors.Is(rerr, jsonrpc2.ErrClosed) &&
		!errors.Is(rerr, io.ErrClosedPipe) && c.wanted() {
		err = fmt.Errorf("lsp: read: %w", rerr)
	}
	return err
}

// printfLogger routes jsonrpc2's Printf logging to slog.
type printfLogger struct{ log *slog.Logger }

func (l printfLogger) Printf(format string, v ...any) {
	l.log.Debug(fmt.Sprintf(format, v...), "component", "jsonrpc2")
}

type lifecycle int

const (
	stateNew lifecycle = iota
	stateReady
	stateShutdown
)

// clientCaps is what the client said it can do at initialize.
type clientCaps struct {
	progress     bool // window.workDoneProgress
	showDocument bool // window.showDocument.support
	ask          bool // window/showMessageRequest for approvals
	openURL      bool // window.showDocument.support, for a page a question asks to open
}

// conn is one client connection: one LSP session, many Zero sessions.
type conn struct {
	ctx  context.Context // cancelled when Serve returns
	opts Options
	log  *slog.Logger
	wg   sync.WaitGroup // every goroutine conn starts

	exitOnce sync.Once
	exited   chan struct{}

	mu       sync.Mutex
	closing  bool // set by stop: no more goroutines
	rc       *jsonrpc2.Conn
	state    lifecycle
	exitBad  bool // exit came before shutdown
	roots    []string
	caps     clientCaps
	inflight map[jsonrpc2.ID]context.CancelFunc
	sessions map[string]*tracked
	tokens   map[string]*tracked           // progress token (%q) → session running under it
	asking   map[string]context.CancelFunc // approval id → its showMessageRequest
	// questioning: question id → its showMessageRequest (questions.go)
	questioning map[string]context.CancelFunc
}

func newConn(ctx context.Context, opts Options) *conn {
	return &conn{ctx: ctx, opts: opts, log: opts.Logger, exited: make(chan struct{}),
		inflight: map[jsonrpc2.ID]context.CancelFunc{}, sessions: map[string]*tracked{},
		tokens: map[string]*tracked{}, asking: map[string]context.CancelFunc{}, questioning: map[string]context.CancelFunc{}}
}

// spawn runs fn on a goroutine that Serve waits for, unless Serve is
// already stopping.
func (c *conn) spawn(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Go(fn)
	return true
}

func (c *conn) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exitBad {
		return ErrExitWithoutShutdown
	}
	return nil
}

// wanted reports whether the connection ended on its own (not by exit).
func (c *conn) wanted() bool {
	select {
	case <-c.exited:
		return false
	default:
		return c.ctx.Err() == nil
	}
}

// stop cancels the runs of this connection's sessions for cause (the
// client left, or Zero stops) and stops listening to them; no goroutine
// starts after it.
func (c *conn) stop(cause error) {
	c.mu.Lock()
	c.closing = true
	ts := make([]*tracked, 0, len(c.sessions))
	for _, t := range c.sessions {
		ts = append(ts, t)
	}
	c.mu.Unlock()
	for _, t := range ts {
		t.sess.CancelWith(cause)
	}
}

// cancelRuns cancels every run of this connection's sessions (shutdown).
func (c *conn) cancelRuns() {
	c.mu.Lock()
	ts := make([]*tracked, 0, len(c.sessions))
	for _, t := range c.sessions {
		ts = append(ts, t)
	}
	c.mu.Unlock()
	for _, t := range ts {
		t.sess.CancelWith(loop.ErrShutdown)
	}
}

// Handle implements jsonrpc2.Handler. It runs on the read loop, so it does
// the ordered part of each request here (checking params, starting a run,
// cancelling) and everything that waits on its own goroutine: a call to the
// editor from here would wait for a reply this loop is the one to read.
func (c *conn) Handle(_ context.Context, rc *jsonrpc2.Conn, r *jsonrpc2.Request) {
	if r.Notif {
		c.notification(r)
		return
	}
	params := json.RawMessage("null")
	if r.Params != nil {
		params = *r.Params
	}
	c.mu.Lock()
	st := c.state
	if c.rc == nil {
		c.rc = rc // the same for every call; NewConn has not returned before the first
	}
	c.mu.Unlock()
	var (
		cont continuation
		err  error
	)
	switch {
	case r.Method == "initialize":
		cont, err = c.initialize(params)
	case st == stateNew:
		err = fmt.Errorf("%s: %w", r.Method, ErrNotInitialized)
	case st == stateShutdown:
		err = fmt.Errorf("%s: %w", r.Method, ErrShutDown)
	case r.Method == "shutdown":
		c.mu.Lock()
		c.state = stateShutdown
		c.mu.Unlock()
		c.cancelRuns()
		cont = done(nil)
	default:
		m, ok := methods[r.Method]
		if !ok {
			err = fmt.Errorf("%w: %s", errMethodNotFound, r.Method)
			break
		}
		cont, err = m(c, rc, params)
	}
	if err != nil {
		c.reply(rc, r.ID, nil, err)
		return
	}
	if cont.now {
		c.reply(rc, r.ID, cont.result, nil)
		return
	}
	c.serveLater(rc, r.ID, cont.wait)
}

// serveLater runs a request's wait on its own goroutine, cancellable by
// $/cancelRequest, and answers when it is done.
func (c *conn) serveLater(rc *jsonrpc2.Conn, id jsonrpc2.ID, wait func(context.Context) (any, error)) {
	rctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		cancel()
		return
	}
	c.inflight[id] = cancel
	c.wg.Go(func() { // under mu with closing false: Serve waits for it
		defer func() {
			c.mu.Lock()
			delete(c.inflight, id)
			c.mu.Unlock()
			cancel()
		}()
		res, err := wait(rctx)
		if c.ctx.Err() != nil || errors.Is(err, errConnClosing) {
			return // Serve is returning: nobody reads the answer
		}
		c.reply(rc, id, res, err)
	})
}

// continuation is what a request does after its ordered part: either a
// result ready now, or a wait on its own goroutine.
type continuation struct {
	now    bool
	result any
	wait   func(ctx context.Context) (any, error)
}

func done(result any) continuation { return continuation{now: true, result: result} }

func later(wait func(ctx context.Context) (any, error)) continuation {
	return continuation{wait: wait}
}

func (c *conn) reply(rc *jsonrpc2.Conn, id jsonrpc2.ID, result any, err error) {
	var werr error
	if err != nil {
		werr = rc.ReplyWithError(c.ctx, id, rpcError(err))
	} else {
		werr = rc.Reply(c.ctx, id, result)
	}
	if werr != nil && !errors.Is(werr, jsonrpc2.ErrClosed) {
		c.log.Warn("reply not sent", "id", id.String(), "err", werr)
	}
}

// notification handles what the client tells without asking.
func (c *conn) notification(r *jsonrpc2.Request) {
	switch r.Method {
	case "exit":
		c.mu.Lock()
		c.exitBad = c.state != stateShutdown
		c.mu.Unlock()
		c.exitOnce.Do(func() { close(c.exited) })
	case "$/cancelRequest":
		var p struct {
			ID *jsonrpc2.ID `json:"id"`
		}
		if r.Params == nil || json.Unmarshal(*r.Params, &p) != nil || p.ID == nil {
			c.log.Debug("ignoring $/cancelRequest without an id")
			return
		}
		c.mu.Lock()
		cancel := c.inflight[*p.ID]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case "window/workDoneProgress/cancel":
		var p protocol.WorkDoneProgressCancelParams
		if r.Params == nil || json.Unmarshal(*r.Params, &p) != nil {
			return
		}
		c.mu.Lock()
		t := c.tokens[tokenKey(&p.Token)]
		c.mu.Unlock()
		if t != nil {
			t.sess.Cancel()
		}
	default:
		// initialized, $/setTrace, didChangeConfiguration and friends
		// need nothing from Zero; $/ ones may be ignored by definition.
		if len(r.Method) < 2 || r.Method[:2] != "$/" {
			c.log.Debug("ignoring notification", "method", r.Method)
		}
	}
}
