package loop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/secrets"
)

// Model streams one chat completion (implemented by *llm.Client).
type Model interface {
	Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error)
}

// Prompts renders prompt files (implemented by *profiles.Prompts).
type Prompts interface {
	Render(name string, vars map[string]any) (string, error)
	Names(pattern string) []string
}

// Limits bound what Agent Zero leaves unbounded. Zero values mean defaults.
// A count that may be none (CriticalRetries, SubordinateDepth) is a
// pointer: nil is the default and a 0 is none, the meaning config's
// limits.critical_retries and limits.subordinate_depth have, so the
// configured values are passed as they are (new(n)).
type Limits struct {
	// Misformat is how many consecutive replies without a valid tool
	// request end the run (default 3).
	Misformat int
	// Repeat is how many consecutive repeats of the same tool request end
	// the run (default 3).
	Repeat int
	// CriticalRetries is how many unexpected errors per monologue are
	// retried before the run ends (nil: the default, 1, as Agent Zero; 0:
	// none; a negative count is 0).
	CriticalRetries *int
	// CriticalRetryDelay is the pause before such a retry (default 1 s).
	CriticalRetryDelay time.Duration
	// ToolResult caps the bytes of one tool result kept in history; the
	// head and tail are kept (default 64 KiB, about 16k tokens).
	ToolResult int
	// LiveOutput caps the bytes of one tool call streamed to the editor as
	// tool_output_delta (default 1 MiB).
	LiveOutput int
	// SubordinateDepth is the deepest agent number call_subordinate may
	// create (nil: the default, 5: agents 0 to 5; 0: no subordinates; a
	// negative depth is 0).
	SubordinateDepth *int
	// Tokens and Cost are a run's budget (0: none): the total tokens of
	// its model calls, and their cost where known (see usage.go). A run
	// that reached either ends, before its next call, with StopBudget.
	Tokens int
	Cost   float64
	// ContextTokens is the chat model's context window in tokens (default
	// 128000). A user message that cannot fit in it is refused before
	// anything is sent; see [Session.Run].
	ContextTokens int
	// HistoryShare is the share of ContextTokens the history may take
	// before it is compressed (default 0.7, Agent Zero's ctx_history; the
	// rest is left to the system prompt, the extras and the reply).
	HistoryShare float64
	// MaxOutputTokens caps the chat model's answer (Request.MaxOutputTokens):
	// 0 is the default, a quarter of ContextTokens and at most 8192, and
	// never more than the window leaves beside the prompt; -1 sends no cap
	// (see budget.go).
	MaxOutputTokens int
	// UtilityOutputTokens caps the utility model's answers (summaries,
	// memories): 0 is the default, 2048; -1 sends no cap.
	UtilityOutputTokens int
}

// maxBytesPerToken bounds how many bytes one token may stand for when a
// message is judged by its size alone: a message longer than
// ContextTokens*maxBytesPerToken bytes is refused without being tokenized
// (tokenizing 50 MB takes seconds and gigabytes). Real text averages about
// four bytes a token; only long runs of one character come near this.
const maxBytesPerToken = 16

// Gate decides whether a tool call may run, after the tool_execute_before
// extensions had their say, so it sees the arguments that will really be
// used. It may wait (for a person's answer) and sets p.Block to refuse the
// call; an error ends the run. It is the engine's approval policy: no
// extension can replace, disable or run after it.
type Gate func(ctx context.Context, p *ToolBeforePayload) error

// Setup is what an agent of one profile works with.
type Setup struct {
	Profile string // default "default"
	Model   Model
	Prompts Prompts
	// UtilityModel is used for summaries and memory; nil means Model.
	UtilityModel Model
	// Prices cost the calls to Model and UtilityModel whose endpoint
	// reports no cost (nil: unknown).
	Prices Prices
	Tools  []Tool
	// ToolSource, when set, provides tools found at run time (an MCP
	// server's); they join Tools from the next monologue on.
	ToolSource ToolSource
	// Hooks are the resolved extensions (see Builtins); nil runs the
	// built-ins only.
	Hooks *hooks.Set
	// ToolProtocol is how the model calls tools: ProtocolJSON (Agent
	// Zero's JSON object in the reply's text), ProtocolNative (the API's
	// tool calls), or ProtocolAuto ("" too): native where the endpoint
	// takes tools, else JSON.
	ToolProtocol string
	// Vision says whether the chat model sees images: VisionOn, VisionOff,
	// or VisionAuto ("" too): on unless the endpoint says or shows that
	// the model cannot (see llm.Client.Blind).
	Vision string
}

// The settings of [Setup].Vision.
const (
	VisionAuto = "auto"
	VisionOn   = "true"
	VisionOff  = "false"
)

// The tool protocols of [Setup].ToolProtocol.
const (
	ProtocolAuto   = "auto"
	ProtocolNative = "native"
	ProtocolJSON   = "json"
)

// ToolSource provides tools discovered while the session runs. Tools is
// called at the start of every monologue of an agent; it may start what
// the tools need (lazily, bounded by ctx) and should answer from a cache
// after. A name the setup's own tools have is ignored.
type ToolSource interface {
	Tools(ctx context.Context) []Tool
}

// Config is what a session needs. Model and Prompts are required.
type Config struct {
	// Setup is agent 0's.
	Setup
	// Subordinate resolves the setup of a subordinate's profile
	// (call_subordinate); nil gives subordinates their superior's setup
	// under the requested profile name.
	Subordinate func(profile string) (Setup, error)
	// Vars are extra prompt variables (for example agent_profiles, the
	// list the call_subordinate prompt shows).
	Vars map[string]any
	// Spill saves a tool result too long for history and returns a path
	// the agent's tools can read it at; nil keeps only the head and tail.
	Spill     func(a *Agent, tool, text string) (path string, err error)
	Workspace string
	// Sandbox names the backend that runs commands ("local", "docker"),
	// for the prompts.
	Sandbox string
	Limits  Limits
	// CountTokens counts tokens of a message; nil uses llm.CountTokens.
	CountTokens func(string) int
	// LearnedWindow, when set, is told the context window a model's
	// "context length exceeded" answer stated, when it is smaller than
	// Limits.ContextTokens (the session keeps within it from then on).
	LearnedWindow func(tokens int)
	// Now is the clock; nil uses time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Gate approves every tool call of every agent of the session; nil
	// runs them all (see also [Session.SetGate]).
	Gate Gate
	// Journal, when set, records every change to the agents' histories
	// (see [HistoryJournal]); a store keeps sessions across restarts with it.
	Journal HistoryJournal
	// Secrets are the values the agent may use by alias, §§secret(NAME),
	// and the values (Zero's own keys) that are only masked; nil: none. The
	// engine keeps every value out of what it shows, stores, logs and
	// sends to a model (see secrets.go); Logger is wrapped to mask too.
	Secrets *secrets.Set
}

// Session is one conversation (Agent Zero's AgentContext): agent 0, its
// subordinates, and at most one run at a time. Runs of different sessions
// never block each other.
type Session struct {
	id     string
	cfg    Config
	sink   func(Event)
	agent0 *Agent

	// Data is free for tools and extensions, for the life of the session.
	Data map[string]any

	emitMu sync.Mutex
	seq    int64
	meter  usageMeter // the run's usage

	// compressions are the agents' background history compressions; a run
	// waits for them (their context ends with it) before it reports its end.
	compressions sync.WaitGroup

	mu      sync.Mutex
	running bool
	cancel  context.CancelCauseFunc // cancels the run
	// phases cancel the streams and tools in progress, innermost last: a
	// superior's call_subordinate below its subordinate's model stream.
	// An intervention interrupts only the innermost, the agent at work.
	phases  []*phase
	pending []Input // interventions not yet delivered
	// images are the pictures of the session's messages by Hash, for the
	// faces that show them (Image); bounded by the history.
	images map[string]llm.Image
	// blindSaid: the user was told the chat model cannot see.
	blindSaid atomic.Bool
	items     int
	active    *Agent        // the agent whose monologue runs now
	resume    chan struct{} // non-nil while paused; closed by Resume
	gate      Gate
	// planning is plan mode: only tools that change nothing are offered
	// (SetPlanning).
	planning atomic.Bool

	// maskHook, when set (by tests, before the session is used), sees
	// every text the session masks (see mask).
	maskHook func(text string)

	// fit is what the model's overflow answers taught (overflow.go).
	fit fitState
}

// NewSession creates a session. sink gets every event, in order, from the
// goroutine running the session; it must not block for long.
func NewSession(id string, cfg Config, sink func(Event)) *Session {
	if cfg.Model == nil || cfg.Prompts == nil {
		panic("loop.NewSession: Model and Prompts are required")
	}
	cfg.Sandbox = cmp.Or(cfg.Sandbox, "local")
	cfg.Limits.Misformat = cmp.Or(cfg.Limits.Misformat, 3)
	cfg.Limits.Repeat = cmp.Or(cfg.Limits.Repeat, 3)
	cfg.Limits.CriticalRetries = count(cfg.Limits.CriticalRetries, 1)
	cfg.Limits.CriticalRetryDelay = cmp.Or(cfg.Limits.CriticalRetryDelay, time.Second)
	cfg.Limits.ToolResult = cmp.Or(cfg.Limits.ToolResult, 64<<10)
	cfg.Limits.LiveOutput = cmp.Or(cfg.Limits.LiveOutput, 1<<20)
	cfg.Limits.SubordinateDepth = count(cfg.Limits.SubordinateDepth, 5)
	if cfg.CountTokens == nil {
		cfg.CountTokens = llm.CountTokens
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	} else if set := cfg.Secrets; set != nil {
		cfg.Logger = slog.New(secrets.NewHandler(cfg.Logger.Handler(), func() *secrets.Set { return set }))
	}
	if sink == nil {
		sink = func(Event) {}
	}
	cfg.Limits.ContextTokens = cmp.Or(cfg.Limits.ContextTokens, 128000)
	if cfg.Limits.HistoryShare <= 0 {
		cfg.Limits.HistoryShare = DefaultHistoryShare
	}
	cfg.Limits.HistoryShare = min(cfg.Limits.HistoryShare, 1)
	s := &Session{id: id, cfg: cfg, sink: sink, Data: map[string]any{}, gate: cfg.Gate}
	s.agent0 = s.newAgent(0, nil, newAgentSetup(cfg.Setup))
	return s
}

// count is a Limits count of the session's own: def for nil, a negative
// count as 0 (none).
func count(n *int, def int) *int {
	if n == nil {
		return new(def)
	}
	return new(max(*n, 0))
}

// agentSetup is a Setup with defaults filled and tools indexed.
type agentSetup struct {
	Setup
	tools map[string]Tool
	names []string // sorted tool names
}

func newAgentSetup(st Setup) *agentSetup {
	st.Profile = cmp.Or(st.Profile, "default")
	if st.Hooks == nil {
		h, err := hooks.Resolve(Builtins(), nil, hooks.Options{})
		if err != nil {
			panic("loop: built-in extensions: " + err.Error())
		}
		st.Hooks = h
	}
	if st.UtilityModel == nil {
		st.UtilityModel = st.Model
	}
	as := &agentSetup{Setup: st, tools: map[string]Tool{}}
	for _, t := range st.Tools {
		as.tools[t.Name()] = t
		as.names = append(as.names, t.Name())
	}
	slices.Sort(as.names)
	return as
}

// ID is the session id.
func (s *Session) ID() string { return s.id }

// Agent0 is the top agent.
func (s *Session) Agent0() *Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent0
}

// Workspace is the directory the session works in.
func (s *Session) Workspace() string { return s.cfg.Workspace }

// SetGate installs the gate that approves tool calls (the server's
// approval broker), replacing Config.Gate; it applies from the next call on.
func (s *Session) SetGate(g Gate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = g
}

// SetPlanning turns plan mode on or off: while it is on, the agents are
// offered only the tools, and the methods, that change nothing
// ([ChangesNothing]) and are told so in their system prompt
// (agent.system.plan_mode.md). It applies from the next request on.
// Refusing other calls is the approval gate's job, not this.
func (s *Session) SetPlanning(on bool) { s.planning.Store(on) }

// Planning reports whether plan mode is on.
func (s *Session) Planning() bool { return s.planning.Load() }

func (s *Session) currentGate() Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate
}

// checkMessage refuses a user message that cannot fit in the model's
// context, judging by its size first so that a huge one costs nothing.
func (s *Session) checkMessage(msg string) error {
	limit := s.cfg.Limits.ContextTokens
	if len(msg) <= limit { // a token is at least one byte
		return nil
	}
	if len(msg) > limit*maxBytesPerToken {
		return fmt.Errorf("%w: %d bytes, far more than fits in the model's context of %d tokens", ErrMessageTooLarge, len(msg), limit)
	}
	if n := s.cfg.CountTokens(msg); n > limit {
		return fmt.Errorf("%w: %d tokens, more than the model's context of %d", ErrMessageTooLarge, n, limit)
	}
	return nil
}

// Running reports whether a run is in progress.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Run hands msg to agent 0 and runs until the agent answers with the
// response tool, the run is cancelled, or it fails; it returns the answer.
// Events describe every step, from run_started to run_ended.
func (s *Session) Run(ctx context.Context, msg string) (string, error) {
	return s.RunInput(ctx, Input{Text: msg})
}

// RunInput is Run for a user message with images.
func (s *Session) RunInput(ctx context.Context, in Input) (string, error) {
	msg := in.Text
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return "", ErrBusy
	}
	rctx, cancel := context.WithCancelCause(ctx)
	rctx = s.beginUsage(rctx)
	s.running, s.cancel, s.pending = true, cancel, nil
	a := s.agent0
	s.mu.Unlock()
	defer cancel(nil)

	item := s.newItem("run")
	tooLarge := s.checkInput(in)
	shown := msg
	if tooLarge != nil {
		shown = s.clipMasked(msg, 4<<10)
	} else {
		s.keepImages(in.Images)
	}
	a.emit(Event{Type: EventRunStarted, Item: item, Text: shown, Images: refs(in.Images)})
	var answer string
	err := tooLarge
	if err != nil {
		a.emit(Event{Type: EventError, Item: item, Text: err.Error()})
	} else {
		answer, err = a.processChain(rctx, in)
	}
	end := Event{Type: EventRunEnded, Item: item, StopReason: StopResponse}
	switch {
	case err == nil:
	case errors.Is(context.Cause(rctx), ErrBudget):
		err = context.Cause(rctx)
		end.StopReason, end.Error = StopBudget, err.Error()
	case errors.Is(context.Cause(rctx), ErrCancelled) || (ctx.Err() != nil && errors.Is(err, context.Canceled)):
		// Why it was cancelled is kept: a client that went away did not
		// ask for it (ErrDisconnected), nor did Zero's shutdown the user.
		err = cancelCauseOf(context.Cause(rctx))
		end.StopReason = StopCancelled
		if err != ErrCancelled {
			end.Error = CancelReason(err)
		}
	default:
		end.StopReason, end.Error = StopError, err.Error()
	}
	cancel(nil) // background history compressions end with the run
	s.compressions.Wait()
	// Messages sent when the run could no longer take them (it failed, was
	// cancelled, or they came in its very last instant) are reported, not
	// dropped silently.
	s.mu.Lock()
	undelivered := s.pending
	s.running, s.cancel, s.phases, s.pending = false, nil, nil, nil
	s.mu.Unlock()
	for _, m := range undelivered {
		a.warn(item, fmt.Sprintf("message not delivered, the run had ended: %q", m.Text))
	}
	end.Usage = s.endUsage()
	a.emit(end)
	// The answer is the response tool's result, masked as it returned;
	// an error may come from anywhere (a model client quoting a key).
	return answer, s.maskError(err)
}

// Warn reports a warning (for example a failing extension script) as an
// event of the agent that is running, or of agent 0.
func (s *Session) Warn(text string) {
	s.mu.Lock()
	a := s.active
	if a == nil {
		a = s.agent0
	}
	s.mu.Unlock()
	a.warn("", text)
}

// Intervene delivers msg to the running agent at its next checkpoint (a
// stream chunk, a tool boundary, tool output): what it produced so far is
// kept in history, the message is added, and the loop continues.
func (s *Session) Intervene(msg string) error {
	return s.InterveneInput(Input{Text: msg})
}

// InterveneInput is Intervene for a user message with images.
func (s *Session) InterveneInput(in Input) error {
	if err := s.checkInput(in); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return ErrNotRunning
	}
	s.pending = append(s.pending, in)
	if n := len(s.phases); n > 0 && s.phases[n-1].cancel != nil {
		s.phases[n-1].cancel(ErrIntervened)
	}
	return nil
}

// phase is a stream or tool execution that an intervention may interrupt;
// one with a nil cancel is a barrier: a subordinate at work between its own
// phases, whose superior's call_subordinate must not be interrupted.
type phase struct{ cancel context.CancelCauseFunc }

// barrier keeps interventions away from the phases below it until the
// returned func is called.
func (s *Session) barrier() func() {
	p := &phase{}
	s.mu.Lock()
	s.phases = append(s.phases, p)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.phases = slices.DeleteFunc(s.phases, func(q *phase) bool { return q == p })
		s.mu.Unlock()
	}
}

// Cancel ends the current run promptly, as the user asked; what it started
// is killed. It is a no-op when nothing runs.
func (s *Session) Cancel() { s.CancelWith(ErrCancelled) }

// CancelWith is Cancel for a cause: ErrCancelled (the user asked),
// ErrDisconnected (the client went away) or ErrShutdown (Zero stops). The
// run's history, its tool results and its run_ended event say which; any
// other cause counts as the user's. The first cause of a run is the one
// that stays.
func (s *Session) CancelWith(cause error) {
	if !errors.Is(cause, ErrCancelled) {
		cause = ErrCancelled
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(cause)
	}
}

// beginPhase derives a context for a stream or a tool execution that an
// intervention cancels; end must be called when the phase is over.
func (s *Session) beginPhase(ctx context.Context) (pctx context.Context, end func()) {
	pctx, cancel := context.WithCancelCause(ctx)
	p := &phase{cancel: cancel}
	s.mu.Lock()
	s.phases = append(s.phases, p)
	if len(s.pending) > 0 {
		cancel(ErrIntervened)
	}
	s.mu.Unlock()
	return pctx, func() {
		s.mu.Lock()
		s.phases = slices.DeleteFunc(s.phases, func(q *phase) bool { return q == p })
		s.mu.Unlock()
		cancel(nil)
	}
}

// takeIntervention returns the pending user messages, if any.
func (s *Session) takeIntervention() []Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// ContinueItems makes the session's item ids (run-N, msg-N, tool-N) go on
// after n: a session restored from a log whose items went up to n must not
// give a new step the id of an old one (editors group events by it).
func (s *Session) ContinueItems(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = max(s.items, n)
}

func (s *Session) newItem(kind string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items++
	return fmt.Sprintf("%s-%d", kind, s.items)
}

func (s *Session) emit(e Event) {
	if s.cfg.Secrets != nil {
		s.maskEvent(&e)
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.seq++
	e.Seq = s.seq
	e.Session = s.id
	e.Time = s.cfg.Now()
	s.sink(e)
}

// vars are the vars of every render of agent a, lowest priority first:
// Config.Vars (agent_profiles; sandbox_image when the caller knows the
// Docker image), then the vars of a's own tools (see [PromptVarser]:
// default_line_count from the text editor; sandbox_isolation and, for a
// profile with its own sandbox user, sandbox_user from code execution),
// then the engine's. os is where commands run: Linux in a Docker container
// whatever the host is.
func (s *Session) vars(a *Agent) map[string]any {
	v := make(map[string]any, len(s.cfg.Vars)+12)
	maps.Copy(v, s.cfg.Vars)
	for _, name := range a.setup.names {
		if pv, ok := a.setup.tools[name].(PromptVarser); ok {
			maps.Copy(v, pv.PromptVars())
		}
	}
	goos := runtime.GOOS
	if s.cfg.Sandbox == "docker" {
		goos = "linux"
	}
	maps.Copy(v, map[string]any{
		"agent_name":   fmt.Sprintf("A%d", a.Number),
		"agent_number": a.Number,
		// tool_protocol is "native" when the model calls tools as the API's
		// functions, "json" when it writes Agent Zero's tool requests: the
		// default agent.system.main.md tells it how by that.
		"tool_protocol": a.protocol(),
		"profile":       a.Profile,
		"workdir_path":  s.cfg.Workspace,
		"sandbox":       s.cfg.Sandbox,
		"os":            goos,
		"date_time":     s.cfg.Now().Format("2006-01-02 15:04:05 -07:00"),
	})
	return v
}

func (s *Session) setActive(a *Agent) {
	s.mu.Lock()
	s.active = a
	s.mu.Unlock()
}
