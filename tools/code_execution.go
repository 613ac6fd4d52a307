package tools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
)

// CodeExecution is Agent Zero's `code_execution_tool`: commands run in
// numbered persistent shells of the sandbox, one set of shells per agent.
// Its `input` companion (InputTool) types into those same shells.
type CodeExecution struct {
	backend  sandbox.Backend
	timeouts Timeouts
	user     string // run shells as this user (backends that can), "" = the backend's

	mu      sync.Mutex
	shells  map[shellKey]*sandbox.Shell
	opening map[shellKey]*shellOpen // shells being opened, without mu held
	closed  bool
}

// Timeouts are the waiting rules of the terminal and output runtimes.
type Timeouts struct {
	Terminal sandbox.Timeouts
	Output   sandbox.Timeouts
}

type shellKey struct {
	agent *loop.Agent
	n     int
}

// NewCodeExecution returns the tool; zero Timeouts fields mean Agent
// Zero's defaults.
func NewCodeExecution(b sandbox.Backend, t Timeouts) *CodeExecution {
	if t.Terminal == (sandbox.Timeouts{}) {
		t.Terminal = sandbox.DefaultTimeouts
	}
	if t.Output == (sandbox.Timeouts{}) {
		t.Output = sandbox.OutputTimeouts
	}
	return &CodeExecution{backend: b, timeouts: t, shells: map[shellKey]*sandbox.Shell{}}
}

var _ loop.Tool = (*CodeExecution)(nil)

// userShells is implemented by backends that can open a shell as another
// user (the Docker backend).
type userShells interface {
	OpenShellAs(ctx context.Context, user string) (*sandbox.Shell, error)
}

// As returns a code execution tool on the same backend whose shells run as
// user, for a profile that asks for one (sandbox.user: root). It has shells
// of its own; Close it too. ErrNoUser when the backend cannot switch users.
func (ce *CodeExecution) As(user string) (*CodeExecution, error) {
	if _, ok := ce.backend.(userShells); !ok {
		return nil, fmt.Errorf("the %s sandbox runs every command as the same user", ce.backend.Name())
	}
	return &CodeExecution{backend: ce.backend, timeouts: ce.timeouts, user: user, shells: map[shellKey]*sandbox.Shell{}}, nil
}

func (*CodeExecution) Name() string       { return "code_execution_tool" }
func (*CodeExecution) Kind(string) string { return "execute" }

type codeArgs struct {
	Runtime      string `json:"runtime,omitempty" jsonschema:"terminal (a shell command line, the default), python (a Python script), nodejs (a JavaScript script), output (wait for more output of what is still running) or reset (kill and restart the session)"`
	Code         string `json:"code,omitempty" jsonschema:"the command or script; not needed for output and reset"`
	Session      *int   `json:"session,omitempty" jsonschema:"session number, default 0; another number runs things in parallel"`
	AllowRunning bool   `json:"allow_running,omitempty" jsonschema:"true to send code even though the session's previous command has not finished"`
	Reset        bool   `json:"reset,omitempty" jsonschema:"true to restart the session before running code"`
}

var codeSpecs = specOf[codeArgs](nil)

// Specs: runtime is any string, not an enum: the tool takes "Python" too.
func (*CodeExecution) Specs() []loop.ToolSpec { return codeSpecs() }

// Execute runs one request of the model.
func (ce *CodeExecution) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var args codeArgs
	if err := call.DecodeArgs(&args); err != nil {
		return loop.ToolResult{IsError: true, Text: err.Error()}, nil
	}
	n := 0
	if args.Session != nil {
		n = *args.Session
	}
	rt := strings.ToLower(strings.TrimSpace(args.Runtime))
	if rt == "" {
		rt = "terminal"
	}
	if args.Reset && rt != "reset" {
		ce.closeShell(call.Agent, n)
	}
	var command string
	switch rt {
	case "terminal":
		command = args.Code
	case "python":
		command = "python3 -c " + shellQuote(args.Code)
	case "nodejs":
		command = "node -e " + shellQuote(args.Code)
	case "output":
		sh := ce.existing(call.Agent, n)
		if sh == nil || !sh.Running() {
			return ce.note(call, "fw.code.no_output.md", nil, ""), nil
		}
		return ce.wait(ctx, call, n, sh, ce.timeouts.Output)
	case "reset":
		ce.closeShell(call.Agent, n)
		return loop.ToolResult{Text: call.Agent.Prompt("fw.code.reset.md", nil)}, nil
	default:
		return loop.ToolResult{IsError: true, Text: call.Agent.Prompt("fw.code.runtime_wrong.md", map[string]any{"runtime": args.Runtime})}, nil
	}
	if strings.TrimSpace(command) == "" {
		return loop.ToolResult{IsError: true, Text: "tool_args.code is empty: put the command or code to run in it"}, nil
	}
	return ce.run(ctx, call, n, command, args.AllowRunning)
}

// RepeatSafe lets the model poll a running command with identical
// `output` requests: they are run again and count as a repeat only when
// nothing changed.
func (*CodeExecution) RepeatSafe(_ string, args map[string]any) bool {
	rt, _ := args["runtime"].(string)
	return strings.EqualFold(strings.TrimSpace(rt), "output")
}

var _ loop.RepeatSafe = (*CodeExecution)(nil)

// run starts command in shell n and waits for it. A busy shell is reported
// to the model unless allowRunning, in which case the text is typed into
// the running program.
func (ce *CodeExecution) run(ctx context.Context, call *loop.ToolCall, n int, command string, allowRunning bool) (loop.ToolResult, error) {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil { // the user spoke or cancelled before anything started
			return loop.ToolResult{Text: "[not started: " + context.Cause(ctx).Error() + "]"}, nil
		}
		sh, err := ce.shell(ctx, call.Agent, n)
		if err != nil && ctx.Err() != nil {
			// The user spoke or cancelled while the sandbox started (an
			// image pull): the command did not start; the start goes on.
			return ce.note(call, "fw.code.not_started.md", map[string]any{"reason": context.Cause(ctx).Error()}, ""), nil
		}
		if err != nil {
			return loop.ToolResult{}, err
		}
		if sh.Running() {
			if !allowRunning {
				return loop.ToolResult{IsError: true, Text: call.Agent.Prompt("fw.code.running.md", map[string]any{"session": n})}, nil
			}
			if err := sh.Input(command); err != nil {
				return loop.ToolResult{IsError: true, Text: "could not type into session " + strconv.Itoa(n) + ": " + err.Error()}, nil
			}
			return ce.wait(ctx, call, n, sh, ce.timeouts.Terminal)
		}
		err = sh.Start(command)
		if errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrClosed) {
			ce.closeShell(call.Agent, n) // the shell died: start a fresh one, once
			if attempt == 0 {
				continue
			}
		}
		if err != nil {
			return loop.ToolResult{IsError: true, Text: "could not start the command in session " + strconv.Itoa(n) + ": " + err.Error()}, nil
		}
		return ce.wait(ctx, call, n, sh, ce.timeouts.Terminal)
	}
}

// wait reads the command's output, streaming it as tool progress, and turns
// the way the wait ended into a note for the model.
func (ce *CodeExecution) wait(ctx context.Context, call *loop.ToolCall, n int, sh *sandbox.Shell, t sandbox.Timeouts) (loop.ToolResult, error) {
	res, err := sh.Wait(ctx, t, func(s string) { call.Progress(ctx, s) })
	out := strings.TrimRight(res.Output, "\n")
	switch {
	case err == nil:
	case ctx.Err() != nil && loop.Intervened(ctx):
		// The user spoke: the command keeps running, the model reads the
		// message and decides (fw.code.intervened.md says how to wait for
		// it, type into it or stop it).
		return ce.running(call, "fw.code.intervened.md", map[string]any{"session": n}, out), nil
	case ctx.Err() != nil:
		// Cancelled: kill what this run started. The shell survives, unless
		// the command cannot be stopped (a builtin loop ignoring SIGINT).
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if ierr := sh.Interrupt(ictx); ierr != nil {
			ce.closeShell(call.Agent, n)
		}
		return loop.ToolResult{Text: out}, nil
	case errors.Is(err, sandbox.ErrUnavailable), errors.Is(err, sandbox.ErrClosed):
		ce.closeShell(call.Agent, n)
		return loop.ToolResult{Text: strings.TrimSpace(out + "\n[SYSTEM: the shell of session " + strconv.Itoa(n) +
			" ended (" + err.Error() + "); a new one starts with the next command]")}, nil
	default:
		return loop.ToolResult{}, fmt.Errorf("session %d: %w", n, err)
	}
	if res.Done {
		if res.ExitCode != 0 {
			out = strings.TrimSpace(out + "\n" + call.Agent.Prompt("fw.code.exit_code.md", map[string]any{"exit_code": res.ExitCode}))
		}
		if out == "" {
			return ce.note(call, "fw.code.no_output.md", nil, ""), nil
		}
		return loop.ToolResult{Text: out}, nil
	}
	secs := func(d time.Duration) int { return int(d.Round(time.Second) / time.Second) }
	switch res.Reason {
	case sandbox.Dialog:
		return ce.running(call, "fw.code.pause_dialog.md", map[string]any{"timeout": secs(t.Dialog)}, out), nil
	case sandbox.FirstOutputTimeout:
		return ce.running(call, "fw.code.no_out_time.md", map[string]any{"timeout": secs(t.FirstOutput)}, out), nil
	case sandbox.BetweenOutputTimeout:
		return ce.running(call, "fw.code.pause_time.md", map[string]any{"timeout": secs(t.BetweenOutput)}, out), nil
	default:
		return ce.running(call, "fw.code.max_time.md", map[string]any{"timeout": secs(t.Max)}, out), nil
	}
}

// running is note for a wait that returned while the command goes on: the
// result says so (ToolResult.Running), for the faces as for the model.
func (ce *CodeExecution) running(call *loop.ToolCall, name string, vars map[string]any, out string) loop.ToolResult {
	r := ce.note(call, name, vars, out)
	r.Running = true
	return r
}

// note appends a system note (rendered from a fw.code.* prompt, wrapped in
// fw.code.info.md) to the output.
func (ce *CodeExecution) note(call *loop.ToolCall, name string, vars map[string]any, out string) loop.ToolResult {
	info := call.Agent.Prompt("fw.code.info.md", map[string]any{"info": call.Agent.Prompt(name, vars)})
	return loop.ToolResult{Text: strings.TrimSpace(out + "\n" + info)}
}

func (ce *CodeExecution) existing(a *loop.Agent, n int) *sandbox.Shell {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	return ce.shells[shellKey{a, n}]
}

// shellOpen is a shell being opened, in a goroutine of its own, which the
// callers for the same agent and number wait for.
type shellOpen struct {
	done   chan struct{}
	cancel context.CancelCauseFunc
	sh     *sandbox.Shell
	err    error
	// discard: the agent or the tool was closed while the shell opened;
	// it is closed, not kept.
	discard bool
}

// shell returns the agent's shell n, opening it when there is none. The
// opening (on Docker the first one may pull the image) holds no lock, so
// other agents and sessions open theirs meanwhile, and runs in a goroutine
// of its own that the caller waits for with its ctx, hearing of a pull
// (sandbox.PullListener) while it waits. When ctx ends for a user's
// message (loop.Intervened) the opening goes on, and the next command
// finds its shell; for any other reason (a cancel, a disconnect) it ends
// with it.
func (ce *CodeExecution) shell(ctx context.Context, a *loop.Agent, n int) (*sandbox.Shell, error) {
	key := shellKey{a, n}
	ce.mu.Lock()
	sh := ce.shells[key]
	ce.mu.Unlock()
	if sh != nil {
		return sh, nil
	}
	// Listening before the opening starts: a pull that begins and ends
	// at once is heard whole.
	if fn := sandbox.PullListener(ctx); fn != nil {
		if w, ok := ce.backend.(sandbox.PullWatcher); ok {
			defer w.WatchPull(fn)()
		}
	}
	ce.mu.Lock()
	if sh := ce.shells[key]; sh != nil { // opened meanwhile
		ce.mu.Unlock()
		return sh, nil
	}
	op := ce.opening[key]
	if op == nil {
		op = ce.startOpen(key)
	}
	ce.mu.Unlock()
	select {
	case <-op.done:
		return op.sh, op.err
	case <-ctx.Done():
	}
	if !loop.Intervened(ctx) {
		op.cancel(context.Cause(ctx))
	}
	return nil, fmt.Errorf("open shell %d: %w", n, context.Cause(ctx))
}

// startOpen starts opening the shell of key in the background; ce.mu is
// held.
func (ce *CodeExecution) startOpen(key shellKey) *shellOpen {
	octx, cancel := context.WithCancelCause(context.Background())
	op := &shellOpen{done: make(chan struct{}), cancel: cancel}
	if ce.opening == nil {
		ce.opening = map[shellKey]*shellOpen{}
	}
	ce.opening[key] = op
	go ce.open(octx, key, op, key.n)
	return op
}

// Prewarm starts opening agent a's first shell in the background, so that
// its first command finds it ready: a session's first turn need not wait
// for the sandbox's start (bubblewrap takes 15 ms, most of it for the
// network namespace) after the model's answer. A backend that may pull an
// image first (Docker) is not prewarmed: the pull is reported to the tool
// call that waits for it.
func (ce *CodeExecution) Prewarm(a *loop.Agent) {
	if ce.backend == nil || a == nil {
		return
	}
	if _, pulls := ce.backend.(sandbox.PullWatcher); pulls {
		return
	}
	key := shellKey{a, 0}
	ce.mu.Lock()
	defer ce.mu.Unlock()
	if ce.closed || ce.shells[key] != nil || ce.opening[key] != nil {
		return
	}
	ce.startOpen(key)
}

// open opens the shell that op stands for, and keeps it for the agent.
func (ce *CodeExecution) open(ctx context.Context, key shellKey, op *shellOpen, n int) {
	defer op.cancel(nil)
	var sh *sandbox.Shell
	var err error
	if us, ok := ce.backend.(userShells); ok && ce.user != "" {
		sh, err = us.OpenShellAs(ctx, ce.user)
	} else {
		sh, err = ce.backend.OpenShell(ctx)
	}
	if err != nil {
		err = fmt.Errorf("open shell %d: %w", n, err)
	}
	ce.mu.Lock()
	delete(ce.opening, key)
	if err == nil && (op.discard || ce.closed) {
		err = fmt.Errorf("open shell %d: %w", n, sandbox.ErrClosed)
		defer sh.Close() // after the lock: closing waits for the shell
		sh = nil
	}
	if err == nil {
		ce.shells[key] = sh
	}
	op.sh, op.err = sh, err
	close(op.done)
	ce.mu.Unlock()
}

func (ce *CodeExecution) closeShell(a *loop.Agent, n int) {
	ce.mu.Lock()
	sh := ce.shells[shellKey{a, n}]
	delete(ce.shells, shellKey{a, n})
	ce.mu.Unlock()
	if sh != nil {
		_ = sh.Close()
	}
}

// Activities names what still runs in the agent's shells (loop.Busy): the
// command a shell waits for and the jobs left in the background, each as
// "shell N: pid command line".
func (ce *CodeExecution) Activities(a *loop.Agent) []string {
	ce.mu.Lock()
	type numbered struct {
		n  int
		sh *sandbox.Shell
	}
	var shells []numbered
	for k, sh := range ce.shells {
		if k.agent == a {
			shells = append(shells, numbered{k.n, sh})
		}
	}
	ce.mu.Unlock()
	slices.SortFunc(shells, func(x, y numbered) int { return x.n - y.n })
	var out []string
	for _, s := range shells {
		for _, p := range s.sh.Processes() {
			out = append(out, fmt.Sprintf("shell %d: %s", s.n, p))
		}
	}
	return out
}

// CloseAgent closes the shells of an agent that is discarded.
func (ce *CodeExecution) CloseAgent(a *loop.Agent) {
	ce.mu.Lock()
	var shells []*sandbox.Shell
	for k, sh := range ce.shells {
		if k.agent == a {
			shells = append(shells, sh)
			delete(ce.shells, k)
		}
	}
	for k, op := range ce.opening {
		if k.agent == a {
			op.discard = true
			op.cancel(sandbox.ErrClosed)
		}
	}
	ce.mu.Unlock()
	for _, sh := range shells {
		_ = sh.Close()
	}
}

var _ loop.AgentCloser = (*CodeExecution)(nil)

// Close closes every shell the tool opened.
func (ce *CodeExecution) Close() error {
	ce.mu.Lock()
	ce.closed = true
	shells := slices.Collect(maps.Values(ce.shells))
	clear(ce.shells)
	for _, op := range ce.opening {
		op.discard = true
		op.cancel(sandbox.ErrClosed)
	}
	ce.mu.Unlock()
	var errs []error
	for _, sh := range shells {
		errs = append(errs, sh.Close())
	}
	return errors.Join(errs...)
}

// Input is Agent Zero's `input` tool: it types into the program running in
// a code execution session (or runs the text as a command when none runs).
type Input struct{ ce *CodeExecution }

// InputTool returns the `input` tool bound to ce's shells.
func (ce *CodeExecution) InputTool() Input { return Input{ce: ce} }

var _ loop.Tool = Input{}

func (Input) Name() string       { return "input" }
func (Input) Kind(string) string { return "execute" }

type inputArgs struct {
	Keyboard *string `json:"keyboard" jsonschema:"the text to type; Enter is sent after it"`
	Session  *int    `json:"session,omitempty" jsonschema:"session number, default 0"`
}

var inputSpecs = specOf[inputArgs](nil)

func (Input) Specs() []loop.ToolSpec { return inputSpecs() }

func (in Input) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var args inputArgs
	if err := call.DecodeArgs(&args); err != nil {
		return loop.ToolResult{IsError: true, Text: err.Error()}, nil
	}
	if args.Keyboard == nil {
		return loop.ToolResult{IsError: true, Text: "tool_args.keyboard is required: the text to type"}, nil
	}
	n := 0
	if args.Session != nil {
		n = *args.Session
	}
	return in.ce.run(ctx, call, n, *args.Keyboard, true)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// PromptFile is Agent Zero's name for the tool's prompt.
func (*CodeExecution) PromptFile() string { return "agent.system.tool.code_exe.md" }

var _ loop.PromptVarser = (*CodeExecution)(nil)

// PromptVars tell the prompts how the commands are confined, for the
// environment text: sandbox_isolation ("bubblewrap" or "none") on the
// local backend, and sandbox_user when the profile chose the user commands
// run as (sandbox.user).
func (ce *CodeExecution) PromptVars() map[string]any {
	v := map[string]any{}
	if l, ok := ce.backend.(*sandbox.Local); ok {
		v["sandbox_isolation"], _ = l.Isolation()
	}
	if ce.user != "" {
		v["sandbox_user"] = ce.user
	}
	return v
}
