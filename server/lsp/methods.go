package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// The commands workspace/executeCommand runs; arguments[0] is the params
// object of the zero/ request of the same name. They are named apart from
// an editor extension's own commands: VS Code's language client registers
// the commands a server advertises, and a clash (zero.cancel) stops it.
const (
	cmdPrompt     = "zero.lsp.prompt"
	cmdCancel     = "zero.lsp.cancel"
	cmdNewSession = "zero.lsp.newSession"
)

// method does a request's ordered part on the read loop and says what is
// left to do.
type method func(c *conn, rc *jsonrpc2.Conn, params json.RawMessage) (continuation, error)

// methods are the requests served besides initialize and shutdown.
var methods = map[string]method{
	"zero/newSession":          (*conn).newSession,
	"zero/prompt":              (*conn).prompt,
	"zero/cancel":              (*conn).cancel,
	"zero/intervene":           (*conn).intervene,
	"zero/approve":             (*conn).approve,
	"zero/answer":              (*conn).answer,
	"zero/sessions":            (*conn).sessionList,
	"zero/loadSession":         (*conn).loadSession,
	"zero/closeSession":        (*conn).closeSession,
	"zero/deleteSession":       (*conn).deleteSession,
	"zero/renameSession":       (*conn).renameSession,
	"zero/setMode":             (*conn).setMode,
	"zero/trust":               (*conn).trust,
	"zero/memories":            (*conn).memories,
	"zero/commands":            (*conn).commands,
	"zero/image":               (*conn).image,
	"zero/checkpoints":         (*conn).checkpoints,
	"zero/undo":                (*conn).undo,
	"zero/rewind":              (*conn).rewind,
	"zero/fork":                (*conn).fork,
	"zero/compact":             (*conn).compact,
	"workspace/executeCommand": (*conn).executeCommand,
}

// decode reads params into v (a pointer to a struct), naming the field in
// any complaint; null or absent params count as {}.
func decode(params json.RawMessage, v any, prefix string) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	trimmed := strings.TrimSpace(string(params))
	if !strings.HasPrefix(trimmed, "{") {
		return invalidParams(cmpField(prefix, "params"), "must be an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalidParams(prefix+te.Field, "must be %s", kindName(te.Type))
		}
		return invalidParams(cmpField(prefix, "params"), "%v", err)
	}
	return nil
}

func cmpField(prefix, field string) string {
	if prefix != "" {
		return strings.TrimSuffix(prefix, ".")
	}
	return field
}

// kindName says in JSON terms what a Go type wants.
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		if t == reflect.TypeFor[protocol.ProgressToken]() {
			return "a string or an integer"
		}
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of type " + t.String()
}

// initParams is the part of InitializeParams Zero reads. Only the window
// capabilities are decoded, so a newer client's capability shapes that this
// protocol version does not know cannot fail initialize.
type initParams struct {
	RootPath         string                     `json:"rootPath"`
	RootURI          string                     `json:"rootUri"`
	WorkspaceFolders []protocol.WorkspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		Window *protocol.WindowClientCapabilities `json:"window"`
	} `json:"capabilities"`
	// InitializationOptions may hold anything; Zero reads
	// {"approvals": "events"}, which turns window/showMessageRequest off
	// (the client answers approval_requested events with zero/approve), and
	// {"showDocuments": false}, which keeps the files a tool changed from
	// being opened with window/showDocument (a client that shows diffs
	// itself).
	InitializationOptions json.RawMessage `json:"initializationOptions"`
}

// zeroCapabilities is advertised under capabilities.experimental.zero.
type zeroCapabilities struct {
	Methods  []string        `json:"methods"`
	Profiles []server.Choice `json:"profiles,omitempty"`
	Models   []server.Choice `json:"models,omitempty"`
	Modes    []server.Mode   `json:"modes"`
}

func (c *conn) initialize(params json.RawMessage) (continuation, error) {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	if st != stateNew {
		return continuation{}, fmt.Errorf("initialize: %w: initialize was already sent", ErrShutDown)
	}
	var p initParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	var roots []string
	switch {
	case len(p.WorkspaceFolders) > 0:
		for i, f := range p.WorkspaceFolders {
			path, err := filePath(f.URI)
			if err != nil {
				return continuation{}, invalidParams(fmt.Sprintf("workspaceFolders[%d].uri", i), "%v", err)
			}
			roots = append(roots, path)
		}
	case p.RootURI != "":
		path, err := filePath(p.RootURI)
		if err != nil {
			return continuation{}, invalidParams("rootUri", "%v", err)
		}
		roots = []string{path}
	case p.RootPath != "":
		if !filepath.IsAbs(p.RootPath) {
			return continuation{}, invalidParams("rootPath", "must be an absolute path")
		}
		roots = []string{filepath.Clean(p.RootPath)}
	}
	var io struct {
		Approvals     string `json:"approvals"`
		ShowDocuments *bool  `json:"showDocuments"`
	}
	_ = json.Unmarshal(p.InitializationOptions, &io) // other shapes are someone else's options
	caps := clientCaps{ask: io.Approvals != "events"}
	if w := p.Capabilities.Window; w != nil {
		caps.progress = w.WorkDoneProgress
		caps.showDocument = w.ShowDocument != nil && w.ShowDocument.Support && (io.ShowDocuments == nil || *io.ShowDocuments)
		caps.openURL = w.ShowDocument != nil && w.ShowDocument.Support
	}
	c.mu.Lock()
	c.state, c.roots, c.caps = stateReady, roots, caps
	c.mu.Unlock()

	zc := zeroCapabilities{Methods: slices.Sorted(maps.Keys(methods)), Modes: server.Modes}
	if c.opts.Catalog != nil {
		zc.Profiles, zc.Models = c.opts.Catalog.Profiles(), c.opts.Catalog.Models()
	}
	return done(&protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			ExecuteCommandProvider: &protocol.ExecuteCommandOptions{Commands: []string{cmdPrompt, cmdCancel, cmdNewSession}},
			Experimental:           map[string]any{"zero": zc},
		},
		ServerInfo: &protocol.ServerInfo{Name: "zero", Version: c.opts.Version},
	}), nil
}

// filePath turns a file: URI into an absolute path.
func filePath(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("not a URI: %w", err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("not a file URI: %q", s)
	}
	p := filepath.FromSlash(u.Path)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("not an absolute path: %q", s)
	}
	return filepath.Clean(p), nil
}

// newSessionParams are zero/newSession's params.
type newSessionParams struct {
	WorkspaceFolders []protocol.WorkspaceFolder `json:"workspaceFolders"`
	Profile          string                     `json:"profile"`
	Model            string                     `json:"model"`
	Mode             string                     `json:"mode"` // "" or "default", "plan"
}

// newSessionResult is zero/newSession's result.
type newSessionResult struct {
	SessionID string `json:"sessionId"`
}

func (c *conn) newSession(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	return c.newSessionWith(params, "")
}

func (c *conn) newSessionWith(params json.RawMessage, prefix string) (continuation, error) {
	var p newSessionParams
	if err := decode(params, &p, prefix); err != nil {
		return continuation{}, err
	}
	var roots []string
	for i, f := range p.WorkspaceFolders {
		path, err := filePath(f.URI)
		if err != nil {
			return continuation{}, invalidParams(fmt.Sprintf("%sworkspaceFolders[%d].uri", prefix, i), "%v", err)
		}
		roots = append(roots, path)
	}
	if len(roots) == 0 {
		c.mu.Lock()
		roots = slices.Clone(c.roots)
		c.mu.Unlock()
	}
	if len(roots) == 0 {
		return continuation{}, invalidParams(prefix+"workspaceFolders", "required: initialize gave no workspace")
	}
	if cat := c.opts.Catalog; cat != nil {
		if p.Profile != "" && !hasChoice(cat.Profiles(), p.Profile) {
			return continuation{}, invalidParams(prefix+"profile", "unknown profile %q", p.Profile)
		}
		if p.Model != "" && !hasChoice(cat.Models(), p.Model) {
			return continuation{}, invalidParams(prefix+"model", "unknown model %q", p.Model)
		}
	}
	if !server.ValidMode(p.Mode) {
		return continuation{}, invalidParams(prefix+"mode", "unknown mode %q (the modes are default and plan)", p.Mode)
	}
	spec := server.SessionSpec{Roots: roots, Profile: p.Profile, Model: p.Model, Mode: p.Mode}
	return later(func(ctx context.Context) (any, error) {
		sess, err := c.opts.Manager.Create(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
		// Creating the session may have logged events (sandbox warnings)
		// before anyone listened: send them before the answer.
		rp := &replay{done: make(chan int, 1)}
		t, ok := c.track(sess, rp)
		if !ok {
			return nil, errConnClosing
		}
		select {
		case <-rp.done:
		case <-c.ctx.Done():
			return nil, errConnClosing
		}
		c.askTrust(t)
		return newSessionResult{SessionID: sess.ID()}, nil
	}), nil
}

func hasChoice(cs []server.Choice, id string) bool {
	return slices.ContainsFunc(cs, func(c server.Choice) bool { return c.ID == id })
}

// sessionParams name a session.
type sessionParams struct {
	SessionID *string `json:"sessionId"`
}

// session finds the session named in p.
func (c *conn) session(id *string, prefix string) (*server.Session, error) {
	if id == nil || *id == "" {
		return nil, invalidParams(prefix+"sessionId", "required")
	}
	sess, err := c.opts.Manager.Get(*id)
	if errors.Is(err, server.ErrHeld) {
		return nil, fmt.Errorf("sessionId: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("sessionId: %w %q", ErrUnknownSession, *id)
	}
	return sess, nil
}

// promptParams are zero/prompt's (and zero/intervene's) params: the
// message's text and the pictures attached to it (at least one of them).
type promptParams struct {
	protocol.WorkDoneProgressParams
	SessionID   *string            `json:"sessionId"`
	Message     *string            `json:"message"`
	Attachments []attachmentParams `json:"attachments"`
}

// userInput checks a prompt's message and attachments and makes the user
// message of them (see input).
func (p *promptParams) userInput(sess *server.Session, prefix string) (loop.Input, error) {
	var text string
	if p.Message != nil {
		text = *p.Message
	}
	if text == "" && len(p.Attachments) == 0 {
		return loop.Input{}, invalidParams(prefix+"message", "required (or attachments)")
	}
	return input(text, p.Attachments, sess.Spec().Roots, prefix)
}

// PromptResult is zero/prompt's result.
type PromptResult struct {
	// StopReason is "response", "cancelled", "error" or "intervened".
	StopReason string `json:"stopReason"`
	Response   string `json:"response,omitempty"`
	Error      string `json:"error,omitempty"`
	// Run numbers the session's runs from 1 (for "intervened", the run
	// that took the message).
	Run int `json:"run,omitempty"`
	// Usage is what the run's model calls used (run_ended's).
	Usage *server.Usage `json:"usage,omitempty"`
}

func (c *conn) prompt(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	return c.promptWith(params, "", nil)
}

func (c *conn) promptWith(params json.RawMessage, prefix string, token *protocol.ProgressToken) (continuation, error) {
	var p promptParams
	if err := decode(params, &p, prefix); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, prefix)
	if err != nil {
		return continuation{}, err
	}
	in, err := p.userInput(sess, prefix)
	if err != nil {
		return continuation{}, err
	}
	if p.WorkDoneToken != nil {
		token = p.WorkDoneToken
	}
	t, ok := c.track(sess, nil)
	if !ok {
		return continuation{}, errConnClosing
	}
	// The waiter goes into the session's queue before the run starts, so
	// the drain meets it before the run's run_started.
	// A saved command's run starts with its expanded text; a message with
	// pictures is for the agent, never a command.
	msg, send := in.Text, func() (int, bool, error) { return sess.SendInput(in) }
	if name, args, ok := server.CommandCall(msg); ok && len(in.Images) == 0 {
		if e, found := sess.ExpandCommand(name, args); found {
			msg = e.Text
			send = func() (int, bool, error) {
				n, err := sess.SendExpansion(name, e)
				return n, false, err
			}
		}
	}
	w := &waiter{msg: msg, token: token, done: make(chan PromptResult, 1)}
	t.push(qitem{w: w})
	run, intervened, err := send()
	if err != nil || intervened {
		w.void.Store(true)
		if err != nil {
			return continuation{}, fmt.Errorf("prompt: %w", err)
		}
		return done(PromptResult{StopReason: server.StopIntervened, Run: run}), nil
	}
	return later(func(ctx context.Context) (any, error) {
		select {
		case res := <-w.done:
			return withRun(res, run), nil
		case <-ctx.Done():
		}
		if c.ctx.Err() != nil {
			return nil, errConnClosing
		}
		// $/cancelRequest: stop the run, then say so once it stopped.
		select {
		case res := <-w.done:
			return withRun(res, run), nil
		default:
			sess.Cancel()
		}
		select {
		case res := <-w.done:
			if res.StopReason == loop.StopCancelled {
				return nil, fmt.Errorf("zero/prompt: %w", errRequestCancelled)
			}
			return withRun(res, run), nil
		case <-c.ctx.Done():
			return nil, errConnClosing
		}
	}), nil
}

// commandsResult is zero/commands' result.
type commandsResult struct {
	Commands []server.Command `json:"commands"`
}

// commands lists the saved commands of a session's workspace (without
// sessionId, of initialize's): a
// zero/prompt whose message is "/name arguments" runs one.
func (c *conn) commands(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p sessionParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	var list []server.Command
	if p.SessionID == nil { // before the first session: the workspace's
		list = c.opts.Manager.Commands(c.roots)
	} else {
		sess, err := c.session(p.SessionID, "")
		if err != nil {
			return continuation{}, err
		}
		list = sess.Commands()
	}
	if list == nil {
		list = []server.Command{}
	}
	return done(commandsResult{Commands: list}), nil
}

func withRun(r PromptResult, run int) PromptResult {
	r.Run = run
	return r
}

func (c *conn) cancel(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	return c.cancelWith(params, "")
}

func (c *conn) cancelWith(params json.RawMessage, prefix string) (continuation, error) {
	var p sessionParams
	if err := decode(params, &p, prefix); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, prefix)
	if err != nil {
		return continuation{}, err
	}
	sess.Cancel()
	return done(nil), nil
}

func (c *conn) intervene(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p promptParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	in, err := p.userInput(sess, "")
	if err != nil {
		return continuation{}, err
	}
	if err := sess.InterveneInput(in); err != nil {
		return continuation{}, fmt.Errorf("zero/intervene: %w", err)
	}
	return done(nil), nil
}

// approveParams are zero/approve's params.
type approveParams struct {
	ID      *string `json:"id"`
	Approve *bool   `json:"approve"`
	Always  bool    `json:"always"`
	Reason  string  `json:"reason"`
}

func (c *conn) approve(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p approveParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.ID == nil || *p.ID == "" {
		return continuation{}, invalidParams("id", "required")
	}
	if p.Approve == nil {
		return continuation{}, invalidParams("approve", "required")
	}
	br := c.opts.Manager.Approvals()
	if br == nil {
		return continuation{}, fmt.Errorf("zero/approve: %w: no approval broker", server.ErrUnsupported)
	}
	var err error
	if *p.Approve {
		err = br.Approve(*p.ID, p.Always)
	} else {
		err = br.Deny(*p.ID, cmp.Or(p.Reason, "refused by the user"))
	}
	if errors.Is(err, server.ErrNotFound) {
		return continuation{}, invalidParams("id", "no pending approval %q", *p.ID)
	}
	if err != nil {
		return continuation{}, fmt.Errorf("zero/approve: %w", err)
	}
	return done(nil), nil
}

// sessionsResult is zero/sessions' result.
type sessionsResult struct {
	Sessions []server.Info `json:"sessions"`
}

// sessionsParams chooses which stored sessions zero/sessions lists besides
// the live ones: the default workspace's, another workspace's, or all.
type sessionsParams struct {
	Workspace string `json:"workspace,omitempty"`
	All       bool   `json:"all,omitempty"`
}

func (c *conn) sessionList(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p sessionsParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if err := cleanWorkspace(&p.Workspace); err != nil {
		return continuation{}, err
	}
	list := c.opts.Manager.ListWith(server.ListOptions{Workspace: p.Workspace, All: p.All})
	if list == nil {
		list = []server.Info{}
	}
	return done(sessionsResult{Sessions: list}), nil
}

// loadSessionResult is zero/loadSession's result, sent after the replay.
type loadSessionResult struct {
	SessionID string `json:"sessionId"`
	Events    int    `json:"events"`
}

func (c *conn) loadSession(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p sessionParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	rp := &replay{done: make(chan int, 1)}
	if _, ok := c.track(sess, rp); !ok {
		return continuation{}, errConnClosing
	}
	return later(func(ctx context.Context) (any, error) {
		select {
		case n := <-rp.done:
			return loadSessionResult{SessionID: sess.ID(), Events: n}, nil
		case <-ctx.Done():
			if c.ctx.Err() != nil {
				return nil, errConnClosing
			}
			return nil, fmt.Errorf("zero/loadSession: %w", errRequestCancelled)
		}
	}), nil
}

// letGo reads the sessionId of zero/closeSession or zero/deleteSession and
// stops following that session on this connection.
func (c *conn) letGo(params json.RawMessage) (string, error) {
	var p sessionParams
	if err := decode(params, &p, ""); err != nil {
		return "", err
	}
	if p.SessionID == nil || *p.SessionID == "" {
		return "", invalidParams("sessionId", "required")
	}
	c.untrack(*p.SessionID)
	return *p.SessionID, nil
}

// closeSession stops following a session and closes it in this process
// (it stays stored): another process, the terminal say, may then open it.
func (c *conn) closeSession(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	id, err := c.letGo(params)
	if err != nil {
		return continuation{}, err
	}
	if err := c.opts.Manager.Close(id); err != nil && !errors.Is(err, server.ErrNotFound) {
		return continuation{}, fmt.Errorf("zero/closeSession: %w", err)
	}
	return done(nil), nil
}

// deleteSession removes a session, open or stored, with what it left
// behind; not one another process holds.
func (c *conn) deleteSession(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	id, err := c.letGo(params)
	if err != nil {
		return continuation{}, err
	}
	err = c.opts.Manager.Delete(id)
	switch {
	case errors.Is(err, server.ErrNotFound):
		return continuation{}, fmt.Errorf("sessionId: %w %q", ErrUnknownSession, id)
	case err != nil:
		return continuation{}, fmt.Errorf("zero/deleteSession: %w", err)
	}
	return done(nil), nil
}

// renameParams are zero/renameSession's.
type renameParams struct {
	SessionID *string `json:"sessionId"`
	Title     *string `json:"title"`
}

// renameSession gives a session the title the person chose; it is kept
// with the session.
func (c *conn) renameSession(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p renameParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.Title == nil || strings.TrimSpace(*p.Title) == "" {
		return continuation{}, invalidParams("title", "required, not blank")
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	sess.SetTitle(*p.Title)
	return done(nil), nil
}

// setModeParams are zero/setMode's.
type setModeParams struct {
	SessionID *string `json:"sessionId"`
	Mode      *string `json:"mode"`
}

// setMode switches a session's mode (server.Modes); every client following
// it gets a mode_changed event.
func (c *conn) setMode(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p setModeParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.Mode == nil || *p.Mode == "" || !server.ValidMode(*p.Mode) {
		return continuation{}, invalidParams("mode", "one of default, plan")
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	if err := sess.SetMode(*p.Mode); err != nil {
		return continuation{}, fmt.Errorf("zero/setMode: %w", err)
	}
	return done(nil), nil
}

// executeParams is workspace/executeCommand's params with the arguments
// kept raw.
type executeParams struct {
	protocol.WorkDoneProgressParams
	Command   *string           `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

func (c *conn) executeCommand(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p executeParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.Command == nil || *p.Command == "" {
		return continuation{}, invalidParams("command", "required")
	}
	var arg json.RawMessage
	if len(p.Arguments) > 0 {
		arg = p.Arguments[0]
	}
	const prefix = "arguments[0]."
	switch *p.Command {
	case cmdPrompt, "zero.prompt": // the names before, still understood
		return c.promptWith(arg, prefix, p.WorkDoneToken)
	case cmdCancel, "zero.cancel":
		return c.cancelWith(arg, prefix)
	case cmdNewSession, "zero.newSession":
		return c.newSessionWith(arg, prefix)
	}
	return continuation{}, invalidParams("command", "unknown command %q (want %s, %s or %s)", *p.Command, cmdPrompt, cmdCancel, cmdNewSession)
}

// memoriesParams are zero/memories': the newest memories of a workspace
// (the default one when empty) and the user's, or with query those most
// relevant to it.
type memoriesParams struct {
	Workspace string `json:"workspace,omitempty"`
	Query     string `json:"query,omitempty"`
	Area      string `json:"area,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// memoriesResult is zero/memories' result.
type memoriesResult struct {
	Memories []server.MemoryInfo `json:"memories"`
}

func (c *conn) memories(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p memoriesParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if err := cleanWorkspace(&p.Workspace); err != nil {
		return continuation{}, err
	}
	if p.Limit < 0 {
		return continuation{}, invalidParams("limit", "must not be negative")
	}
	return later(func(ctx context.Context) (any, error) {
		list, err := c.opts.Manager.Memories(ctx, server.MemoryQuery{Workspace: p.Workspace, Query: p.Query, Area: p.Area, Limit: p.Limit})
		if err != nil {
			return nil, fmt.Errorf("zero/memories: %w", err)
		}
		if list == nil {
			list = []server.MemoryInfo{}
		}
		return memoriesResult{Memories: list}, nil
	}), nil
}

// cleanWorkspace checks a workspace parameter ("" or absolute) and cleans it.
func cleanWorkspace(ws *string) error {
	if *ws == "" {
		return nil
	}
	if !filepath.IsAbs(*ws) {
		return invalidParams("workspace", "must be an absolute path")
	}
	*ws = filepath.Clean(*ws)
	return nil
}
