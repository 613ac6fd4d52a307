// Package servertest builds the product's session manager for the tests
// of the faces: app's assembly (the real engine, the built-in tools, the
// profiles and the local sandbox), with the real OpenAI client talking to
// a scripted model server on loopback, in a home of its own.
package servertest

import (
	"cmp"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Options configures New. The zero value works: no scripted replies,
// every tool call runs without asking.
type Options struct {
	// Replies script the model (see llmtest.Reply).
	Replies []llmtest.Reply
	// Policy is the approval policy; nil runs everything without asking.
	Policy *server.Policy
	// OnChunk, when set, sees every model delta as the client hands it to
	// the engine (benchmarks time the path from there to the editor).
	OnChunk func(llm.Delta)
	// Trust is the manager's trust service (nil: none).
	Trust server.Trust
	// LogLimit bounds each session's event log (server.DefaultLogLimit
	// when 0).
	LogLimit int
	// Store keeps the sessions in a SQLite store in a temporary folder, as
	// the product does.
	Store bool
	// Settings are more configuration keys, as flags set them
	// ("limits.tokens": "1000").
	Settings map[string]string
	// Home and Workspace, when set, are the home (with Store: its store)
	// and the workspace of an Env closed before: the same Zero started
	// again. "" is a new one.
	Home, Workspace string
}

// FakeTrust is a server.Trust whose workspaces all have the code of State
// until it is granted with State's digest.
type FakeTrust struct {
	mu      sync.Mutex
	State   server.TrustState
	granted []string
}

// TrustState implements server.Trust.
func (f *FakeTrust) TrustState(roots []string) (server.TrustState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.State
	st.Workspace = roots[0]
	return st, nil
}

// Grant implements server.Trust.
func (f *FakeTrust) Grant(roots []string, digest string) (server.TrustState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if digest != f.State.Digest {
		return f.State, server.ErrTrustMoved
	}
	f.granted = append(f.granted, digest)
	f.State.Status, f.State.Message = server.TrustTrusted, ""
	return f.State, nil
}

// UntrustedTrust is a FakeTrust whose workspaces carry one extension that
// was never trusted, with digest.
func UntrustedTrust(digest string) *FakeTrust {
	return &FakeTrust{State: server.TrustState{
		Status:  server.TrustUntrusted,
		Digest:  digest,
		Message: "This workspace carries 1 file that would run on this machine",
		Files:   []server.TrustFile{{Path: ".zero/extensions/agent_init/_10_x", Kind: "extension", Point: "agent_init"}},
	}}
}

// Granted lists the digests granted so far.
func (f *FakeTrust) Granted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.granted...)
}

// Env is a manager over the scripted model.
type Env struct {
	Manager *server.Manager
	Model   *llmtest.Server
	Catalog server.Catalog
	// Workspace is a fresh directory for sessions to work in.
	Workspace string
	// Home is the home the assembly runs in (Options.Home).
	Home  string
	close func()
}

// Close closes the assembly before the test ends (a Zero that stops, to
// be started again over the same Home).
func (e *Env) Close() { e.close() }

// New builds the product's assembly (app.Host: the built-in tools, the
// profiles, the local sandbox) over the scripted model, in a home of its
// own; it is closed when the test ends.
func New(tb testing.TB, opts Options) *Env {
	tb.Helper()
	srv := llmtest.NewServer(tb, opts.Replies...)
	policy := server.Policy{Default: server.Auto}
	if opts.Policy != nil {
		policy = *opts.Policy
	}
	home := cmp.Or(opts.Home, tb.TempDir())
	store := "off"
	if opts.Store {
		store = filepath.Join(home, "zero.db")
	}
	env := app.Env{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"ZERO_STORE=" + store,
	}
	ws := cmp.Or(opts.Workspace, tb.TempDir())
	flags := map[string]string{
		"models.chat.model":       llmtest.ModelName,
		"models.chat.base_url":    srv.URL(),
		"models.utility.model":    llmtest.ModelName,
		"models.utility.base_url": srv.URL(),
		"sandbox.backend":         "local",
		// The scripted replies are the agent's: no recall or memorize
		// asks the utility model for one of them.
		"memory.recall":   "false",
		"memory.memorize": "false",
	}
	maps.Copy(flags, opts.Settings)
	h, err := app.NewHost(tb.Context(), app.Options{
		Workspace: ws,
		Flags:     flags,
		Logger:    slog.New(slog.DiscardHandler),
		Env:       env,
		Policy:    &policy,
		Trust:     opts.Trust,
		LogLimit:  opts.LogLimit,
		Observe:   opts.OnChunk,
	})
	if err != nil {
		tb.Fatalf("servertest: %v", err)
	}
	closeOnce := sync.OnceFunc(func() { h.Close(time.Second) })
	tb.Cleanup(closeOnce)
	return &Env{Manager: h.Manager, Model: srv, Catalog: h.Catalog, Workspace: ws, Home: home, close: closeOnce}
}

// EndCause is one way a run in flight ends, and the cause its run_ended
// must carry: every face's test of end causes goes through the same three.
type EndCause struct {
	How   string // "connection closed", "serve ctx ended", or the face's own cancel
	Cause error
}

// EndCauses are the ways a face's run ends: the client leaving is a
// disconnect, the ctx given to Serve ending is Zero's shutdown, and only
// the client's own cancel (named cancel, as the face's protocol calls it)
// is the user's.
func EndCauses(cancel string) []EndCause {
	return []EndCause{
		{"connection closed", loop.ErrDisconnected},
		{"serve ctx ended", loop.ErrShutdown},
		{cancel, loop.ErrCancelled},
	}
}
