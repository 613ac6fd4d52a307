// Package acp is Zero's Agent Client Protocol face (`zero acp`): an editor
// such as Zed, a JetBrains IDE or a Neovim plugin starts zero over stdio and
// drives sessions of the shared server.Manager with ACP v1 through
// github.com/coder/acp-go-sdk.
//
// Mapping choices, for the editors' sake:
//   - Profiles and models are session config options (categories "mode" and
//     "model"), switched with session/set_config_option; no legacy modes.
//   - A run that fails ends the turn with stop reason end_turn after the
//     error was shown as an agent message ("Error: ..."), rather than as a
//     JSON-RPC error: clients keep the partial transcript and the thread
//     stays usable (some clients treat a failed session/prompt as a broken
//     connection).
//   - Engine warnings become thought chunks; engine errors message chunks.
//   - A prompt sent while a run is going joins that run as an intervention
//     and is answered at once with end_turn.
//   - Checkpoints (see checkpoints.go): each run's checkpoint is a thought
//     line opening its turn; what a rewind did is an agent message (the
//     files restored, removed, kept, failed, the messages that left the
//     conversation, the processes still running), live and on load. The
//     face's /undo, /rewind, /compact and /fork use them; a rewind asks
//     about files changed outside the agent with session/request_permission.
//     The unstable session/fork is served (sessionCapabilities.fork).
//   - An MCP server's question (see questions.go) is a pending tool call
//     naming the server, asked with the unstable elicitation/create when
//     the client offers it, else with session/request_permission when it
//     fits its options; a form that needs typing is declined, and said.
//   - A message may be up to MaxLineSize (64 MiB) long; a longer one is
//     answered with a JSON-RPC error and the connection goes on. An
//     editor's answer to fs/read_text_file longer than MaxReadTextFile
//     (32 MiB) fails the read with an error for the agent.
package acp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/server"
)

// Options configures Serve. Manager is required; the zero value of every
// other field works.
type Options struct {
	Manager *server.Manager // required
	Catalog server.Catalog  // profiles and models offered (config options, /profile); nil = none offered
	Version string          // zero's version for initialize's agentInfo
	Logger  *slog.Logger
}

// shutdownGrace bounds how long Serve waits, after the client left, for the
// prompts in flight to return once their runs were cancelled.
const shutdownGrace = 800 * time.Millisecond

// Serve speaks ACP on in/out until in ends (the client closed stdin) or ctx
// is done, then cancels the runs of the sessions it started and returns
// (nil on EOF, ctx's error when ctx ended it). It returns within about a
// second of EOF even while runs are going. When ctx ends first, a read
// blocked on in cannot be interrupted: that one goroutine ends when in does.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Manager == nil {
		return ErrNoManager
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(ctx)
	defer cancel()

	lw := &lineWriter{w: out}
	pr, pw := io.Pipe()
	defer pr.Close() // a filter still writing gives up
	a := &agent{opts: opts, ctx: base, stop: cancel, out: lw, sessions: map[string]*sessState{}, big: newStash(MaxLineSize)}
	a.conn = sdk.NewAgentSideConnection(a, lw, pr)
	a.conn.SetLogger(opts.Logger)

	readErr := make(chan error, 1)
	filter := &inputFilter{src: in, dst: pw, out: lw, stash: a.big, log: opts.Logger}
	go func() { readErr <- filter.run() }()

	var err error
	select {
	case <-a.conn.Done():
		select {
		case err = <-readErr:
		default: // the SDK gave up on the stream itself (its notification queue overflowed)
		}
		if err != nil {
			err = fmt.Errorf("acp: read: %w", err)
		}
	case <-ctx.Done():
		err = ctx.Err()
		pw.CloseWithError(err)
	}
	// Serve alone records why the connection ended (the prompts'
	// watchers leave it to it): the client left, or Zero stops.
	cause := loop.ErrDisconnected
	if ctx.Err() != nil {
		cause = loop.ErrShutdown
	}
	a.shutdown(cause)
	return err
}

// agent implements the SDK's Agent (and AgentLoader) over the manager.
type agent struct {
	opts Options
	ctx  context.Context    // ends when Serve returns
	stop context.CancelFunc // ends ctx
	conn *sdk.AgentSideConnection
	out  *lineWriter

	wg sync.WaitGroup // the goroutines this face owns: drainers, permission asks, prompt watchers

	mu         sync.Mutex
	closing    bool
	stopped    bool          // wg is being waited for: spawn refuses
	inflight   int           // prompts in progress
	idle       chan struct{} // closed when inflight drops to 0 while closing
	clientCaps sdk.ClientCapabilities
	sessions   map[string]*sessState

	// big holds the long strings of lines longer than the SDK reads.
	big *stash
	// rewinds numbers the questions rewinds put to the user (their tool
	// call ids).
	rewinds atomic.Uint64
}

var (
	_ sdk.Agent       = (*agent)(nil)
	_ sdk.AgentLoader = (*agent)(nil)
)

// shutdown cancels every run of this connection for cause, stops forwarding and
// waits (boundedly) for the prompts in flight and the goroutines it owns.
func (a *agent) shutdown(cause error) {
	a.mu.Lock()
	a.closing = true
	sessions := make([]*sessState, 0, len(a.sessions))
	for _, st := range a.sessions {
		sessions = append(sessions, st)
	}
	var idle chan struct{}
	if a.inflight > 0 {
		idle = make(chan struct{})
		a.idle = idle
	}
	a.mu.Unlock()
	for _, st := range sessions {
		st.sess.CancelWith(cause)
	}
	timer := time.NewTimer(shutdownGrace)
	defer timer.Stop()
	if idle != nil {
		select {
		case <-idle:
		case <-timer.C:
			a.opts.Logger.Warn("prompts still running after the client left", "grace", shutdownGrace)
		}
	}
	for _, st := range sessions {
		st.detach()
	}
	// Cancelling the base context stops the drainers, the watchers and the
	// permission requests.
	a.stop()
	a.mu.Lock()
	a.stopped = true
	a.mu.Unlock()
	a.wg.Wait()
}

// spawn runs fn on a goroutine shutdown waits for; false (fn not run) once
// shutdown waits. Checking under mu keeps every Add before the Wait.
func (a *agent) spawn(fn func()) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.wg.Go(fn)
	return true
}

// enter registers a prompt in flight; false when Serve is ending.
func (a *agent) enter() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.inflight++
	return true
}

func (a *agent) leave() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight--
	if a.inflight == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// Initialize advertises what this face really does.
func (a *agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.clientCaps = p.ClientCapabilities
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession: true,
			// The editor's MCP servers (session/new mcpServers) join the
			// agent's tools: stdio, and streamable HTTP.
			McpCapabilities: sdk.McpCapabilities{Http: true},
			// Resource links and embedded text resources join the message
			// as context; images and audio are not understood.
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:                  &sdk.SessionListCapabilities{},
				Resume:                &sdk.SessionResumeCapabilities{},
				Close:                 &sdk.SessionCloseCapabilities{},
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{},
				// session/fork (unstable): see UnstableForkSession.
				Fork: &sdk.SessionForkCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "zero", Title: sdk.Ptr("Zero"), Version: cmp.Or(a.opts.Version, "dev")},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate succeeds: zero offers no auth methods, the model's key is in
// its own configuration.
func (a *agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// Logout is not advertised.
func (a *agent) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	return sdk.LogoutResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodLogout)
}

// SetSessionMode switches the session's mode (default or plan); every
// client following the session learns it from the mode_changed event.
func (a *agent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	id := string(p.SessionId)
	sess, err := a.opts.Manager.Get(id)
	if err != nil {
		return sdk.SetSessionModeResponse{}, rpcError(id, err)
	}
	if !server.ValidMode(string(p.ModeId)) || p.ModeId == "" {
		return sdk.SetSessionModeResponse{}, invalidParams("modeId", fmt.Sprintf("unknown mode %q (the modes are default and plan)", p.ModeId))
	}
	if err := sess.SetMode(string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, rpcError(id, err)
	}
	return sdk.SetSessionModeResponse{}, nil
}

// roots checks cwd and the additional directories: ACP paths are absolute.
func roots(cwd string, extra []string) ([]string, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd", "must be an absolute path")
	}
	out := []string{filepath.Clean(cwd)}
	for i, d := range extra {
		if !filepath.IsAbs(d) {
			return nil, invalidParams(fmt.Sprintf("additionalDirectories[%d]", i), "must be an absolute path")
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// NewSession creates a session on cwd (plus the additional directories) and
// answers at once; the slash commands follow the answer.
func (a *agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	rs, err := roots(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	spec := server.SessionSpec{Roots: rs, MCPServers: mcpServers(p.McpServers)}
	var files *editorFiles
	a.mu.Lock()
	if a.clientCaps.Fs.ReadTextFile && a.clientCaps.Fs.WriteTextFile {
		files = &editorFiles{conn: a.conn, stash: a.big}
		spec.Files = files
	}
	a.mu.Unlock()
	sess, err := a.opts.Manager.Create(ctx, spec)
	if err != nil {
		if bad := badWorkspace(err); bad != nil {
			return sdk.NewSessionResponse{}, bad
		}
		return sdk.NewSessionResponse{}, rpcError("", fmt.Errorf("create session: %w", err))
	}
	if files != nil {
		files.setSession(sess.ID())
	}
	// The client learns the id from this answer: notifications for the
	// session wait until the answer is on the wire.
	gate := a.out.watch(fmt.Sprintf(`"sessionId":%q`, sess.ID()))
	// What happened while the session was built (a sandbox warning) is in
	// its log already: replay it so the user sees it.
	st, _, err := a.attachWith(sess, gate, true)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	st.enqueue(item{update: commandsUpdate(a.opts.Catalog, sess.Commands())})
	if msg := trustNotice(sess); msg != "" {
		st.enqueue(item{message: msg})
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sess.ID()), ConfigOptions: a.configOptions(sess), Modes: modeState(sess)}, nil
}

// LoadSession replays the session's event log as session/update
// notifications, then answers.
func (a *agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	opts, modes, err := a.reattach(ctx, string(p.SessionId), true, mcpServers(p.McpServers))
	return sdk.LoadSessionResponse{ConfigOptions: opts, Modes: modes}, err
}

// ResumeSession reattaches to a session without replaying it.
func (a *agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	opts, modes, err := a.reattach(ctx, string(p.SessionId), false, mcpServers(p.McpServers))
	return sdk.ResumeSessionResponse{ConfigOptions: opts, Modes: modes}, err
}

// reattach connects this client to a session (load replays it first,
// resume does not), sends the slash commands, asks again for approvals
// still pending, and returns the session's config options and mode. The editor's
// MCP servers are the session's when it is loaded from the store.
func (a *agent) reattach(ctx context.Context, id string, replay bool, mcp []mcpconf.Server) ([]sdk.SessionConfigOption, *sdk.SessionModeState, error) {
	sess, err := a.opts.Manager.GetWith(id, server.GetOptions{MCPServers: mcp})
	if err != nil {
		return nil, nil, rpcError(id, err)
	}
	var st *sessState
	if replay {
		st, err = a.attachReplay(sess)
	} else {
		st, err = a.attach(sess, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	idx := st.enqueue(item{update: commandsUpdate(a.opts.Catalog, sess.Commands())})
	if msg := trustNotice(sess); msg != "" {
		idx = st.enqueue(item{message: msg})
	}
	if err := st.waitSent(ctx, idx); err != nil {
		return nil, nil, err
	}
	a.askPending(st)
	return a.configOptions(sess), modeState(sess), nil
}

// CloseSession cancels the session's run and forgets the session.
func (a *agent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	id := string(p.SessionId)
	if _, err := a.opts.Manager.Get(id); err != nil {
		return sdk.CloseSessionResponse{}, rpcError(id, err)
	}
	a.mu.Lock()
	st := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if st != nil {
		st.detach()
	}
	if err := a.opts.Manager.Close(id); err != nil {
		return sdk.CloseSessionResponse{}, rpcError(id, err)
	}
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions lists the sessions of this process and the stored sessions
// of the workspace (cwd when given, else the one zero was started in).
func (a *agent) ListSessions(_ context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	var o server.ListOptions
	if p.Cwd != nil && *p.Cwd != "" {
		o.Workspace = filepath.Clean(*p.Cwd)
	}
	for _, in := range a.opts.Manager.ListWith(o) {
		if len(in.Roots) == 0 {
			continue
		}
		if p.Cwd != nil && *p.Cwd != "" && filepath.Clean(*p.Cwd) != in.Roots[0] {
			continue
		}
		si := sdk.SessionInfo{SessionId: sdk.SessionId(in.ID), Cwd: in.Roots[0], AdditionalDirectories: in.Roots[1:],
			UpdatedAt: sdk.Ptr(in.Updated.UTC().Format(time.RFC3339))}
		if in.Title != "" {
			si.Title = sdk.Ptr(in.Title)
		}
		resp.Sessions = append(resp.Sessions, si)
	}
	return resp, nil
}

// Cancel ends the session's run. The SDK also cancels the prompt's
// context, but not once a later prompt (an intervention) took its place,
// so the run is cancelled here directly.
func (a *agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	id := string(p.SessionId)
	sess, err := a.opts.Manager.Get(id)
	if err != nil {
		a.opts.Logger.Debug("cancel for an unknown session", "session", id)
		return nil
	}
	sess.Cancel()
	return nil
}

// SetSessionConfigOption switches the profile or the model.
func (a *agent) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("type", "zero has no boolean config options")
	}
	id := string(p.ValueId.SessionId)
	sess, err := a.opts.Manager.Get(id)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, rpcError(id, err)
	}
	value := string(p.ValueId.Value)
	var profile, model string
	switch p.ValueId.ConfigId {
	case configMode:
		if !server.ValidMode(value) || value == "" {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("value", fmt.Sprintf("unknown mode %q", value))
		}
		if err := sess.SetMode(value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, rpcError(id, err)
		}
		return sdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(sess)}, nil
	case configProfile:
		if !a.offered(a.profiles(), value) {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("value", fmt.Sprintf("unknown profile %q", value))
		}
		profile = value
	case configModel:
		if !a.offered(a.models(), value) {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("value", fmt.Sprintf("unknown model %q", value))
		}
		model = value
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("configId", fmt.Sprintf("unknown config option %q", p.ValueId.ConfigId))
	}
	if err := sess.Configure(ctx, profile, model); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, rpcError(id, err)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(sess)}, nil
}

// Prompt runs the message, or handles a slash command, and answers with the
// stop reason when the turn ends.
func (a *agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	if err := a.big.resolve(&p); err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": err.Error()})
	}
	id := string(p.SessionId)
	if id == "" {
		return sdk.PromptResponse{}, invalidParams("sessionId", "is required")
	}
	sess, err := a.opts.Manager.Get(id)
	if err != nil {
		return sdk.PromptResponse{}, rpcError(id, err)
	}
	in, err := promptInput(p.Prompt, sess.Spec().Roots)
	if err != nil {
		return sdk.PromptResponse{}, invalidParams("prompt", err.Error())
	}
	msg := in.Text
	if strings.TrimSpace(msg) == "" && len(in.Images) == 0 {
		return sdk.PromptResponse{}, invalidParams("prompt", "holds no text")
	}
	if !a.enter() {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	defer a.leave()
	st, err := a.attach(sess, nil)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	gen := st.nextPrompt()
	if strings.TrimSpace(msg) == "/act" && sess.Mode() == server.ModePlan {
		// Out of plan mode, and the plan carried out: a run like any.
		if err := sess.SetMode(server.ModeDefault); err != nil {
			return sdk.PromptResponse{}, rpcError(id, err)
		}
		msg = server.ActMessage
		in.Text = msg
	}
	if len(in.Images) > 0 {
		// A message with pictures is for the agent, never a command.
	} else if reply, ok := a.command(ctx, st, msg); ok {
		idx := st.enqueue(item{message: reply})
		if err := st.waitSent(ctx, idx); err != nil && !errors.Is(err, context.Canceled) {
			return sdk.PromptResponse{}, err
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}

	// The SDK cancels this ctx on session/cancel, but also when another
	// prompt for the session arrives, which here is an intervention that
	// must not end the run. So the run gets a context of its own and a
	// watcher decides: a newer prompt within a moment means intervention,
	// anything else (session/cancel, $/cancel_request, the client leaving)
	// cancels the run.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	done := make(chan struct{})
	defer close(done)
	a.spawn(func() { a.watch(ctx, done, st, gen) })

	res, err := a.run(runCtx, sess, in)
	if errors.Is(err, loop.ErrBusy) { // a saved command while a run goes on
		idx := st.enqueue(item{message: "A run is in progress: " + err.Error() + "."})
		if err := st.waitSent(ctx, idx); err != nil && !errors.Is(err, context.Canceled) {
			return sdk.PromptResponse{}, err
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	if err != nil {
		return sdk.PromptResponse{}, rpcError(id, err)
	}
	if res.StopReason == server.StopIntervened {
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	// Everything the run produced goes out before the answer.
	if err := st.waitEvents(a.ctx, sess.Cursor()); err != nil {
		a.opts.Logger.Debug("prompt answered before its updates", "session", id, "err", err)
	}
	resp := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	switch res.StopReason {
	case loop.StopCancelled:
		resp.StopReason = sdk.StopReasonCancelled
	case loop.StopBudget: // the run reached limits.tokens or limits.cost
		resp.StopReason = sdk.StopReasonMaxTokens
	}
	resp.Usage, resp.Meta = promptUsage(res.Usage)
	return resp, nil
}

// run runs msg: a saved command's expanded text when msg names one
// (/review main.go), else msg as it is.
func (a *agent) run(ctx context.Context, sess *server.Session, in loop.Input) (server.RunResult, error) {
	if name, args, ok := server.CommandCall(in.Text); ok && len(in.Images) == 0 {
		if res, found, err := sess.RunCommand(ctx, name, args); found {
			return res, err
		}
	}
	return sess.PromptInput(ctx, in)
}

// promptUsage is what a turn's usage becomes in ACP: the prompt response's
// usage (unstable in the SDK: the tokens, cached included) and, in _meta,
// Zero's own account of it (its cost when known, its parts by role), which
// ACP has no field for: usage_update's cost is the session's, in a named
// currency, beside a context window.
func promptUsage(u *server.Usage) (*sdk.Usage, map[string]any) {
	if u == nil {
		return nil, nil
	}
	out := &sdk.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.CachedTokens > 0 {
		out.CachedReadTokens = new(u.CachedTokens)
	}
	return out, map[string]any{"zero/usage": u}
}

// interveneGrace is how long the watcher waits, after the SDK cancelled a
// prompt's context, for the newer prompt that would explain it.
const interveneGrace = 250 * time.Millisecond

// watch cancels st's run, as the user asked, when the prompt's context
// ends for session/cancel or $/cancel_request, but not for a newer prompt
// of the same session (an intervention). The end of the connection is not
// the user's and not the watcher's to record: Serve cancels every run of
// the connection for its cause, the client leaving or Zero stopping, and
// a watcher that got there first would record its guess.
func (a *agent) watch(ctx context.Context, done <-chan struct{}, st *sessState, gen uint64) {
	select {
	case <-done:
		return
	case <-a.ctx.Done(): // Serve is ending: it cancels the run
		return
	case <-ctx.Done():
	}
	select {
	case <-a.conn.Done():
		// The SDK ends every prompt's context when the connection closes
		// (its context is their parent, so it is done first); Serve sees
		// it too and cancels the run.
		return
	default:
	}
	t := time.NewTimer(interveneGrace)
	defer t.Stop()
	for {
		if st.promptGen() != gen {
			return
		}
		select {
		case <-done:
			return
		case <-a.ctx.Done():
			return
		case <-st.promptSignal():
		case <-t.C:
			if st.promptGen() == gen {
				st.sess.Cancel()
			}
			return
		}
	}
}

// editorFiles routes text_editor through the client's fs/read_text_file and
// fs/write_text_file, so the agent sees unsaved buffers.
type editorFiles struct {
	conn  *sdk.AgentSideConnection
	stash *stash // where a long answer's content waits
	mu    sync.Mutex
	id    string
}

var _ server.FileAccess = (*editorFiles)(nil)

func (f *editorFiles) setSession(id string) {
	f.mu.Lock()
	f.id = id
	f.mu.Unlock()
}

func (f *editorFiles) session() sdk.SessionId {
	f.mu.Lock()
	defer f.mu.Unlock()
	return sdk.SessionId(f.id)
}

// MaxReadTextFile is the most text an editor's answer to fs/read_text_file
// may carry for the agent: 32 MiB, what text_editor reads whole from the
// disk. A longer answer fails the read with an error that names the size
// and sends the agent to the terminal (grep, sed, head); it is not cut
// short, because text_editor patches and rewrites what it read as the
// whole file, and a cut copy would lose the rest of the user's file. What
// reaches the agent's context is text_editor's window on the file (a few
// hundred lines), never the whole answer.
const MaxReadTextFile = 32 << 20

// ReadTextFile implements server.FileAccess. The whole file is asked for:
// text_editor stamps (hashes) and patches the whole text, so a line range
// would not do.
func (f *editorFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	resp, err := f.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.session(), Path: path})
	if err != nil {
		return "", fsError("read", path, err)
	}
	content := resp.Content
	if f.stash != nil {
		if content, err = f.stash.take(content); err != nil {
			return "", err
		}
		_ = f.stash.resolve(&resp.Meta) // forget whatever else came long
	}
	if len(content) > MaxReadTextFile {
		return "", fmt.Errorf("the file is %d bytes, more than the %d MiB text_editor reads through the editor; use grep, sed or head in the terminal", len(content), MaxReadTextFile>>20)
	}
	return content, nil
}

// WriteTextFile implements server.FileAccess.
func (f *editorFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if _, err := f.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.session(), Path: path, Content: content}); err != nil {
		return fsError("write", path, err)
	}
	return nil
}

// mcpServers turns the editor's MCP servers into the manager's (SSE and
// ACP-transport servers are not supported and left out).
func mcpServers(in []sdk.McpServer) []mcpconf.Server {
	var out []mcpconf.Server
	for _, m := range in {
		switch {
		case m.Stdio != nil:
			s := mcpconf.Server{Name: m.Stdio.Name, Command: m.Stdio.Command, Args: m.Stdio.Args}
			for _, e := range m.Stdio.Env {
				if s.Env == nil {
					s.Env = map[string]string{}
				}
				s.Env[e.Name] = e.Value
			}
			out = append(out, s)
		case m.Http != nil:
			s := mcpconf.Server{Name: m.Http.Name, URL: m.Http.Url, Headers: map[string]string{}}
			for _, h := range m.Http.Headers {
				s.Headers[h.Name] = h.Value
			}
			out = append(out, s)
		}
	}
	return out
}
