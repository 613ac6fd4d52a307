package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/tools"
)

// host is what the editor faces share: one app (configuration, profiles,
// sandbox, model clients) per workspace, built when a session first asks
// for it, and the session manager with its approval broker.
type host struct {
	flags  map[string]string // configuration set by flags
	ws     string            // the default workspace: --workspace or the current directory
	named  string            // the folder the user named with --workspace (realPath), "" if none: it may be as broad as it likes
	logger *slog.Logger

	broker  *server.Broker
	manager *server.Manager
	catalog *catalog
	store   *store.Store // nil: sessions live in memory only

	mu   sync.Mutex
	apps map[string]*app // by roots
	// closing is set by close: a session closed then leaves its MCP
	// servers to its app's close, which stops them all at once.
	closing atomic.Bool
}

// serveFlags parses the flags of `zero acp|mcp|lsp`; extra adds the
// face's own. It returns nil when the command is over with code.
func serveFlags(ctx context.Context, name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (h *host, code int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (it speaks its protocol on stdin and stdout)\n", name, fs.Arg(0))
		return nil, 2
	}
	ws, err := resolveWorkspace(*common.workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return nil, 2
	}
	h, err = newHost(ctx, ws, common.overrides(), newLogger(stderr))
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return nil, 2
	}
	if common.explicit("workspace") { // the user chose it: no refusal, no warning
		h.named = realPath(ws)
		h.apps[ws].wsChecked = true // built by newHost
	}
	return h, 0
}

// newHost checks the default workspace's configuration (so a typo is
// reported at start, not at the first session) and builds the manager;
// ctx bounds its background work.
func newHost(ctx context.Context, ws string, flags map[string]string, logger *slog.Logger) (*host, error) {
	h := &host{flags: flags, ws: ws, logger: logger, apps: map[string]*app{}}
	h.broker = server.NewBroker(server.Policy{Default: server.Auto}, server.BrokerOptions{Logger: logger.With("component", "approval")})
	a, err := h.app([]string{ws})
	if err != nil {
		return nil, err
	}
	h.init(ctx, a)
	return h, nil
}

// init builds the catalog, the store and the manager of h, whose default
// workspace's app is a.
func (h *host) init(ctx context.Context, a *app) {
	logger := h.logger
	h.catalog = newCatalog(ctx, a)
	h.store = openStore(logger, a.warn.warn)
	a.initMemory(h.store)
	a.startMemory()
	h.manager = server.NewManager(server.Options{
		NewSession: h.newSession,
		Setup:      h.setup,
		Broker:     h.broker,
		Trust:      hostTrust{h},
		Store:      h.store,
		Workspace:  h.ws,
		Memory:     hostMemory{h},
		OnClose: func(spec server.SessionSpec) {
			h.mu.Lock() // only an app that exists holds the session's servers
			a := h.apps[strings.Join(rootsOr(spec.Roots, h.ws), "\x00")]
			h.mu.Unlock()
			if a != nil && !h.closing.Load() {
				a.closePool(spec.ID)
			}
		},
		OnDelete: func(spec server.SessionSpec) {
			if len(spec.Roots) > 0 {
				removeSpill(spec.Roots[0], spec.ID)
			}
		},
		Logger: logger.With("component", "server"),
	})
}

// newHostWith is the host of one command's app (zero run, zero chat): its
// sessions are stored like the editor faces', so each can continue them.
func newHostWith(ctx context.Context, a *app) *host {
	h := &host{ws: a.ws, logger: a.logger, apps: map[string]*app{a.ws: a}}
	h.broker = server.NewBroker(server.Policy{Default: server.Auto}, server.BrokerOptions{Logger: a.logger.With("component", "approval")})
	h.init(ctx, a)
	return h
}

// app returns the app of a workspace (its first root), creating it.
func (h *host) app(roots []string) (*app, error) {
	key := strings.Join(roots, "\x00")
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.apps[key]; a != nil {
		return a, nil
	}
	a, err := newAppAt(roots[0], slices.Clone(roots[1:]), h.flags, h.logger)
	if err != nil {
		return nil, err
	}
	a.warn.logger = h.logger
	a.initMemory(h.store) // nil while newHost builds the first app: init does it
	a.startMemory()
	h.apps[key] = a
	return a, nil
}

// roots checks a session's workspace folders: absolute directories, none
// as broad as the home directory unless chosen (refuseBroad); none means
// the default workspace.
func (h *host) roots(spec server.SessionSpec) ([]string, error) {
	rs := rootsOr(spec.Roots, h.ws)
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

// sandbox returns the configured backend ("docker", "local", "auto") and
// says, for the MCP instructions, where the agent's commands run (the
// sandbox itself opens with the first session).
func (h *host) sandbox() (backend, where string) {
	a, err := h.app([]string{h.ws})
	if err != nil {
		return "", ""
	}
	switch b := a.cfg.Sandbox.Backend; b {
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
func (h *host) appOf(roots []string) (*app, error) {
	roots, err := h.roots(server.SessionSpec{Roots: roots})
	if err != nil {
		return nil, err
	}
	return h.app(roots)
}

// appFor returns the app of a session's workspace with its sandbox open
// (a container starts with the first command, not here).
func (h *host) appFor(ctx context.Context, spec server.SessionSpec) (*app, error) {
	roots, err := h.roots(spec)
	if err != nil {
		return nil, err
	}
	a, err := h.app(roots)
	if err != nil {
		return nil, err
	}
	return a, a.ensureSandbox(ctx)
}

// newSession is server.Options.NewSession: the session gets the approval
// policy of its workspace's sandbox.
func (h *host) newSession(ctx context.Context, spec server.SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
	a, err := h.appFor(ctx, spec)
	if err != nil {
		return nil, err
	}
	sess, err := a.sessionFor(sessionOpts{id: spec.ID, profile: spec.Profile, model: spec.Model, files: files(spec.Files), journal: spec.Journal, mcp: spec.MCPServers}, sink, true)
	if err != nil {
		return nil, err
	}
	h.broker.SetPolicy(spec.ID, a.policy())
	return sess, nil
}

// setup is server.Options.Setup: another profile or model for a session.
func (h *host) setup(ctx context.Context, spec server.SessionSpec) (loop.Setup, error) {
	a, err := h.appFor(ctx, spec)
	if err != nil {
		return loop.Setup{}, err
	}
	return a.setupFor(spec.ID, cmp.Or(spec.Profile, a.cfg.Profile), spec.Model, files(spec.Files), true)
}

// files turns the editor's file access into the text editor's (nil stays
// nil: a typed nil would send every read to a missing editor).
func files(f server.FileAccess) tools.Files {
	if f == nil {
		return nil
	}
	return f
}

// close ends every session, in order: their runs are cancelled and given
// grace to end; what they taught is memorized; then the MCP servers, the
// shells and the sandboxes stop (containers stay for reuse), each given the
// time its own library takes to stop it; only then, with every run over, is
// the session store flushed and closed, so no last event is lost to a
// server that is slow to exit.
func (h *host) close(grace time.Duration) {
	h.closing.Store(true) // the sessions' MCP servers stop with their app, below
	done := make(chan struct{})
	go func() { // owned here: close waits for it, within bounds
		h.manager.CloseAll()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		h.logger.Warn("runs did not end in time; closing their shells", "grace", grace)
	}
	h.mu.Lock()
	apps := slices.Collect(maps.Values(h.apps))
	h.mu.Unlock()
	// What the last runs taught is memorized before the process goes.
	mctx, cancel := context.WithTimeout(context.Background(), memorizeGrace)
	for _, a := range apps {
		if a.memExt != nil && a.memExt.Wait(mctx) != nil {
			h.logger.Warn("memorizing did not end in time; it is dropped", "grace", memorizeGrace)
		}
	}
	cancel()
	var wg sync.WaitGroup
	for _, a := range apps {
		wg.Go(a.close) // returns once its servers and shells are gone
	}
	wg.Wait()
	if h.store == nil {
		return
	}
	// Closing the shells and servers ended the runs still going; their
	// last events are written before the store closes.
	select {
	case <-done:
	case <-time.After(runsEndAfterClose):
		h.logger.Warn("runs still going on; the session store closes without their last events", "waited", runsEndAfterClose)
	}
	if err := h.store.Close(); err != nil {
		h.logger.Warn("closing the session store", "err", err)
	}
}

// runsEndAfterClose bounds the wait for runs to end once their shells and
// MCP servers are closed (a command's end is read from the engine).
const runsEndAfterClose = 5 * time.Second

// memorizeGrace bounds the wait for memorizing when the process ends.
const memorizeGrace = 30 * time.Second

// errStoreOff is storePath's answer to ZERO_STORE=off.
var errStoreOff = errors.New("ZERO_STORE=off: sessions are kept in memory only")

// storePath is the session store's file: $ZERO_STORE ("off": none), else
// the user's data directory's.
func storePath() (string, error) {
	switch path := os.Getenv("ZERO_STORE"); path {
	case "off":
		return "", errStoreOff
	case "":
		return store.DefaultPath()
	default:
		return path, nil
	}
}

// openStore opens the session store (see storePath). A store that cannot
// be opened is a warning: the editor (or zero run, zero chat) still gets
// an agent, whose sessions end with the process. A damaged store says so
// and names the command that fixes it (zero store recover), at open and
// when a write finds damage that the check of open did not, through warn
// (the app's warnings: the session shows them as warning events, which
// zero chat's conversation, zero run's view and the editors show, and the
// editor faces log them) or, when nil, the log.
func openStore(logger *slog.Logger, warn func(string)) *store.Store {
	if warn == nil {
		warn = func(text string) { logger.Warn(text) }
	}
	path, err := storePath()
	if errors.Is(err, errStoreOff) {
		return nil
	} else if err != nil {
		logger.Warn("no place for the session store; sessions will not outlive this process", "err", err)
		return nil
	}
	st, err := store.OpenWith(path, store.OpenOptions{
		Logger: logger.With("component", "store"),
		OnDamage: func(err error) {
			warn(damagedStore(path, err) + "; what this process writes to it from now on is lost")
		},
	})
	if store.IsDamaged(err) {
		warn(damagedStore(path, err) + "; until then sessions will not outlive this process")
		return nil
	} else if err != nil {
		logger.Warn("the session store cannot be opened; sessions will not outlive this process", "path", path, "err", err)
		return nil
	}
	return st
}

// ensureSandbox opens the sandbox once it works: a failure (Docker not
// started yet) is tried again by the next session instead of sticking.
func (a *app) ensureSandbox(ctx context.Context) error {
	a.sandboxMu.Lock()
	defer a.sandboxMu.Unlock()
	if a.backend != nil {
		return nil
	}
	return a.openSandbox(ctx)
}

// policy is the approval policy of the app's sessions, in every face (see
// server.PolicyFor). A workspace's own configuration may make it
// stricter, never looser (config.Load sees to that).
func (a *app) policy() server.Policy {
	return server.PolicyFor(a.cfg.Approval, confined(a.backend))
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
func newCatalog(ctx context.Context, a *app) *catalog {
	c := &catalog{}
	infos, err := a.loader.List()
	if err != nil {
		a.logger.Warn("profiles", "err", err)
	}
	for _, in := range infos {
		ch := server.Choice{ID: in.Name, Name: cmp.Or(in.Title, in.Name), Description: in.Description, Backend: in.Backend}
		if in.Name == a.cfg.Profile {
			c.profiles = slices.Insert(c.profiles, 0, ch)
		} else {
			c.profiles = append(c.profiles, ch)
		}
	}
	if m := a.cfg.Models.Chat.Model; m != "" {
		c.models = []server.Choice{{ID: m, Name: m, Description: "the configured model"}}
	}
	c.fetch = func() []string {
		p, err := a.loader.Load(a.cfg.Profile)
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
			a.logger.Info("the endpoint lists no models", "err", err)
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
