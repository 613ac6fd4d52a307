package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/instructions"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/skills"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/tools/texteditor"
	"github.com/zeroagent/zero/trust"
)

// App is what the commands share: the workspace, the effective
// configuration and the profiles, and the pieces built from them.
type App struct {
	Workspace, UserDir string
	roots              []string // more workspace folders, writable by the agent
	Config             *config.Effective
	Loader             *profiles.Loader
	Logger             *slog.Logger
	env                Env      // what the assembly reads (see Env)
	agentEnv           []string // the agent's environment: no model keys
	Warn               *warner
	Trust              *trust.Store
	// Instructions are the workspace's and the user's AGENTS.md and the
	// like, for the system prompt.
	Instructions *instructions.Set
	// registryWait bounds sandbox.backend auto's question to the registry
	// (registryCheckTimeout when zero).
	RegistryWait time.Duration

	mu      sync.Mutex
	clients map[string]*llm.Client // by endpoint, model, key variable and limits
	// windows are the models' context windows and token calibrations (window.go).
	windows windowState
	ce      *tools.CodeExecution
	userCE  map[string]*tools.CodeExecution // per sandbox.user of a profile
	Backend sandbox.Backend
	// snapshots are the private copies of trusted workspace code, by
	// digest, removed by close.
	snapshots map[string]string

	sandboxMu sync.Mutex // the editor faces open the sandbox on first use
	// sandboxSaid says how the local backend confines commands, once its
	// probe has answered (nil: nothing to say); sessions wait for it.
	sandboxSaid func()

	// pools are the MCP server connections of each session (mcpPool);
	// editorMCP the servers an editor passed for a session.
	pools     map[string]*mcpclient.Pool
	editorMCP map[string][]mcpclient.Server
	// pulls send the sandbox image's pull progress to each session, by id
	// (see pullReporting).
	pulls  map[string]*pullReporter
	closed bool // by close: no pool is made after it
	// secretSet is the agents' secrets (see secrets), loaded once.
	secretSet *secrets.Set

	// mem is the memory (nil without a store); memExt its recall and
	// memorize extensions.
	Memory *memory.Service
	memExt *memory.Extensions

	// observe sees the chat model's deltas (Options.Observe).
	observe func(llm.Delta)
	// ask puts an MCP server's question to the person through the faces of
	// a session (the host's broker); nil declines every question.
	ask func(ctx context.Context, session string, q ask.Question) (ask.Answer, error)

	// wsChecked: the terminal asked about a workspace as broad as the home
	// directory, or the user named it (see preflight); else (an editor
	// chose it) its sessions are warned.
	wsChecked bool
}

// NewAppAt builds the app of workspace ws (absolute) with more roots.
func NewAppAt(ws string, roots []string, flags map[string]string, logger *slog.Logger, env Env) (*App, error) {
	userDir := env.UserConfigDir()
	cfg, err := config.Load(config.Sources{UserDir: userDir, Workspace: ws, Flags: flags, Getenv: env.Get})
	if err != nil {
		return nil, err
	}
	loader := profiles.NewLoader(ws, userDir)
	a := &App{
		Workspace: ws,
		roots:     roots,
		UserDir:   userDir,
		Config:    cfg,
		Loader:    loader,
		Logger:    logger,
		env:       env,
		agentEnv:  agentEnviron(env.List(), keyVariables(cfg, loader)...),
		Warn:      &warner{},
		Trust:     trust.NewStore(userDir),
		clients:   map[string]*llm.Client{},

		Instructions: instructions.New(userDir, append([]string{ws}, roots...)...),
	}
	for _, ig := range cfg.Ignored() {
		a.Warn.warn(ig.String())
	}
	return a, nil
}

// keyVariables names every environment variable Zero reads a model key
// from: the configuration's and the profiles' api_key_env.
func keyVariables(cfg *config.Effective, loader *profiles.Loader) []string {
	names := []string{cfg.Models.Chat.APIKeyEnv, cfg.Models.Utility.APIKeyEnv, cfg.Models.Embedding.APIKeyEnv}
	infos, _ := loader.List() // a broken profile is reported where it is used
	for _, in := range infos {
		p, err := loader.Load(in.Name)
		if err != nil {
			continue
		}
		for _, m := range p.Spec.Models {
			names = append(names, m.APIKeyEnv)
		}
	}
	// A workspace's profile may name any variable; the few a shell cannot
	// work without are never keys.
	return slices.DeleteFunc(names, func(n string) bool {
		return n == "" || n == "PATH" || n == "HOME" || n == "USER" || n == "SHELL" || n == "TERM" || n == "LANG"
	})
}

// OpenSandbox starts the configured backend and the code execution tool
// on it.
func (a *App) OpenSandbox(ctx context.Context) error {
	backend, err := a.ChooseBackend(ctx)
	if err != nil {
		return err
	}
	a.Backend = backend
	a.ce = tools.NewCodeExecution(backend, tools.Timeouts{Terminal: sandbox.Timeouts(a.Config.Sandbox.Timeouts), Output: sandbox.Timeouts(a.Config.Sandbox.OutputTimeouts)})
	return nil
}

// ChooseBackend opens the configured sandbox: docker, local, or auto
// (docker when an engine answers and has the image or its registry does,
// else local with a warning). Nothing heavy happens here: the engine is
// pinged and asked about the image, which is pulled (and the container
// made) by the first command that needs a shell, its progress shown on
// that command (see pullReporting). An image that cannot be had is then
// that command's error, saying what to do.
func (a *App) ChooseBackend(ctx context.Context) (sandbox.Backend, error) {
	local := func() (sandbox.Backend, error) {
		l, err := a.localBackend()
		if err != nil {
			return nil, err
		}
		// Said once the bwrap probe has answered, which goes on while the
		// host is made; a session waits for it to be said before it is
		// made (sandboxSaid), so the warning is its first event, as ever.
		a.sandboxSaid = sync.OnceFunc(func() {
			if mode, _ := l.Isolation(); mode == sandbox.IsolationBubblewrap {
				// Not a warning: it is the sandbox working (zero doctor says
				// what it isolates). A warning event goes out only when
				// commands would run unconfined.
				a.Logger.Info("local backend under " + l.IsolationSummary())
			} else {
				ask := "; Zero asks before each command"
				if a.Config.Approval == "auto" {
					ask = "; approval auto: they run without asking"
				}
				a.Warn.warn("local backend without isolation: " + l.IsolationSummary() + ask)
			}
		})
		go a.sandboxSaid()
		return l, nil
	}
	switch b := a.Config.Sandbox.Backend; b {
	case "local":
		return local()
	case "docker", "auto", "":
		d, err := a.Docker()
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, engineCheckTimeout)
			_, err = d.ListContainers(pctx) // does an engine answer?
			cancel()
			if err == nil && b != "docker" {
				// The engine answered: only an image that cannot be had
				// chooses the local backend. A registry that is slow to
				// say does not (the first command pulls, showing how).
				rctx, cancel := context.WithTimeout(ctx, cmp.Or(a.RegistryWait, registryCheckTimeout))
				err = a.imageCanBeHad(rctx, d)
				cancel()
				if _, ok := errors.AsType[*sandbox.PullError](err); !ok && err != nil && ctx.Err() == nil {
					a.Warn.warn(fmt.Sprintf("could not learn whether the registry has the sandbox image (%v); using Docker: the first command pulls it", err))
					err = nil
				}
			}
			if err != nil {
				d.Close()
			}
		}
		var pull *sandbox.PullError
		switch {
		case err == nil:
			return d, nil
		case ctx.Err() != nil:
			return nil, fmt.Errorf("choosing the sandbox: %w", context.Cause(ctx))
		case b == "docker":
			return nil, fmt.Errorf("sandbox.backend docker (%s): %w", a.Config.Origin("sandbox.backend"), err)
		case errors.As(err, &pull):
			a.Warn.warn(fmt.Sprintf("the Docker engine has no image %s and cannot pull it (%v); using the local backend (sandbox.backend auto). For Docker, pull it once online (docker pull %s) or choose an image the engine has with --image IMAGE", pull.Image, pull.Err, pull.Image))
			return local()
		}
		a.Warn.warn(fmt.Sprintf("no Docker engine answered (%v); using the local backend", err))
		return local()
	default:
		return nil, fmt.Errorf("sandbox.backend %q (%s): want auto, docker or local", b, a.Config.Origin("sandbox.backend"))
	}
}

// engineCheckTimeout bounds asking the engine whether it answers;
// registryCheckTimeout, for sandbox.backend auto, asking it whether the
// image can be had (the engine asks the registry).
const (
	engineCheckTimeout   = 5 * time.Second
	registryCheckTimeout = 10 * time.Second
)

// imageCanBeHad is nil when the engine has the sandbox image or its
// registry does (the engine fetches the manifest, not the layers): with
// sandbox.backend auto, an image that cannot be had chooses the local
// backend now rather than failing the first command.
func (a *App) imageCanBeHad(ctx context.Context, d *sandbox.Docker) error {
	st, err := d.ImageStatus(ctx)
	if err != nil || st.Present {
		return err
	}
	return d.CanPull(ctx)
}

// localBackend builds the local backend from the configuration: under
// bubblewrap when it works here, with the network only when
// sandbox.network is "host" (the host's network is all it could share;
// Docker's default "bridge" has no local equivalent) and the credential
// folders and sockets hidden, plus sandbox.hide.
func (a *App) localBackend() (*sandbox.Local, error) {
	// The spilled output of other workspaces' sessions too: the host is
	// readable under bubblewrap, and a container sees only its mounts.
	hide := a.hidden()
	for _, w := range spillWorkspaces() {
		if w != a.Workspace && !slices.Contains(a.roots, w) {
			hide = append(hide, filepath.Join(w, ".zero", "output"))
		}
	}
	return sandbox.NewLocal(sandbox.LocalOptions{Dir: a.Workspace, Roots: a.roots, BaseEnv: a.agentEnv, Isolation: sandbox.IsolationAuto,
		Network: a.Config.Sandbox.Network == "host",
		Hide:    hide,
		Logger:  a.Logger.With("component", "sandbox")})
}

// hidden lists the paths the agent's commands must not see: the built-in
// credential folders and sockets, Zero's own config folder (the trust
// records), and sandbox.hide with ~ expanded.
func (a *App) hidden() []string {
	home := a.env.Home()
	list := sandbox.DefaultHidden(home, a.env.Get("XDG_RUNTIME_DIR"), a.UserDir)
	list = append(list, zeroState(a.env)...)
	for _, p := range a.Config.Sandbox.Hide {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				continue
			}
			p = filepath.Join(home, rest)
		}
		list = append(list, filepath.Clean(p))
	}
	return list
}

// zeroState lists what Zero keeps for the user outside its config folder,
// which the agent must not read or write from either sandbox, also when the
// workspace is home or holds them: the store's folder (every workspace's
// sessions and memories; for a store set with ZERO_STORE, the file, its
// -wal, -shm and -journal and its claim files), the state folder (the
// chat's log), and the temporary folder unless it is /tmp (the trusted
// snapshots, the instance leases and other sessions' spilled output live
// there; bubblewrap gives every shell a private /tmp, and a container sees
// only its mounts).
func zeroState(env Env) []string {
	var out []string
	if path, err := env.StorePath(); err == nil {
		if def, err := env.defaultStorePath(); err == nil && def == path {
			out = append(out, filepath.Dir(path))
		} else if abs, err := filepath.Abs(path); err == nil {
			out = append(out, abs, abs+"-wal", abs+"-shm", abs+"-journal", abs+".locks")
		}
	}
	if dir := env.StateDir(); dir != "" {
		out = append(out, dir)
	}
	if dir, _ := env.CheckpointDir(); dir != "" {
		out = append(out, dir) // often inside one of the above: said twice, hidden once
	}
	if tmp := filepath.Clean(os.TempDir()); tmp != "/tmp" && filepath.IsAbs(tmp) {
		out = append(out, tmp)
	}
	return out
}

// Docker builds the Docker backend from the configuration.
func (a *App) Docker() (*sandbox.Docker, error) {
	c := a.Config.Sandbox
	mem, err := parseSize(c.Memory)
	if err != nil {
		return nil, fmt.Errorf("sandbox.memory (%s): %w", a.Config.Origin("sandbox.memory"), err)
	}
	return sandbox.NewDocker(sandbox.DockerOptions{
		Workspace: a.Workspace,
		Mounts:    a.roots,
		Image:     c.Image,
		User:      c.User,
		Network:   c.Network,
		Memory:    mem,
		CPUs:      c.CPUs,
		Pids:      int64(c.Pids),
		Provision: c.Provision,
		Hide:      a.hidden(),
		Logger:    a.Logger.With("component", "sandbox"),
		OnPull: func(p sandbox.PullProgress) {
			if p.Total == 0 && p.Status != "" && p.Layer == "" { // "Pulling from …", "Digest: …": not warnings
				a.Logger.Info("pulling the sandbox image", "image", p.Image, "status", p.Status)
			}
		},
	})
}

// confined reports whether the agent's commands see only the workspace (a
// container, or bubblewrap with a private /tmp).
func confined(b sandbox.Backend) bool {
	if l, ok := b.(*sandbox.Local); ok {
		mode, _ := l.Isolation()
		return mode == sandbox.IsolationBubblewrap
	}
	return b != nil
}

// parseSize reads "512m", "4g", "1024k" or a byte count; "" is 0 (the
// backend's default).
func parseSize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return 0, nil
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k':
		mult = 1 << 10
	case 'm':
		mult = 1 << 20
	case 'g':
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "b"), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size like 512m or 4g", s)
	}
	return n * mult, nil
}

// pullReporting is the code execution tool and its input tool for session
// sid: on the Docker backend, a command that waits for the sandbox image
// to be pulled shows the pull's progress as sandbox_pull events on its tool
// call, and an image that cannot be pulled is its error, saying what to do.
func (a *App) pullReporting(sid string, ce *tools.CodeExecution) []loop.Tool {
	a.mu.Lock()
	r := a.pulls[sid]
	a.mu.Unlock()
	if _, docker := a.Backend.(*sandbox.Docker); !docker || r == nil {
		return []loop.Tool{ce, ce.InputTool()}
	}
	return []loop.Tool{pullingCE{ce, r}, pullingInput{ce.InputTool(), r}}
}

// pullReporter tells one session how a pull it waits for goes.
type pullReporter struct {
	a    *App
	emit func(loop.Event) // the session's sink
}

// pullingCE and pullingInput are the code execution and input tools with
// their pulls reported (by r); the rest of what the tools are is theirs.
type (
	pullingCE struct {
		*tools.CodeExecution
		r *pullReporter
	}
	pullingInput struct {
		tools.Input
		r *pullReporter
	}
)

func (t pullingCE) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	return t.r.execute(ctx, call, t.CodeExecution.Execute)
}

func (t pullingInput) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	return t.r.execute(ctx, call, t.Input.Execute)
}

// execute runs a tool call whose shell may wait for the image.
func (r *pullReporter) execute(ctx context.Context, call *loop.ToolCall, run func(context.Context, *loop.ToolCall) (loop.ToolResult, error)) (loop.ToolResult, error) {
	agent := call.Agent.Number
	ctx = sandbox.WithPullListener(ctx, func(st sandbox.PullStatus) {
		status := server.PullPulling
		switch {
		case st.Finished && st.Error != "":
			status = server.PullFailed
		case st.Finished:
			status = server.PullDone
		}
		args, _ := json.Marshal(st)
		r.emit(loop.Event{Type: server.EventSandboxPull, Agent: agent, Item: call.ID, Time: time.Now(),
			Text: st.String(), Args: args, Status: status})
	})
	res, err := run(ctx, call)
	if pe, ok := errors.AsType[*sandbox.PullError](err); ok {
		// Not an error of the run: the model can still read and write
		// files, and tells the user what to do.
		return loop.ToolResult{IsError: true, Text: fmt.Sprintf("%v. Commands cannot run in the Docker sandbox until the engine has "+
			"the image: pull it once online (docker pull %s), choose an image the engine has (--image IMAGE, or sandbox.image "+
			"in config.yaml), or run the commands on this machine (--sandbox local). Tell the user.", pe, pe.Image)}, nil
	}
	return res, err
}

// codeExecutionAs is the code execution tool whose shells run as user,
// one per user, for profiles with sandbox.user.
func (a *App) codeExecutionAs(user string) (*tools.CodeExecution, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ce := a.userCE[user]; ce != nil {
		return ce, nil
	}
	ce, err := a.ce.As(user)
	if err != nil {
		return nil, err
	}
	if a.userCE == nil {
		a.userCE = map[string]*tools.CodeExecution{}
	}
	a.userCE[user] = ce
	return ce, nil
}

// Close stops what the app started on this machine and in the sandbox:
// the MCP servers of every session, the shells and the backend, all at
// once, each within its own library's waits (a stdio server gets its time
// to exit after its stdin closes, then SIGTERM, then a kill; see
// mcpclient), and returns when they are gone. The backend goes before the
// tools' shells: Docker's Close kills every shell's commands with one exec
// and closes the shells in parallel, where the tools would close them one
// by one.
func (a *App) Close() {
	defer a.removeSnapshots()
	a.mu.Lock()
	pools := a.pools
	a.pools, a.closed = nil, true
	userCE := slices.Collect(maps.Values(a.userCE)) // runs past the grace may still add one
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range pools {
		wg.Go(func() { p.Close() })
	}
	wg.Go(func() {
		if a.Backend != nil {
			a.Backend.Close()
		}
		for _, ce := range userCE {
			ce.Close()
		}
		if a.ce != nil {
			a.ce.Close()
		}
	})
	if a.memExt != nil {
		a.memExt.Close()
	}
	wg.Wait()
}

// endpoint is what a model role of a profile resolves to.
type endpoint struct {
	m             config.Model // with the profile's and the session's choices
	keyEnv, key   string       // the variable the key is read from; the key, "" when none is sent
	urlOrigin     string       // where m.BaseURL came from
	fromWorkspace bool         // the workspace chose the endpoint, so it gets no key
}

// endpoint resolves the model settings of role for a profile's override
// and the session's model ("" for the configured one); config merges them
// (config.Effective.Endpoint) and this tells its notes. It fails with
// ErrNoModel when no model is set and ErrNoKey when OpenAI's endpoint would
// get no key, returning what it resolved all the same.
func (a *App) endpoint(role string, p *profiles.Profile, model string) (endpoint, error) {
	o := p.Spec.Models[role]
	r, err := a.Config.Endpoint(role, config.ModelOverride{Model: o.Model, BaseURL: o.BaseURL, APIKeyEnv: o.APIKeyEnv,
		Profile: p.Name, Path: p.Path, Workspace: p.Layer == profiles.LayerProjectProfile}, model)
	for _, n := range r.Notes {
		a.Warn.warn(n)
	}
	ep := endpoint{m: r.Model, keyEnv: r.KeyEnv, key: r.Key, urlOrigin: r.URLOrigin, fromWorkspace: r.FromWorkspace}
	switch {
	case errors.Is(err, config.ErrNoModel):
		return ep, ErrNoModel
	case errors.Is(err, config.ErrNoKey):
		return ep, ErrNoKey
	}
	return ep, err
}

// client returns the model client of role for a profile's override,
// reusing clients with the same settings.
//
// A workspace may be a repository anyone wrote, so it does not get to send
// your keys anywhere: an endpoint chosen by the workspace (its config.yaml
// or a profile in its .zero/agents) gets no key, and a workspace cannot
// name the variable a key is read from. Your environment, flags and user
// configuration choose both.
func (a *App) client(role string, p *profiles.Profile, model string) (*llm.Client, error) {
	ep, err := a.endpoint(role, p, model)
	if err != nil {
		return nil, err
	}
	m, keyEnv, key := ep.m, ep.keyEnv, ep.key
	rl := llm.RateLimit{Requests: m.RateLimit.Requests, InputTokens: m.RateLimit.InputTokens, OutputTokens: m.RateLimit.OutputTokens}
	id := fmt.Sprintf("%s\x00%s\x00%s\x00%v\x00%v", m.BaseURL, m.Model, keyEnv, rl, m.Timeouts)
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[id]; c != nil {
		return c, nil
	}
	model = m.Model
	c, err := llm.New(llm.Options{
		Model: m.Model, BaseURL: m.BaseURL, APIKey: key, RateLimit: rl,
		// 0 is the default and negative no limit, in config as in llm.
		HeaderTimeout: m.Timeouts.Header,
		IdleTimeout:   m.Timeouts.Idle,
		TotalTimeout:  m.Timeouts.Total,
		OnRateLimit: func(wait time.Duration) {
			a.Warn.warn(fmt.Sprintf("rate limit of %s: waiting %s", model, wait.Round(time.Second)))
		},
		Logger: a.Logger.With("component", "llm", "role", role),
	})
	if err != nil {
		return nil, err
	}
	a.clients[id] = c
	return c, nil
}

// model is client for the loop: when nothing answers at the endpoint, its
// error names the endpoint and the setting that chose it, which is what
// there is to fix.
func (a *App) model(role string, p *profiles.Profile, model string) (loop.Model, error) {
	c, err := a.client(role, p, model)
	if err != nil {
		return nil, err
	}
	ep, _ := a.endpoint(role, p, model) // resolved by client without error
	key := "models." + role + ".base_url"
	var where string
	switch o := ep.urlOrigin; {
	case o == "default":
		where = "the default " + key + "; OPENAI_BASE_URL or --base-url choose another"
	case strings.HasPrefix(o, "profile "), strings.HasPrefix(o, "same as "):
		where = key + ": " + o
	default:
		where = key + " from " + o
	}
	reach := reachModel{Client: c, url: shownURL(cmp.Or(ep.m.BaseURL, llm.DefaultBaseURL)), where: where}
	return countedModel{reachModel: reach, cal: a.calibrator(ep.m)}, nil
}

// reachModel is a model client whose "cannot reach" error says where it
// tried and which setting chose that.
type reachModel struct {
	*llm.Client
	url, where string
}

func (m reachModel) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	res, err := m.Client.Stream(ctx, req, fn)
	if ue, ok := errors.AsType[*llm.UnreachableError](err); ok {
		err = &explained{msg: fmt.Sprintf("cannot reach the model at %s: %s; %s (%s)", m.url, ue.Reason, ue.Hint, m.where), err: err}
	}
	return res, err
}

// explained is an error told in other words, still matching its cause.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// shownURL is a base URL fit for a message: without credentials, query or
// fragment, where a key could have been written.
func shownURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the configured base_url"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// setup builds what an agent of profile name works with: its prompts, its
// models, the tools it may use and its extensions. withModel false skips
// the model clients (for `zero prompt`).
func (a *App) setup(name string, withModel bool) (loop.Setup, error) {
	return a.SetupFor("", name, "", nil, withModel)
}

// SetupFor is setup with the chat model chosen in the editor ("" for the
// configured one) and the editor's file access for text_editor (nil for
// the disk).
func (a *App) SetupFor(sid, name, model string, files texteditor.Files, withModel bool) (loop.Setup, error) {
	p, err := a.Loader.Load(name)
	if err != nil {
		return loop.Setup{}, err
	}
	for _, d := range p.Diagnostics {
		a.Warn.warn(d.String())
	}

	st := loop.Setup{Profile: p.Name, Prompts: p.Prompts, Model: noModel{}}
	if withModel {
		if st.Model, err = a.model("chat", p, model); err != nil {
			return loop.Setup{}, err
		}
		chat := st.Model
		if a.observe != nil {
			st.Model = observed{st.Model, a.observe}
		}
		if st.UtilityModel, err = a.model("utility", p, ""); err != nil {
			return loop.Setup{}, err
		}
		st.Prices = loop.Prices{Chat: a.price("chat", modelName(chat)), Utility: a.price("utility", modelName(st.UtilityModel))}
	}
	// Without a model (zero prompt) too: the prompt is the protocol's.
	ep, _ := a.endpoint("chat", p, model)
	st.ToolProtocol, st.Vision = ep.m.ToolProtocol, ep.m.Vision
	// The workspace's extensions and skills count only when the user
	// trusted exactly their content; extensions then run from a private
	// copy of it (see workspaceCode).
	code, _ := a.workspaceCode()
	skillset := a.skills(p.Name, code != "")
	all := []loop.Tool{tools.Response{}, tools.CallSubordinate{}, tools.Todo{}, texteditor.New(append([]string{a.Workspace}, a.roots...)...).WithFiles(files)}
	if a.Memory != nil {
		all = append(all, tools.NewMemory(a.Memory, a.Workspace).Tools()...)
		all = append(all, tools.Behaviour{Adjuster: a.memExt})
	}
	if skillset.Len() > 0 {
		all = append(all, tools.NewSkillsTool(func(*loop.Agent) skills.Catalog { return skillset }))
	}
	// Documents and the web, as far as the agent's sandbox reaches.
	online := a.networked()
	all = append(all, tools.NewDocumentQuery(tools.DocumentQueryOptions{
		Roots: append([]string{a.Workspace}, a.roots...), Network: online,
		AllowPrivate: a.Config.DocumentQuery.AllowPrivate, Timeout: a.Config.DocumentQuery.Timeout,
	}))
	if st.Vision != loop.VisionOff {
		// Agent Zero offers it to a model that sees. Files outside the
		// workspace are refused: the agent copies a picture it made
		// elsewhere into the workspace first.
		all = append(all, tools.NewVisionLoad(tools.VisionLoadOptions{Roots: append([]string{a.Workspace}, a.roots...)}))
	}
	if a.Config.Search.URL != "" {
		all = append(all, tools.NewSearchEngine(tools.SearchOptions{URL: a.Config.Search.URL, Network: online, Timeout: a.Config.Search.Timeout}))
	}
	if a.ce != nil {
		ce := a.ce
		if u := p.Spec.Sandbox.User; u != "" {
			if ce, err = a.codeExecutionAs(u); err != nil {
				a.Warn.warn(fmt.Sprintf("profile %s: sandbox.user %q: %v; its commands run as the others'", p.Name, u, err))
				ce = a.ce
			}
		}
		all = append(all, a.pullReporting(sid, ce)...)
	} else { // zero prompt: describe the tools without a sandbox
		ce := tools.NewCodeExecution(nil, tools.Timeouts{})
		all = append(all, ce, ce.InputTool())
	}
	all = append(all, a.userTools(p, code, sid, all)...)
	for _, t := range all {
		// The response tool stays: without it an agent could never answer.
		if t.Name() == "response" || p.Spec.Tools.Allows(t.Name()) {
			st.Tools = append(st.Tools, t)
		}
	}
	layers := hooks.Layers(code, p.Name, a.UserDir)
	reg := loop.Builtins()
	instructions.Register(reg, a.Instructions)
	a.Instructions.Look() // the subfolders' AGENTS.md, beside the rest of the start
	if a.memExt != nil {
		a.memExt.Register(reg)
	}
	if skillset.Len() > 0 && p.Spec.Tools.Allows("skills_tool") {
		skills.Register(reg, func(*loop.Agent) skills.Catalog { return skillset })
	}
	// The MCP servers of the user's configuration: one pool per session,
	// shared by its agents; their tools pass the profile's filter.
	if !withModel {
		// zero prompt: nothing is started for it
	} else if pool := a.mcpPool(sid, code); pool != nil {
		st.ToolSource = mcpclient.Source{Pool: pool, Allow: p.Spec.Tools.Allows, OnError: func(err error) { a.Warn.warn(err.Error()) }}
		mcpclient.Register(reg)
	}
	st.Hooks, err = hooks.Resolve(reg, layers, hooks.Options{
		Logger:  a.Logger.With("component", "hooks"),
		BaseEnv: a.agentEnv,
		Env:     []string{"ZERO_WORKSPACE=" + a.Workspace},
		OnWarning: func(w hooks.Warning) {
			if code != "" { // name the workspace's file, not the copy's
				w.Path = strings.Replace(w.Path, code, a.Workspace, 1)
			}
			a.Warn.warn(w.Error())
		},
	})
	return st, err
}

// Session builds a session whose agent 0 has the configured profile.
func (a *App) Session(sink func(loop.Event), withModel bool) (*loop.Session, error) {
	return a.SessionFor(SessionOpts{ID: NewID()}, sink, withModel)
}

// SessionOpts is what an editor chooses for a session.
type SessionOpts struct {
	ID, Profile, model string // "" for the configured profile and model
	files              texteditor.Files
	journal            loop.HistoryJournal // records the histories in the store
	mcp                []mcpclient.Server  // MCP servers the editor passed
}

// SessionFor builds a session as the editor asked.
func (a *App) SessionFor(o SessionOpts, sink func(loop.Event), withModel bool) (*loop.Session, error) {
	if o.ID != "" && sink != nil {
		a.mu.Lock()
		if a.pulls == nil {
			a.pulls = map[string]*pullReporter{}
		}
		a.pulls[o.ID] = &pullReporter{a: a, emit: sink}
		a.mu.Unlock()
	}
	if len(o.mcp) > 0 {
		a.AddMCPCredentials(o.mcp) // before the session takes its secrets
		a.mu.Lock()
		if a.editorMCP == nil {
			a.editorMCP = map[string][]mcpclient.Server{}
		}
		a.editorMCP[o.ID] = o.mcp
		a.mu.Unlock()
	}
	st, err := a.SetupFor(o.ID, cmp.Or(o.Profile, a.Config.Profile), o.model, o.files, withModel)
	if err != nil {
		// No session, so no OnClose: what was kept for it goes now.
		a.closePool(o.ID)
		return nil, err
	}
	infos, err := a.Loader.List()
	if err != nil { // a broken profile elsewhere must not stop this one
		a.Warn.warn(err.Error())
	}
	if withModel && !a.wsChecked { // an editor chose the folder: nobody was asked
		if what := broadWorkspace(a.Workspace); what != "" {
			a.Warn.warn("the workspace is " + what + ": the agent can read and change everything in it; open a project's folder instead")
		}
	}
	for _, root := range a.roots { // more folders the editor added: nobody was asked either
		if what := broadWorkspace(root); what != "" {
			a.Warn.warn("a workspace folder (" + root + ") is " + what + ": the agent can read and change everything in it; add a project's folder instead")
		}
	}
	backend := "local"
	if a.Backend != nil {
		backend = a.Backend.Name()
	}
	id := o.ID
	var spilled atomic.Int64
	fit := a.sessionFit(cmp.Or(o.Profile, a.Config.Profile), o.model, withModel)
	sess := loop.NewSession(id, loop.Config{
		Setup: st,
		Subordinate: func(profile string) (loop.Setup, error) {
			st, err := a.SetupFor(o.ID, profile, "", o.files, withModel)
			if errors.Is(err, profiles.ErrNoProfile) {
				names := make([]string, len(infos))
				for i, in := range infos {
					names[i] = in.Name
				}
				return st, fmt.Errorf("no profile %q; the profiles are: %s", profile, strings.Join(names, ", "))
			}
			return st, err
		},
		Vars: a.promptVars(backend, infos),
		// Long tool results are kept whole where the agent's shell can read
		// them: a private temporary folder for the local backend, the
		// workspace's .zero/output for a container (it sees only the
		// workspace).
		Spill: func(ag *loop.Agent, tool, text string) (string, error) {
			// Named by time too: a session loaded by a later process
			// must not overwrite the files its history points to.
			name := fmt.Sprintf("%s-%d-A%d-%s.txt", time.Now().UTC().Format("20060102T150405"), spilled.Add(1), ag.Number, tool)
			return Spill(a.Workspace, id, confined(a.Backend), name, text)
		},
		Workspace: a.Workspace,
		Sandbox:   backend,
		Limits: loop.Limits{
			Misformat:           a.Config.Limits.Misformat,
			Repeat:              a.Config.Limits.Repeat,
			CriticalRetries:     new(a.Config.Limits.CriticalRetries),
			SubordinateDepth:    new(a.Config.Limits.SubordinateDepth),
			ContextTokens:       fit.window,
			MaxOutputTokens:     fit.maxOutput,
			UtilityOutputTokens: fit.utilityOutput,
			Tokens:              a.Config.Limits.Tokens,
			Cost:                a.Config.Limits.Cost,
		},
		CountTokens:   fit.count,
		LearnedWindow: fit.learned,
		Journal:       o.journal,
		Logger:        a.Logger.With("component", "loop"),
		Secrets:       a.Secrets(),
	}, sink)
	if a.sandboxSaid != nil {
		a.sandboxSaid() // said before the session takes the early warnings
	}
	a.Warn.attach(sess)
	if withModel {
		// The first command finds agent 0's shell started, or starting,
		// rather than starting it after the model's answer.
		for _, t := range st.Tools {
			if ce, ok := t.(*tools.CodeExecution); ok {
				ce.Prewarm(sess.Agent0())
			}
		}
	}
	return sess, nil
}

// warner turns diagnostics into warning events; those found before the
// session exists are held until it does.
type warner struct {
	Logger *slog.Logger // also logs them, when set (the editor faces)
	mu     sync.Mutex
	// sess are the sessions told, weakly held: the editor faces close
	// sessions without telling the app.
	sess  []weak.Pointer[loop.Session]
	Early []string
	seen  map[string]bool // each note once: subordinates reload their profile
}

func (w *warner) warn(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[text] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[text] = true
	if w.Logger != nil {
		w.Logger.Warn(text)
	}
	if len(w.sess) == 0 {
		w.Early = append(w.Early, text)
		return
	}
	live := w.sess[:0]
	for _, p := range w.sess {
		if s := p.Value(); s != nil {
			s.Warn(text)
			live = append(live, p)
		}
	}
	w.sess = live
}

func (w *warner) attach(sess *loop.Session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sess = append(w.sess, weak.Make(sess))
	for _, text := range w.Early {
		sess.Warn(text)
	}
	w.Early = nil
}

// noModel stands in where no model is called (zero prompt).
type noModel struct{}

func (noModel) Stream(context.Context, llm.Request, llm.StreamFunc) (llm.Result, error) {
	return llm.Result{}, errors.New("no model in this command")
}

// InitMemory gives the app's agents Agent Zero's memory in st: the memory
// tools, recall and memorize with the utility model, and the behaviour
// rules. With an embedding model (models.embedding) memories are searched by
// meaning too. startMemory starts its background work.
func (a *App) InitMemory(st *store.Store) {
	if st == nil || a.Memory != nil {
		return
	}
	var emb memory.Embedder
	ep, err := a.endpoint("embedding", &profiles.Profile{}, "")
	switch {
	case errors.Is(err, ErrNoModel): // none configured: keywords only
	case err != nil:
		a.Warn.warn(fmt.Sprintf("models.embedding: %v; memory is searched by keywords only", err))
	default:
		price := a.price("embedding", ep.m.Model)
		e, err := llm.NewEmbedder(llm.EmbedderOptions{Model: ep.m.Model, BaseURL: ep.m.BaseURL, APIKey: ep.key,
			// An embedding a run asked for (a recall, a memory saved) counts for it.
			OnUsage: func(ctx context.Context, u llm.Usage) { loop.ReportUsage(ctx, loop.RoleEmbedding, u, price) }})
		if err != nil {
			a.Warn.warn(fmt.Sprintf("models.embedding: %v; memory is searched by keywords only", err))
		} else {
			emb = e
		}
	}
	logger := a.Logger.With("component", "memory")
	a.Memory = memory.New(memory.Options{Store: st, Embedder: emb, Logger: logger})
	c := a.Config.Memory
	s := memory.DefaultSettings()
	s.Recall, s.RecallInterval, s.Memorize, s.Consolidation = c.Recall, c.RecallInterval, c.Memorize, c.Consolidation
	a.memExt = memory.NewExtensions(a.Memory, func(*loop.Agent) string { return a.Workspace }, s)
	a.memExt.Logger = logger
	a.memExt.UserRules = func() string { return readSmall(filepath.Join(a.UserDir, "behaviour.md"), memory.MaxRulesBytes) }
}

// startMemory starts the memory's background work: embedding what the
// embedding model has not embedded yet, and importing the knowledge folders.
func (a *App) startMemory() {
	if a.memExt == nil {
		return
	}
	if a.Memory.Embeddings() {
		a.memExt.Reembed([]string{a.Workspace, ""})
	}
	a.syncKnowledge()
}

// promptVars are the prompt variables app supplies: the profiles a
// subordinate may use, and on the Docker backend the image (and user) the
// commands run in, which the environment prompts name.
func (a *App) promptVars(backend string, infos []profiles.Info) map[string]any {
	v := map[string]any{"agent_profiles": profiles.FormatProfileList(infos)}
	if backend == "docker" {
		v["sandbox_image"] = a.Config.Sandbox.Image
		if u := a.Config.Sandbox.User; u != "" {
			v["sandbox_user"] = u
		}
	}
	return v
}

// skills discovers the skills an agent of profile may load (SKILL.md
// folders), highest first: the workspace's (.zero/agents/<profile>/skills,
// .zero/skills: only when the user trusted its code), the user's profile
// folder's, then the user's own (~/.config/zero/skills). Problems with a
// skill are warned about; the others load.
func (a *App) skills(profile string, trusted bool) skills.Catalog {
	var dirs []skills.Dir
	if trusted {
		dirs = append(dirs,
			skills.Dir{Path: filepath.Join(a.Workspace, ".zero", "agents", profile, "skills"), Layer: "workspace profile", Within: a.Workspace},
			skills.Dir{Path: filepath.Join(a.Workspace, ".zero", "skills"), Layer: "workspace", Within: a.Workspace})
	}
	dirs = append(dirs,
		skills.Dir{Path: filepath.Join(a.UserDir, "agents", profile, "skills"), Layer: "profile", FollowLinks: true},
		skills.Dir{Path: filepath.Join(a.UserDir, "skills"), Layer: "user", FollowLinks: true})
	cat, warns := skills.Discover(dirs...)
	for _, w := range warns {
		a.Warn.warn("skill skipped: " + w.Error())
	}
	return cat
}

// syncKnowledge imports, in the background, the knowledge folders into
// memory: the user's (~/.config/zero/knowledge) and their profile's into
// the user's memory, and a trusted workspace's .zero/knowledge (from the
// copy of what was trusted, without its symbolic links) into the
// workspace's.
func (a *App) syncKnowledge() {
	if a.memExt == nil {
		return
	}
	dirs := []memory.KnowledgeDir{
		{Path: filepath.Join(a.UserDir, "knowledge"), Scope: "", Prefix: "user:"},
		{Path: filepath.Join(a.UserDir, "agents", a.Config.Profile, "knowledge"), Scope: "", Prefix: "profile:" + a.Config.Profile + "/"},
	}
	if code, st := a.workspaceCode(); code != "" {
		links := map[string]bool{}
		for _, f := range st.Manifest.Files {
			if rel, ok := strings.CutPrefix(f.Path, ".zero/knowledge/"); ok && f.Link != "" {
				links[rel] = true
			}
		}
		dirs = append(dirs, memory.KnowledgeDir{Path: filepath.Join(code, ".zero", "knowledge"), Scope: a.Workspace, Prefix: ".zero/knowledge/", Exclude: links})
	}
	a.memExt.ImportInBackground(dirs)
}

// readSmall reads a file of at most limit bytes; "" when it is missing,
// unreadable or larger.
func readSmall(path string, limit int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return ""
	}
	return string(b)
}

// networked reports whether the agent's commands reach the network: a
// container unless its network is "none", bubblewrap only with
// sandbox.network: host, unconfined commands always. The tools that fetch
// in Zero's own process (document_query, search_engine) follow it.
func (a *App) networked() bool {
	if l, ok := a.Backend.(*sandbox.Local); ok {
		if mode, _ := l.Isolation(); mode == sandbox.IsolationBubblewrap {
			return a.Config.Sandbox.Network == "host"
		}
		return true
	}
	return a.Config.Sandbox.Network != "none"
}

// mcpPool is the pool of MCP servers of session sid (created on first use;
// nil without a session or without servers). The servers are those the
// editor passed for the session (ACP's mcpServers: the user's editor
// configuration) and those of the user's config.yaml that are not
// disabled; stdio ones run on this machine with the agent's environment
// (no model keys) plus their own env.
func (a *App) mcpPool(sid, code string) *mcpclient.Pool {
	if sid == "" {
		return nil
	}
	a.mu.Lock()
	p, closed := a.pools[sid], a.closed
	servers := slices.Clone(a.editorMCP[sid])
	a.mu.Unlock()
	if p != nil || closed {
		return p
	}
	// The editor's servers first (a name repeated is the first's), then
	// the user's, then a trusted workspace's .mcp.json.
	servers = append(servers, a.configMCP()...)
	// The user's own servers (and the editor's) never start in the
	// workspace: a `python3 -m server` there would import a server.py that
	// a repository, or the agent, put in it. Without a cwd of their own
	// they start in Zero's config folder, which no sandbox shows the agent.
	for i, s := range servers {
		if s.Command != "" && s.Dir == "" {
			servers[i].Dir = a.neutralDir()
		}
	}
	servers = append(servers, a.WorkspaceMCP(code)...)
	if len(servers) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p := a.pools[sid]; p != nil || a.closed { // made meanwhile, or the app closed
		return p
	}
	o := mcpclient.Options{BaseEnv: a.agentEnv, Logger: a.Logger.With("component", "mcp"), Version: Version,
		Roots: func() []string { return append([]string{a.Workspace}, a.roots...) }}
	o.HTTPTransport = a.mcpAuth().Transport // OAuth: the user's logins (zero mcp login), never a browser from a session
	if a.ask != nil {
		o.Ask = func(ctx context.Context, q ask.Question) (ask.Answer, error) { return a.ask(ctx, sid, q) }
	}
	p, errs := mcpclient.NewPool(servers, o)
	for _, err := range errs {
		a.Warn.warn(err.Error())
	}
	if a.pools == nil {
		a.pools = map[string]*mcpclient.Pool{}
	}
	a.pools[sid] = p
	return p
}

// configMCP are the MCP servers of the user's config.yaml that are not
// disabled.
func (a *App) configMCP() []mcpclient.Server {
	var out []mcpclient.Server
	for _, name := range a.Config.MCPServerNames() {
		c := a.Config.MCPServers[name]
		if c.Disabled {
			continue
		}
		c.Name = name
		out = append(out, c)
	}
	return out
}

// neutralDir is where the host processes Zero starts for the user (MCP
// servers without a cwd, the user's own tools) run: Zero's config folder,
// made if missing (mode 0700). It is never the workspace, and no sandbox
// shows it to the agent, so nothing there is the agent's or a repository's.
func (a *App) neutralDir() string {
	if a.UserDir == "" {
		return os.TempDir()
	}
	if err := os.MkdirAll(a.UserDir, 0o700); err != nil {
		return os.TempDir()
	}
	return a.UserDir
}

// closePool closes the MCP servers of session sid.
func (a *App) closePool(sid string) {
	a.mu.Lock()
	p := a.pools[sid]
	delete(a.pools, sid)
	delete(a.editorMCP, sid)
	delete(a.pulls, sid)
	a.mu.Unlock()
	if p != nil {
		p.Close()
	}
}

// userTools are the executables users dropped into tools folders, as
// tools (Agent Zero's profile tools), first found first: a trusted
// workspace's (.zero/agents/<profile>/tools, .zero/tools, from the copy of
// what was trusted) and the user's profile folder's run in the sandbox; the
// user's own ~/.config/zero/tools run on this machine. A name of Zero's
// own tools (tools.BuiltinNames, present or not) is skipped, and a tool without its prompt file
// (agent.system.tool.NAME.md) is reported: the model would not know it.
func (a *App) userTools(p *profiles.Profile, code, sid string, builtin []loop.Tool) []loop.Tool {
	taken := map[string]bool{}
	for _, name := range tools.BuiltinNames {
		taken[name] = true
	}
	for _, t := range builtin {
		taken[t.Name()] = true
	}
	var sb tools.UserToolRunner = tools.SandboxRunner{Backend: a.Backend, Root: a.Workspace, Dir: filepath.Join(".zero", "output", cmp.Or(sid, "prompt"))}
	var dirs []struct {
		dir    string
		runner tools.UserToolRunner
	}
	add := func(dir string, r tools.UserToolRunner) {
		dirs = append(dirs, struct {
			dir    string
			runner tools.UserToolRunner
		}{dir, r})
	}
	if code != "" {
		add(filepath.Join(code, ".zero", "agents", p.Name, "tools"), sb)
		add(filepath.Join(code, ".zero", "tools"), sb)
	}
	add(filepath.Join(a.UserDir, "agents", p.Name, "tools"), sb)
	// The user's own tools run on this machine, in Zero's config folder
	// rather than the workspace (their JSON input names the workspace).
	add(filepath.Join(a.UserDir, "tools"), tools.HostRunner{Dir: a.neutralDir(), Env: a.agentEnv})
	shownPath := func(s string) string { // the workspace's file, not the trusted copy's
		if code == "" {
			return s
		}
		return strings.Replace(s, code, a.Workspace, 1)
	}
	var out []loop.Tool
	for _, d := range dirs {
		found, skipped := tools.FindUserTools(d.dir, d.runner)
		for _, s := range skipped {
			a.Warn.warn("tool skipped: " + shownPath(s))
		}
		for _, t := range found {
			shown := shownPath(t.Path())
			switch {
			case taken[t.Name()]:
				a.Warn.warn(fmt.Sprintf("tool %s (%s) is skipped: a tool of that name comes first", t.Name(), shown))
				continue
			case len(p.Prompts.Names("agent.system.tool."+t.Name()+".md")) == 0:
				a.Warn.warn(fmt.Sprintf("tool %s (%s) has no prompt file agent.system.tool.%s.md: the model is not told about it", t.Name(), shown, t.Name()))
			}
			taken[t.Name()] = true
			out = append(out, t)
		}
	}
	return out
}

var ErrNoModel = errors.New(`no model configured.

Zero talks to any OpenAI-compatible endpoint. Set:
  ZERO_MODEL=<model>           the chat model, for example gpt-4.1-mini
  OPENAI_API_KEY=<key>         your API key (for OpenAI, OpenRouter, ...)
  OPENAI_BASE_URL=<url>        only for another endpoint, for example
                               http://localhost:11434/v1 for Ollama (no key needed)
or pass --model and --base-url, or set models.chat in ~/.config/zero/config.yaml
(see zero config).`)

var ErrNoKey = errors.New(`OPENAI_API_KEY is not set.

The default endpoint is OpenAI's, which needs a key: set OPENAI_API_KEY, or set
OPENAI_BASE_URL (or --base-url) to a local OpenAI-compatible server such as
Ollama (http://localhost:11434/v1).`)

// Version is the version Zero gives MCP servers as their client's; the
// binary sets it from its build.
var Version = "dev"

// observed is a model whose deltas are shown to a function first.
type observed struct {
	loop.Model
	fn func(llm.Delta)
}

// ToolsRefused and RefuseTools pass on what the model's endpoint took
// (tool_protocol auto, see loop's nativeCalls).
func (o observed) ToolsRefused() bool {
	ts, ok := o.Model.(interface{ ToolsRefused() bool })
	return ok && ts.ToolsRefused()
}

func (o observed) RefuseTools() {
	if ts, ok := o.Model.(interface{ RefuseTools() }); ok {
		ts.RefuseTools()
	}
}

func (o observed) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	return o.Model.Stream(ctx, req, func(d llm.Delta) error {
		o.fn(d)
		return fn(d)
	})
}
