// Package servertest builds a real session manager for the tests of the
// editor faces: the real engine, tools and local sandbox, the built-in
// profiles, and the real OpenAI client talking to a scripted model server
// on loopback. It is what cmd/zero wires, without the configuration files.
package servertest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/tools"
)

// Options configures New. The zero value works: no scripted replies,
// every tool call runs without asking.
type Options struct {
	// Replies script the model (see llmtest.Reply).
	Replies []llmtest.Reply
	// Policy is the approval policy; nil runs everything without asking.
	Policy *server.Policy
	// Models are the model names the catalog offers (default: just
	// llmtest.ModelName); the scripted server answers any of them.
	Models []string
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

// observed is a model whose deltas are shown to a function first.
type observed struct {
	loop.Model
	fn func(llm.Delta)
}

func (o observed) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	return o.Model.Stream(ctx, req, func(d llm.Delta) error {
		o.fn(d)
		return fn(d)
	})
}

// Env is a manager over the scripted model.
type Env struct {
	Manager *server.Manager
	Broker  *server.Broker
	Model   *llmtest.Server
	Catalog server.Catalog
	// Workspace is a fresh directory for sessions to work in.
	Workspace string
}

// New builds the manager; it is closed when the test ends.
func New(tb testing.TB, opts Options) *Env {
	tb.Helper()
	srv := llmtest.NewServer(tb, opts.Replies...)
	policy := server.Policy{Default: server.Auto}
	if opts.Policy != nil {
		policy = *opts.Policy
	}
	broker := server.NewBroker(policy, server.BrokerOptions{})
	reg := loop.Builtins()
	hookSet, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		tb.Fatalf("servertest: resolve hooks: %v", err)
	}
	models := opts.Models
	if len(models) == 0 {
		models = []string{llmtest.ModelName}
	}
	loader := profiles.NewLoader(tb.TempDir(), tb.TempDir())
	infos, err := loader.List()
	if err != nil {
		tb.Fatalf("servertest: profiles: %v", err)
	}
	cat := server.StaticCatalog{}
	for _, in := range infos {
		cat.ProfileList = append(cat.ProfileList, server.Choice{ID: in.Name, Name: in.Name, Description: in.Description, Backend: in.Backend})
	}
	for _, m := range models {
		cat.ModelList = append(cat.ModelList, server.Choice{ID: m, Name: m})
	}

	var mu sync.Mutex
	execs := map[string]*tools.CodeExecution{} // per session: its sandbox
	var backends []sandbox.Backend
	clients := map[string]*llm.Client{}
	client := func(model string) (*llm.Client, error) {
		mu.Lock()
		defer mu.Unlock()
		if c := clients[model]; c != nil {
			return c, nil
		}
		c, err := llm.New(llm.Options{Model: model, BaseURL: srv.URL(), MaxRetries: -1})
		if err != nil {
			return nil, err
		}
		clients[model] = c
		return c, nil
	}
	setup := func(_ context.Context, spec server.SessionSpec) (loop.Setup, error) {
		p, err := loader.Load(cmp.Or(spec.Profile, "agent0"))
		if err != nil {
			return loop.Setup{}, err
		}
		model, err := client(cmp.Or(spec.Model, models[0]))
		if err != nil {
			return loop.Setup{}, err
		}
		mu.Lock()
		ce := execs[spec.ID]
		mu.Unlock()
		if ce == nil {
			return loop.Setup{}, fmt.Errorf("servertest: session %s has no sandbox", spec.ID)
		}
		te := tools.NewTextEditor(spec.Roots...)
		if spec.Files != nil {
			te = te.WithFiles(spec.Files)
		}
		var m loop.Model = model
		if opts.OnChunk != nil {
			m = observed{model, opts.OnChunk}
		}
		return loop.Setup{
			Profile: p.Name, Model: m, Prompts: p.Prompts, Hooks: hookSet,
			Tools: []loop.Tool{tools.Response{}, tools.CallSubordinate{}, te, ce, ce.InputTool()},
		}, nil
	}
	env := &Env{Broker: broker, Model: srv, Catalog: cat, Workspace: tb.TempDir()}
	var st *store.Store
	if opts.Store {
		var err error
		if st, err = store.Open(filepath.Join(tb.TempDir(), "zero.db")); err != nil {
			tb.Fatalf("servertest: %v", err)
		}
	}
	env.Manager = server.NewManager(server.Options{
		Store:     st,
		Workspace: env.Workspace,
		Broker:    broker,
		Trust:     opts.Trust,
		LogLimit:  opts.LogLimit,
		Setup:     setup,
		NewSession: func(ctx context.Context, spec server.SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
			if len(spec.Roots) == 0 {
				return nil, fmt.Errorf("servertest: a session needs a workspace")
			}
			for _, r := range spec.Roots {
				if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
					return nil, fmt.Errorf("workspace %s is not a directory", r)
				}
			}
			backend, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: spec.Roots[0], Roots: spec.Roots[1:],
				BaseEnv: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + spec.Roots[0]}})
			if err != nil {
				return nil, err
			}
			ce := tools.NewCodeExecution(backend, tools.Timeouts{})
			mu.Lock()
			execs[spec.ID] = ce
			backends = append(backends, backend)
			mu.Unlock()
			st, err := setup(ctx, spec)
			if err != nil {
				ce.Close()
				backend.Close()
				return nil, err
			}
			return loop.NewSession(spec.ID, loop.Config{
				Setup:     st,
				Journal:   spec.Journal,
				Workspace: spec.Roots[0],
				Sandbox:   backend.Name(),
				Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
			}, sink), nil
		},
	})
	tb.Cleanup(func() {
		env.Manager.CloseAll() // the runs end before their shells go
		mu.Lock()
		defer mu.Unlock()
		for _, ce := range execs {
			ce.Close()
		}
		for _, b := range backends {
			b.Close()
		}
		if st != nil {
			st.Close()
		}
	})
	return env
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
