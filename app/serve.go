package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/checkpoint"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/tools/texteditor"
)

// Host is what the editor faces share: one app (configuration, profiles,
// sandbox, model clients) per workspace, built when a session first asks
// for it, and the session manager with its approval broker.
type Host struct {
	opts      Options // what it was built from
	Workspace string  // the default workspace: --workspace or the current directory
	named     string  // the folder the user named with --workspace (realPath), "" if none: it may be as broad as it likes
	Logger    *slog.Logger

	broker  *server.Broker
	Manager *server.Manager
	Catalog *catalog
	Store   *store.Store // nil: sessions live in memory only
	// Checkpoints keeps the workspace snapshots of the checkpoints; nil:
	// they cover the conversation only.
	Checkpoints     *checkpoint.Store
	dropCheckpoints func() // removes a folder of this process's

	mu   sync.Mutex
	apps map[string]*App // by roots
	// closing is set by close: a session closed then leaves its MCP
	// servers to its app's close, which stops them all at once.
	closing atomic.Bool
}

// Options are what a Host is built from.
type Options struct {
	Workspace string // the default workspace (absolute)
	// Named says the user named Workspace (--workspace): it may be as
	// broad as they like, without a refusal or a warning.
	Named  bool
	Flags  map[string]string // the configuration the command line set, by dotted key
	Logger *slog.Logger
	Env    Env // nil: the process's

	// What the face tests and benchmarks give the real assembly in place
	// of the user's: the zero values are the product's.

	// Policy is every session's approval policy instead of the one
	// approval and the sandbox make (server.PolicyFor).
	Policy *server.Policy
	// Trust answers for the workspaces' code instead of the user's trust
	// records.
	Trust server.Trust
	// LogLimit bounds each session's event log (server.DefaultLogLimit
	// when 0).
	LogLimit int
	// Observe sees every delta of the chat model as its client hands it
	// to the engine.
	Observe func(llm.Delta)
}

// NewHost checks the default workspace's configuration (so a typo is
// reported at start, not at the first session) and builds the manager;
// ctx bounds its background work.
func NewHost(ctx context.Context, o Options) (*Host, error) {
	h := &Host{opts: o, Workspace: o.Workspace, Logger: o.Logger, apps: map[string]*App{}}
	logger, ws := o.Logger, o.Workspace
	h.broker = server.NewBroker(server.Policy{Default: server.Auto}, server.BrokerOptions{Logger: logger.With("component", "approval")})
	a, err := h.App([]string{ws})
	if err != nil {
		return nil, err
	}
	if o.Named {
		h.named = RealPath(ws)
		a.wsChecked = true
	}
	h.init(ctx, a)
	return h, nil
}

// init builds the catalog, the store and the manager of h, whose default
// workspace's app is a.
func (h *Host) init(ctx context.Context, a *App) {
	logger := h.Logger
	h.Catalog = newCatalog(ctx, a)
	h.Store = openStore(h.opts.Env, logger, a.Warn.warn)
	h.Checkpoints, h.dropCheckpoints = openCheckpoints(h.opts.Env, logger, a.Warn.warn)
	a.InitMemory(h.Store)
	a.startMemory()
	h.Manager = server.NewManager(server.Options{
		NewSession:  h.newSession,
		Setup:       h.setup,
		Broker:      h.broker,
		Trust:       h.trust(),
		Store:       h.Store,
		Checkpoints: h.Checkpoints,
		Workspace:   h.Workspace,
		Memory:      hostMemory{h},
		Commands:    newCommandBook(h.opts.Env, logger),
		OnClose: func(spec server.SessionSpec) {
			h.mu.Lock() // only an app that exists holds the session's servers
			a := h.apps[strings.Join(rootsOr(spec.Roots, h.Workspace), "\x00")]
			h.mu.Unlock()
			if a != nil && !h.closing.Load() {
				a.closePool(spec.ID)
			}
		},
		OnDelete: func(spec server.SessionSpec) {
			if len(spec.Roots) > 0 {
				RemoveSpill(spec.Roots[0], spec.ID)
			}
		},
		LogLimit: h.opts.LogLimit,
		Logger:   logger.With("component", "server"),
	})
}

// trust is the manager's trust service: the user's records, or Options.Trust.
func (h *Host) trust() server.Trust {
	if h.opts.Trust != nil {
		return h.opts.Trust
	}
	return hostTrust{h}
}

// NewHostWith is the host of one command's app (zero run, zero chat): its
// sessions are stored like the editor faces', so each can continue them.
func NewHostWith(ctx context.Context, a *App) *Host {
	h := &Host{opts: Options{Workspace: a.Workspace, Logger: a.Logger, Env: a.env}, Workspace: a.Workspace, Logger: a.Logger, apps: map[string]*App{a.Workspace: a}}
	h.broker = server.NewBroker(server.Policy{Default: server.Auto}, server.BrokerOptions{Logger: a.Logger.With("component", "approval")})
	a.ask = h.broker.Ask
	h.init(ctx, a)
	return h
}

// App returns the app of a workspace (its first root), creating it.
func (h *Host) App(roots []string) (*App, error) {
	key := strings.Join(roots, "\x00")
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.apps[key]; a != nil {
		return a, nil
	}
	a, err := NewAppAt(roots[0], slices.Clone(roots[1:]), h.opts.Flags, h.Logger, h.opts.Env)
	if err != nil {
		return nil, err
	}
	a.observe = h.opts.Observe
	a.ask = h.broker.Ask
	a.Warn.Logger = h.Logger
	a.InitMemory(h.Store) // nil while NewHost builds the first app: init does it
	a.startMemory()
	h.apps[key] = a
	return a, nil
}

// Roots checks a session's workspace folders: absolute directories, none
// as broad as the home directory unless chosen (refuseBroad); none means
// the default workspace.
func (h *Host) Roots(spec server.SessionSpec) ([]string, error) {
	rs := rootsOr(spec.Roots, h.Workspace)
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("workspace %q is not an absolute path", r)
		}
		r = filepath.Clean(r)
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("workspace %s is not a directory", r)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, refuseBroad(out, h.named, func(root string) bool {
		h.mu.Lock()
		a := h.apps[root]
		h.mu.Unlock()
		return a != nil && a.wsChecked
	})
}

// Sandbox returns the configured backend ("docker", "local", "auto") and
// says, for the MCP instructions, where the agent's commands run (the
// sandbox itself opens with the first session).
func (h *Host) Sandbox() (backend, where string) {
	a, err := h.App([]string{h.Workspace})
	if err != nil {
		return "", ""
	}
	switch b := a.Config.Sandbox.Backend; b {
	case "docker":
		return b, "in a Docker container"
	case "local":
		return b, "on this machine (confined by bubblewrap when it is installed)"
	default:
		return b, "in a Docker container when an engine answers, else on this machine (confined by bubblewrap when it is installed)"
	}
}

// appOf returns the app of a session's workspace folders (none: the
// default workspace), without opening its sandbox.
func (h *Host) appOf(roots []string) (*App, error) {
	roots, err := h.Roots(server.SessionSpec{Roots: roots})
	if err != nil {
		return nil, err
	}
	return h.App(roots)
}

// appFor returns the app of a session's workspace with its sandbox open
// (a container starts with the first command, not here).
func (h *Host) appFor(ctx context.Context, spec server.SessionSpec) (*App, error) {
	roots, err := h.Roots(spec)
	if err != nil {
		return nil, err
	}
	a, err := h.App(roots)
	if err != nil {
		return nil, err
	}
	a.AskWindow(spec.Profile, spec.Model) // while the sandbox opens
	llm.WarmTokenizer()                   // the first answer's usage is counted
	return a, a.EnsureSandbox(ctx)
}

// newSession is server.Options.NewSession: the session gets the approval
// policy of its workspace's sandbox.
func (h *Host) newSession(ctx context.Context, spec server.SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
	a, err := h.appFor(ctx, spec)
	if err != nil {
		return nil, err
	}
	sess, err := a.SessionFor(SessionOpts{ID: spec.ID, Profile: spec.Profile, model: spec.Model, files: files(spec.Files), journal: spec.Journal, mcp: spec.MCPServers}, sink, true)
	if err != nil {
		return nil, err
	}
	policy := a.Policy()
	if h.opts.Policy != nil {
		policy = *h.opts.Policy
	}
	h.broker.SetPolicy(spec.ID, policy)
	return sess, nil
}

// setup is server.Options.Setup: another profile or model for a session.
func (h *Host) setup(ctx context.Context, spec server.SessionSpec) (loop.Setup, error) {
	a, err := h.appFor(ctx, spec)
	if err != nil {
		return loop.Setup{}, err
	}
	return a.SetupFor(spec.ID, cmp.Or(spec.Profile, a.Config.Profile), spec.Model, files(spec.Files), true)
}

// files turns the editor's file access into the text editor's (nil stays
// nil: a typed nil would send every read to a missing editor).
func files(f server.FileAccess) texteditor.Files {
	if f == nil {
		return nil
	}
	return f
}

// Close ends every session, in order: their runs are cancelled and given
// grace to end; what they taught is memorized; then the MCP servers, the
// shells and the sandboxes stop (containers stay for reuse), each given the
// time its own library takes to stop it; only then, with every run over, is
// the session store flushed and closed, so no last event is lost to a
// server that is slow to exit.
func (h *Host) Close(grace time.Duration) {
	h.closing.Store(true) // the sessions' MCP servers stop with their app, below
	done := make(chan struct{})
	go func() { // owned here: close waits for it, within bounds
		h.Manager.CloseAll()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		h.Logger.Warn("runs did not end in time; closing their shells", "grace", grace)
	}
	h.mu.Lock()
	apps := slices.Collect(maps.Values(h.apps))
	h.mu.Unlock()
	// What the last runs taught is memorized before the process goes.
	mctx, cancel := context.WithTimeout(context.Background(), memorizeGrace)
	for _, a := range apps {
		if a.memExt != nil && a.memExt.Wait(mctx) != nil {
			h.Logger.Warn("memorizing did not end in time; it is dropped", "grace", memorizeGrace)
		}
	}
	cancel()
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Go(a.Close) // returns once its servers and shells are gone
	}
	wg.Wait()
	if h.dropCheckpoints != nil {
		defer h.dropCheckpoints()
	}
	if h.Store == nil {
		return
	}
	// Closing the shells and servers ended the runs still going; their
	// last events are written before the store closes.
	select {
	case <-done:
	case <-time.After(runsEndAfterClose):
		h.Logger.Warn("runs still going on; the session store closes without their last events", "waited", runsEndAfterClose)
	}
	if err := h.Store.Close(); err != nil {
		h.Logger.Warn("closing the session store", "err", err)
	}
}

// runsEndAfterClose bounds the wait for runs to end once their shells and
// MCP servers are closed (a command's end is read from the engine).
const runsEndAfterClose = 5 * time.Second

// memorizeGrace bounds the wait for memorizing when the process ends.
const memorizeGrace = 30 * time.Second

// ErrStoreOff is storePath's answer to ZERO_STORE=off.
var ErrStoreOff = errors.New("ZERO_STORE=off: sessions are kept in memory only")

// openStore opens the session store (see storePath). A store that cannot
// be opened is a warning: the editor (or zero run, zero chat) still gets
// an agent, whose sessions end with the process. A damaged store says so
// and names the command that fixes it (zero store recover), at open and
// when a write finds damage that the check of open did not, through warn
// (the app's warnings: the session shows them as warning events, which
// zero chat's conversation, zero run's view and the editors show, and the
// editor faces log them) or, when nil, the log.
func openStore(env Env, logger *slog.Logger, warn func(string)) *store.Store {
	if warn == nil {
		warn = func(text string) { logger.Warn(text) }
	}
	path, err := env.StorePath()
	if errors.Is(err, ErrStoreOff) {
		return nil
	} else if err != nil {
		logger.Warn("no place for the session store; sessions will not outlive this process", "err", err)
		return nil
	}
	st, err := store.OpenWith(path, store.OpenOptions{
		Logger: logger.With("component", "store"),
		OnDamage: func(err error) {
			warn(DamagedStore(path, err) + "; what this process writes to it from now on is lost")
		},
	})
	if store.IsDamaged(err) {
		warn(DamagedStore(path, err) + "; until then sessions will not outlive this process")
		return nil
	} else if err != nil {
		logger.Warn("the session store cannot be opened; sessions will not outlive this process", "path", path, "err", err)
		return nil
	}
	return st
}

// EnsureSandbox opens the sandbox once it works: a failure (Docker not
// started yet) is tried again by the next session instead of sticking.
func (a *App) EnsureSandbox(ctx context.Context) error {
	a.sandboxMu.Lock()
	defer a.sandboxMu.Unlock()
	if a.Backend != nil {
		return nil
	}
	return a.OpenSandbox(ctx)
}

// Policy is the approval policy of the app's sessions, in every face (see
// server.PolicyFor). A workspace's own configuration may make it
// stricter, never looser (config.Load sees to that).
func (a *App) Policy() server.Policy {
	return server.PolicyFor(a.Config.Approval, confined(a.Backend))
}

// catalog offers the profiles of the default workspace and the models of
// the configured endpoint: the configured one first, then whatever the
// endpoint lists. The list is fetched once, in the background, when an
// editor first asks (not at start-up, where it would compete with the
// editor's initialize); that first answer has the configured model only.
type catalog struct {
	profiles []server.Choice
	fetch    func() []string // the endpoint's models; nil lists none

	once   sync.Once
	mu     sync.Mutex
	models []server.Choice
}

// newCatalog lists a's profiles; the endpoint's models are fetched within
// ctx's life.
func newCatalog(ctx context.Context, a *App) *catalog {
	c := &catalog{}
	infos, err := a.Loader.List()
	if err != nil {
		a.Logger.Warn("profiles", "err", err)
	}
	for _, in := range infos {
		ch := server.Choice{ID: in.Name, Name: cmp.Or(in.Title, in.Name), Description: in.Description, Backend: in.Backend}
		if in.Name == a.Config.Profile {
			c.profiles = slices.Insert(c.profiles, 0, ch)
		} else {
			c.profiles = append(c.profiles, ch)
		}
	}
	if m := a.Config.Models.Chat.Model; m != "" {
		c.models = []server.Choice{{ID: m, Name: m, Description: "the configured model"}}
	}
	c.fetch = func() []string {
		p, err := a.Loader.Load(a.Config.Profile)
		if err != nil {
			return nil
		}
		client, err := a.client("chat", p, "")
		if err != nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		names, err := client.Models(ctx)
		if err != nil {
			a.Logger.Info("the endpoint lists no models", "err", err)
		}
		return names
	}
	return c
}

// Profiles implements server.Catalog.
func (c *catalog) Profiles() []server.Choice { return c.profiles }

// Models implements server.Catalog.
func (c *catalog) Models() []server.Choice {
	c.once.Do(func() {
		go c.add(c.fetch()) // ends within fetch's timeout
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.models)
}

func (c *catalog) add(names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		if !slices.ContainsFunc(c.models, func(ch server.Choice) bool { return ch.ID == n }) {
			c.models = append(c.models, server.Choice{ID: n, Name: n})
		}
	}
}

// rootsOr is roots, or the default workspace when there are none.
func rootsOr(roots []string, ws string) []string {
	if len(roots) == 0 {
		return []string{ws}
	}
	return roots
}

// DefaultWorkspace is the folder a session works in when neither the call
// nor the client names one: where zero was started, unless that is as
// broad as the home directory and the user did not name it (Claude
// Desktop starts its servers in /). Then there is none, and the MCP face
// asks the call for its workspace.
func (h *Host) DefaultWorkspace() string {
	if _, err := h.Roots(server.SessionSpec{}); err != nil {
		h.Logger.Info("no default workspace: a call or the client's roots must name the folder", "started_in", h.Workspace)
		return ""
	}
	return h.Workspace
}

// CheckStart refuses to serve, before a word of the protocol, when the
// default workspace's configured profile does not exist: the editor shows
// a command that failed to start with its stderr, where every session
// failing would say less. On an error it has closed h.
func (h *Host) CheckStart() error {
	a, err := h.App([]string{h.Workspace})
	if err == nil {
		err = a.CheckProfile()
	}
	if err != nil {
		h.Close(time.Second) // no session yet: nothing to wait for
	}
	return err
}
