package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
)

// gateBackend is the local backend whose shells open only once the test
// releases them, as a Docker sandbox's first shell waits for its image.
type gateBackend struct {
	sandbox.Backend
	opening chan struct{} // one send per OpenShell that started
	release chan struct{}
	ended   chan error // the cause of each OpenShell whose ctx ended first
}

func (g *gateBackend) OpenShell(ctx context.Context) (*sandbox.Shell, error) {
	g.opening <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		g.ended <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}
	return g.Backend.OpenShell(ctx)
}

// Two sessions share one code execution tool (as an editor's sessions of
// one workspace do): while the first one's shell waits to open, the second
// one's reaches the backend too (to hear of the pull itself), and is not
// held behind the first. A run cancelled while its shell opens ends that
// opening (and so a pull nobody else waits for).
func TestShellsOpenSideBySide(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	local, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	g := &gateBackend{Backend: local, opening: make(chan struct{}, 2), release: make(chan struct{}), ended: make(chan error, 2)}
	t.Cleanup(func() { local.Close() })
	ce := tools.NewCodeExecution(g, tools.Timeouts{})
	t.Cleanup(func() { ce.Close() })
	session := func(name string) (*loop.Session, *llmtest.Server) {
		srv := llmtest.NewServer(t, call("code_execution_tool", `{"runtime": "terminal", "code": "echo ran-`+name+`"}`), answer("done "+name))
		client, err := llm.New(llm.Options{Model: "test", BaseURL: srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return loop.NewSession(name, loop.Config{
			Setup:     loop.Setup{Model: client, Prompts: profiles.New(), Tools: []loop.Tool{tools.Response{}, ce, ce.InputTool()}},
			Workspace: ws,
		}, func(loop.Event) {}), srv
	}
	a, _ := session("a")
	b, _ := session("b")
	done := make(chan string, 2)
	go func() { got, _ := a.Run(ctx(t), "go"); done <- got }()
	<-g.opening // a's shell waits to open
	bctx, cancel := context.WithCancel(ctx(t))
	go func() { got, _ := b.Run(bctx, "go"); done <- got }()
	select {
	case <-g.opening:
	case got := <-done:
		t.Fatalf("a run ended (%q) before the second shell reached the backend", got)
	case <-time.After(20 * time.Second): // a guard against the hang, not a measure
		t.Fatal("the second session's shell is held behind the first one's opening")
	}
	cancel() // b leaves while a still waits: promptly
	if got := <-done; got != "" {
		t.Errorf("the cancelled run answered %q", got)
	}
	if cause := <-g.ended; !errors.Is(cause, context.Canceled) {
		t.Errorf("the cancelled run's opening ended with %v, want its cancel", cause)
	}
	close(g.release)
	if got := <-done; got != "done a" {
		t.Errorf("the first run = %q, want done a", got)
	}
}

// Prewarm opens an agent's first shell before its first command, once;
// the command uses that shell. A tool closed while a shell still opens
// closes the shell when it comes, keeping nothing.
func TestPrewarm(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	local, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	g := &gateBackend{Backend: local, opening: make(chan struct{}, 4), release: make(chan struct{}), ended: make(chan error, 4)}
	ce := tools.NewCodeExecution(g, tools.Timeouts{})
	t.Cleanup(func() { ce.Close() })
	srv := llmtest.NewServer(t, call("code_execution_tool", `{"runtime": "terminal", "code": "echo ran"}`), answer("done"))
	client, err := llm.New(llm.Options{Model: "test", BaseURL: srv.URL(), APIKey: "k", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sess := loop.NewSession("p", loop.Config{
		Setup:     loop.Setup{Model: client, Prompts: profiles.New(), Tools: []loop.Tool{tools.Response{}, ce, ce.InputTool()}},
		Workspace: ws,
	}, func(loop.Event) {})
	ce.Prewarm(sess.Agent0())
	ce.Prewarm(sess.Agent0()) // once
	<-g.opening               // before any run: the session's shell opens
	close(g.release)
	if got, err := sess.Run(ctx(t), "go"); err != nil || got != "done" {
		t.Fatalf("run: %q, %v", got, err)
	}
	if n := len(g.opening); n != 0 {
		t.Errorf("%d more shells opened for the first command", n)
	}
	if !strings.Contains(srv.Requests()[1].Messages[len(srv.Requests()[1].Messages)-1].Content, "ran") {
		t.Errorf("the command did not run in the shell: %+v", srv.Requests()[1].Messages)
	}

	// Closed while a second agent's shell opens: the shell is closed as it comes.
	ce2 := tools.NewCodeExecution(&gateBackend{Backend: local, opening: g.opening, release: make(chan struct{}), ended: g.ended}, tools.Timeouts{})
	other := loop.NewSession("q", loop.Config{Setup: loop.Setup{Model: client, Prompts: profiles.New()}, Workspace: ws}, func(loop.Event) {})
	ce2.Prewarm(other.Agent0())
	<-g.opening
	ce2.Close()
	if err := <-g.ended; !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("the opening ended with %v, want ErrClosed", err)
	}
}
