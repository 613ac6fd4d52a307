// Package mcpclient lets the agent use MCP servers' tools, as Agent Zero's
// MCP handler does: each server's tools are tools of the agent named
// server.tool, described to the model with their input schema, and called
// through the usual tool path (approvals, events, extensions, output
// capping). A Pool keeps one connection per server for a session, started
// when the tools are first needed, all servers in parallel, started again
// after a failure, and closed with the session. Servers speak stdio (a
// command, started and ended by the pool) or streamable HTTP (a URL),
// through mcp-go's client; what they send is bounded as it is read
// (MaxMessage), then as it is kept (MaxResult and the others). The
// pictures of a result (image content, image resources) reach the model
// as the tool result's images, loaded by package vision, at most
// loop.MaxToolImages of them. A server's questions during a call reach
// the user through Options.Ask (elicit.go).
package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mcpc "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/mcpconf"
)

// Server is one MCP server (see mcpconf.Server): its Env is added to
// Options.BaseEnv, its Tools filter what the agent gets.
type Server = mcpconf.Server

// Options configures a Pool.
type Options struct {
	InitTimeout time.Duration // starting and listing one server; default 10 s (Agent Zero's)
	CallTimeout time.Duration // one tool call; default 120 s (Agent Zero's)
	BaseEnv     []string      // the environment of stdio servers, before their own Env
	Logger      *slog.Logger
	// Version is Zero's, given to the servers as the client's.
	Version string
	// HTTPTransport, when set, wraps the round tripper of a URL server's
	// requests (base bounds what the server sends): OAuth goes there, so
	// that the protocol never sees a token.
	HTTPTransport func(s Server, base http.RoundTripper) http.RoundTripper
	// Ask, when set, puts a server's question (elicitation: a form, or a
	// page to open) to the user and returns the answer, which the pool
	// checks and completes (ask.Question.Complete) before the server gets
	// it; the call that caused it waits, its timeout paused, and ctx ends
	// with that call (the run cancelled). ask.ErrNoOne declines. Nil
	// declares no elicitation capability, and a server that asks anyway
	// is told the method is not supported.
	Ask func(ctx context.Context, q ask.Question) (ask.Answer, error)
	// Roots, when set, are the session's workspace folders (absolute
	// paths), offered to the servers as their roots (roots/list, file://
	// URIs); a server that asked is told when they change.
	Roots func() []string
}

// Bounds on what a server sends: its tools go into every system prompt,
// its results into the history, and a server may be careless or hostile.
const (
	MaxToolsPerServer = 200
	MaxDescription    = 4 << 10  // bytes of a tool's description
	MaxSchema         = 16 << 10 // bytes of a tool's input schema; a larger one is any object
	MaxResult         = 4 << 20  // bytes of a result's text
)

// Tool is a tool of a server as the agent sees it.
type Tool struct {
	Server      string          // the server's name
	Name        string          // the tool's name on the server
	Description string          // as the server describes it
	InputSchema json.RawMessage // the JSON schema of its arguments: the server's, or any object
	// SchemaProblem says why InputSchema is any object and not the
	// server's (too large, not a JSON Schema of an object...); "" when it
	// is the server's.
	SchemaProblem string
	// ReadOnly is the server's claim (readOnlyHint) that the tool changes
	// nothing: plan mode offers it; approvals do not believe it.
	ReadOnly bool
}

// FullName is the tool's name for the agent: server.tool.
func (t Tool) FullName() string { return t.Server + "." + t.Name }

// Pool holds the connections of one session to its MCP servers.
type Pool struct {
	opts    Options
	servers []Server

	mu     sync.Mutex
	conns  map[string]*conn
	closed bool

	// progress routes notifications/progress to the call that sent the
	// token (CallWith), by token.
	progress sync.Map // string -> func(string)
	tokens   atomic.Uint64

	// life ends when the pool closes: the questions asked outside a call
	// end with it.
	life context.Context
	end  context.CancelFunc
	// clock counts the calls' timeouts (a test's own in tests).
	clock clock
	// requestDone, when set (by a test), is called once mcp-go's own
	// handling of a server's question over HTTP has ended.
	requestDone func()
}

// conn is one server's connection, or the error starting it.
type conn struct {
	srv    Server
	client *mcpc.Client // nil until started, or after it failed
	tools  []Tool
	err    error     // the last start's error
	failed time.Time // when it last failed to start, for a pause before trying again
	start  sync.Mutex

	mu         sync.Mutex
	calls      map[*call]struct{} // the calls in flight
	questions  int                // the server's questions open
	rootsAsked bool               // the server asked for the roots...
	rootsSent  string             // ...and was given these (rootsKey)
}

// track adds a call in flight, untrack removes it.
func (c *conn) track(cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[*call]struct{}{}
	}
	c.calls[cl] = struct{}{}
}

func (c *conn) untrack(cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.calls, cl)
}

// inflight are the calls in flight.
func (c *conn) inflight() []*call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*call, 0, len(c.calls))
	for cl := range c.calls {
		out = append(out, cl)
	}
	return out
}

// ValidName reports whether name can name a server: letters, digits, _ and -.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Normalize is mcpconf.Normalize: a configured name as the pool names it.
func Normalize(name string) string { return mcpconf.Normalize(name) }

// NewPool returns a pool over servers (their names normalized; a server
// without a command or URL, or whose name repeats another's, is left out
// with an error). Nothing starts until Tools or Call.
func NewPool(servers []Server, o Options) (*Pool, []error) {
	o.InitTimeout = cmp.Or(o.InitTimeout, 10*time.Second)
	o.CallTimeout = cmp.Or(o.CallTimeout, 120*time.Second)
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	p := &Pool{opts: o, conns: map[string]*conn{}, clock: realClock{}}
	p.life, p.end = context.WithCancel(context.Background())
	var errs []error
	for _, s := range servers {
		s.Name = Normalize(s.Name)
		switch {
		case !validName.MatchString(s.Name):
			errs = append(errs, fmt.Errorf("mcp server %q: a name needs letters or digits", s.Name))
		case p.conns[s.Name] != nil:
			errs = append(errs, fmt.Errorf("mcp server %q is configured twice; the first is used", s.Name))
		case (s.Command == "") == (s.URL == ""):
			errs = append(errs, fmt.Errorf("mcp server %q needs either a command (stdio) or a url (streamable HTTP)", s.Name))
		default:
			p.servers = append(p.servers, s)
			p.conns[s.Name] = &conn{srv: s}
		}
	}
	return p, errs
}

// Servers are the pool's servers.
func (p *Pool) Servers() []Server { return slices.Clone(p.servers) }

// ErrClosed is returned by a closed Pool.
var ErrClosed = errors.New("mcp: the session's servers are closed")

// List returns the tools of every server, starting those not started yet,
// in parallel, and the errors of those that could not start (their tools
// are left out). Started servers answer from what they listed.
func (p *Pool) List(ctx context.Context) ([]Tool, []error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, []error{ErrClosed}
	}
	conns := make([]*conn, 0, len(p.servers))
	for _, s := range p.servers {
		conns = append(conns, p.conns[s.Name])
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { _, _ = p.ensure(ctx, c) })
	}
	wg.Wait()
	var tools []Tool
	var errs []error
	for _, c := range conns {
		c.start.Lock()
		if c.client != nil {
			tools = append(tools, c.tools...)
		} else if c.err != nil {
			errs = append(errs, c.err)
		}
		c.start.Unlock()
	}
	return tools, errs
}

// retryPause is how long a server that failed to start is left alone
// before the next List tries it again (a Call always tries).
const retryPause = 30 * time.Second

// ensure starts c unless it runs, returning its client.
func (p *Pool) ensure(ctx context.Context, c *conn) (*mcpc.Client, error) {
	return p.ensureRetry(ctx, c, false)
}

func (p *Pool) ensureRetry(ctx context.Context, c *conn, always bool) (*mcpc.Client, error) {
	c.start.Lock()
	defer c.start.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	if !always && c.err != nil && time.Since(c.failed) < retryPause {
		return nil, c.err
	}
	cl, tools, err := p.connect(ctx, c)
	if r := refusal(err); r != nil {
		err = r // a login needed: what to do, not how mcp-go wrapped it
	}
	if err != nil {
		c.err, c.failed = fmt.Errorf("mcp server %s: %w", c.srv.Name, err), time.Now()
		p.opts.Logger.Warn("mcp server did not start", "server", c.srv.Name, "err", err)
		return nil, c.err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		cl.Close()
		return nil, ErrClosed
	}
	c.client, c.tools, c.err = cl, tools, nil
	c.mu.Lock()
	c.rootsAsked = false // a new connection asks anew
	c.mu.Unlock()
	cl.OnConnectionLost(func(err error) { p.drop(c, cl, err) })
	p.opts.Logger.Info("mcp server started", "server", c.srv.Name, "tools", len(tools))
	return cl, nil
}

// drop forgets a connection that failed, so the next use starts it again.
func (p *Pool) drop(c *conn, cl *mcpc.Client, why error) {
	c.start.Lock()
	defer c.start.Unlock()
	if c.client != cl {
		return
	}
	c.client = nil
	cl.Close()
	p.opts.Logger.Warn("mcp server connection lost; it starts again on the next call", "server", c.srv.Name, "err", why)
}

// connect starts and initializes a server and lists its tools.
func (p *Pool) connect(ctx context.Context, c *conn) (*mcpc.Client, []Tool, error) {
	s := c.srv
	ctx, cancel := context.WithTimeout(ctx, p.opts.InitTimeout)
	defer cancel()
	// The server's questions: the raw schemas are kept only when someone
	// can be asked.
	var sc *schemas
	if p.opts.Ask != nil {
		sc = &schemas{}
	}
	wrap := func(next transport.RequestHandler) transport.RequestHandler { return p.serverRequests(sc, next) }
	var t transport.Interface
	var err error
	if s.Command != "" {
		t, err = startStdio(s, append(slices.Clone(p.opts.BaseEnv), s.EnvList()...), p.opts.Logger.With("mcp_server", s.Name), sc, wrap)
	} else {
		var h *httpConn
		// The server's stream outside calls is opened when it may send
		// requests: a capability to answer them was declared.
		h, err = newHTTP(s, p.opts.Logger.With("mcp_server", s.Name), p.opts.HTTPTransport, p.opts.Ask != nil || p.opts.Roots != nil)
		if h != nil {
			h.schemas, h.wrap, h.detach, h.requestDone = sc, wrap, p.opts.Ask != nil, p.requestDone
			t = h
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start: %w", err)
	}
	var opts []mcpc.ClientOption
	if p.opts.Ask != nil {
		// Both modes: a form, and a page to open (ask.Question.URL).
		opts = append(opts, mcpc.WithElicitationHandler(elicitor{p, c}), mcpc.WithClientCapabilities(mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}}))
	}
	if p.opts.Roots != nil {
		opts = append(opts, mcpc.WithRootsHandler(rootLister{p, c}))
	}
	cl := mcpc.NewClient(t, opts...)
	cl.OnNotification(p.onProgress)
	// Not ctx: the connection outlives the call that started it (the
	// transport keeps the context for the server's requests).
	if err := cl.Start(context.Background()); err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("start: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "zero", Version: cmp.Or(p.opts.Version, "dev")}
	// The newest version with the initialize handshake: asking for the
	// stateless 2026-07-28 makes mcp-go probe server/discover first, and a
	// server that answers any method it does not know with {} would then
	// never be initialized (nor its streams resumed).
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := cl.Initialize(ctx, init); err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("initialize: %w%s", err, stderrTail(cl))
	}
	var tools []Tool
	var cursor mcp.Cursor
	for page := 0; page < 100; page++ {
		req := mcp.ListToolsRequest{}
		req.Params.Cursor = cursor
		res, err := cl.ListTools(ctx, req)
		if err != nil {
			cl.Close()
			return nil, nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range res.Tools {
			if !allowed(s, t.Name) || !validToolName.MatchString(t.Name) || len(tools) == MaxToolsPerServer {
				continue
			}
			schema, _ := json.Marshal(t.InputSchema)
			if len(t.RawInputSchema) > 0 {
				schema = t.RawInputSchema
			}
			schema, problem := checkSchema(schema)
			if problem != "" {
				p.opts.Logger.Warn("mcp tool's input schema replaced by any object", "server", s.Name, "tool", t.Name, "reason", problem)
			}
			ro := t.Annotations.ReadOnlyHint
			tools = append(tools, Tool{Server: s.Name, Name: t.Name, Description: cut.Clip(t.Description, MaxDescription),
				InputSchema: schema, SchemaProblem: problem, ReadOnly: ro != nil && *ro})
		}
		if res.NextCursor == "" || res.NextCursor == cursor || len(tools) == MaxToolsPerServer {
			break
		}
		cursor = res.NextCursor
	}
	return cl, tools, nil
}

// validToolName is what a server's tool may be called to be a tool of the
// agent: no ':' (it would read as a method), no space or control character.
var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// stderrTail is the end of what a stdio server printed, for an error
// (once it is closed, all it printed).
func stderrTail(cl *mcpc.Client) string {
	c, ok := cl.GetTransport().(*stdioConn)
	if !ok {
		return ""
	}
	if s := strings.TrimSpace(c.stderrText()); s != "" {
		return fmt.Sprintf(" (the server printed: %q)", s)
	}
	return ""
}

// allowed applies a server's tool filter.
func allowed(s Server, tool string) bool {
	match := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool {
			ok, _ := path.Match(p, tool)
			return ok || p == tool
		})
	}
	if len(s.Tools.Allow) > 0 && !match(s.Tools.Allow) {
		return false
	}
	return !match(s.Tools.Deny)
}

// Result is what a tool call returned.
type Result struct {
	Text    string
	IsError bool
	// Images are the pictures of the result, loaded by package vision: at
	// most loop.MaxToolImages.
	Images []llm.Image
}

// ErrMaybeRan is a call's error when the server stopped, or the
// connection broke, after the server may have received the call: Zero
// does not send it again (its side effects would happen twice), and the
// model is told it may or may not have run.
var ErrMaybeRan = errors.New("the server stopped during the call; it may or may not have run")

// Call calls a tool of a server, starting the server (again) if it does not
// run. A call is sent at most once: one that failed before it could reach
// the server (a connection found dead, a refused dial) is sent on a fresh
// start; one the server may have received and not answered is not
// (ErrMaybeRan, or its timeout), and the next call starts the server again.
// One whose answer ran past MaxMessage is not repeated either
// (ErrMessageTooLarge).
func (p *Pool) Call(ctx context.Context, server, tool string, args map[string]any) (Result, error) {
	return p.CallWith(ctx, server, tool, args, nil)
}

// CallWith is Call with progress: the call carries a progress token, and
// each notifications/progress the server sends for it is handed to
// progress as a line ("3/10 message"), in the order it came.
func (p *Pool) CallWith(ctx context.Context, server, tool string, args map[string]any, progress func(string)) (Result, error) {
	var token string
	if progress != nil {
		token = fmt.Sprintf("zero-%d", p.tokens.Add(1))
		p.progress.Store(token, progress)
		defer p.progress.Delete(token)
	}
	p.mu.Lock()
	c := p.conns[server]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return Result{}, ErrClosed
	}
	if c == nil {
		return Result{}, fmt.Errorf("mcp: no server %q", server)
	}
	for attempt := 0; ; attempt++ {
		cl, err := p.ensureRetry(ctx, c, true)
		if err != nil {
			return Result{}, err
		}
		p.tellRootsChanged(ctx, c, cl.RootListChanges)
		// The call's timeout pauses while the server asks the person a
		// question (see call).
		run, end := startCall(ctx, p.opts.CallTimeout, p.clock)
		c.track(run)
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		if token != "" {
			req.Params.Meta = &mcp.Meta{ProgressToken: mcp.ProgressToken(token)}
		}
		res, err := cl.CallTool(context.WithValue(run.ctx, callKey{}, run), req)
		timedOut := run.timedOut()
		c.untrack(run)
		end()
		if err == nil {
			return resultOf(ctx, server+"."+tool, res), nil
		}
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		switch {
		case errors.Is(err, ErrMessageTooLarge):
			// Refused as it arrived; a server that floods is started afresh.
			p.drop(c, cl, err)
			return Result{}, fmt.Errorf("mcp %s.%s: %w; the call was not repeated", server, tool, ErrMessageTooLarge)
		case refusal(err) != nil:
			// The server's authorization refused the call (a login or more
			// scopes needed): it never ran, and the connection is sound.
			// What refused says what to do; mcp-go's wrapping says nothing.
			return Result{}, fmt.Errorf("mcp %s.%s: %w", server, tool, refusal(err))
		case attempt == 0 && neverSent(err):
			p.drop(c, cl, err)
			continue
		case timedOut:
			return Result{}, fmt.Errorf("mcp %s.%s: no answer within %s; the call was not repeated: it may still run, or have run", server, tool, p.opts.CallTimeout)
		case broken(err):
			p.drop(c, cl, err)
			return Result{}, fmt.Errorf("mcp %s.%s: %w (%v); it was not sent again", server, tool, ErrMaybeRan, err)
		}
		return Result{}, fmt.Errorf("mcp %s.%s: %w", server, tool, err)
	}
}

// refusal is the error in err that says the request was refused before
// the server handled it (Options.HTTPTransport's errors, like an OAuth
// login that is needed, say so with Refused), or nil.
func refusal(err error) error {
	r, ok := errors.AsType[interface {
		error
		Refused() bool
	}](err)
	if !ok || !r.Refused() {
		return nil
	}
	return r
}

// errNotSent is a request's error when it was not written: the
// connection had ended before.
var errNotSent = errors.New("not sent: the connection had ended")

// onProgress hands a server's notifications/progress to the call whose
// token it names; any other notification, or an unknown token, is let go.
func (p *Pool) onProgress(n mcp.JSONRPCNotification) {
	if n.Method != "notifications/progress" {
		return
	}
	f := n.Params.AdditionalFields
	fn, ok := p.progress.Load(fmt.Sprint(f["progressToken"]))
	if !ok {
		return
	}
	line := ""
	if done, ok := f["progress"].(float64); ok {
		line = strconv.FormatFloat(done, 'f', -1, 64)
		if total, ok := f["total"].(float64); ok && total > 0 {
			line += "/" + strconv.FormatFloat(total, 'f', -1, 64)
		}
	}
	if msg, ok := f["message"].(string); ok && msg != "" {
		line = strings.TrimSpace(line + " " + cut.Clip(strings.Join(strings.Fields(msg), " "), 500))
	}
	if line != "" {
		fn.(func(string))(line)
	}
}

// neverSent tells a call that could not have reached the server: the
// connection was closed before it was written, writing it failed (a
// server that died does not read a line it never got whole), or the
// connection could not even be made.
func neverSent(err error) bool {
	if errors.Is(err, errNotSent) || errors.Is(err, os.ErrClosed) {
		return true
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return true
	}
	return strings.Contains(err.Error(), "failed to write request")
}

// broken tells a failed transport (the server died, the connection
// dropped) from an error the server answered.
func broken(err error) bool {
	if errors.Is(err, ErrMessageTooLarge) {
		return false
	}
	if _, ok := errors.AsType[*transport.Error](err); ok {
		return true
	}
	s := err.Error()
	for _, w := range []string{"EOF", "closed", "broken pipe", "connection reset", "transport", "file already closed", "process exited"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// resultOf renders a tool result's content as text for the model: text as
// it is, pictures (image content, embedded resources of an image type)
// loaded as Images with a line each (see pictures), the rest named by
// kind (audio is not given to the model). source names the pictures.
func resultOf(ctx context.Context, source string, res *mcp.CallToolResult) Result {
	pics := &pictures{ctx: ctx, source: source}
	var parts []string
	add := func(line string) {
		if line != "" {
			parts = append(parts, line)
		}
	}
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.ImageContent:
			add(pics.add(v.Data, v.MIMEType))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s]", clean(v.MIMEType)))
		case mcp.EmbeddedResource:
			add(resourceText(pics, v.Resource))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", v.URI))
		}
	}
	add(pics.tail())
	if len(parts) == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(raw))
	}
	return Result{Text: clipResult(strings.Join(parts, "\n")), IsError: res.IsError, Images: pics.images}
}

// clipResult is text within MaxResult, saying so when it was cut: what is
// kept (and spilled to a file when the history cannot hold it) is only the
// start of what the server sent.
func clipResult(text string) string {
	if len(text) <= MaxResult {
		return text
	}
	return cut.Head(text, MaxResult) + fmt.Sprintf("\n[the server sent %d bytes; only the first %d are kept]", len(text), MaxResult)
}

// resourceText is the text of a resource's contents: a text as it is, a
// blob of an image type loaded into pics (its line), another blob named.
func resourceText(pics *pictures, rc mcp.ResourceContents) string {
	switch r := rc.(type) {
	case mcp.TextResourceContents:
		return r.Text
	case mcp.BlobResourceContents:
		if isImageType(r.MIMEType) {
			return pics.add(r.Blob, r.MIMEType)
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes of base64]", cut.Clip(r.URI, 256), clean(r.MIMEType), len(r.Blob))
	}
	return "[resource]"
}

// Close closes every connection (stopping stdio servers).
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.end()
	conns := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.start.Lock()
		if c.client != nil {
			c.client.Close()
			c.client = nil
		}
		c.start.Unlock()
	}
	return nil
}
