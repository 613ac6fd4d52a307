package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
)

// reply is one scripted model answer: content, or fn for a model that
// blocks or streams in its own way.
type reply struct {
	content string
	fn      func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error)
	// withReq, when set, replaces everything and sees the request.
	withReq func(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error)
}

// fakeModel answers from a script and records what the loop sent.
type fakeModel struct {
	mu      sync.Mutex
	replies []reply
	sent    [][]llm.Message
}

func (m *fakeModel) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.sent = append(m.sent, slices.Clone(req.Messages))
	n := len(m.sent)
	if len(m.replies) == 1 && m.replies[0].withReq != nil { // one reply for every request
		n = 1
	}
	if n > len(m.replies) {
		m.mu.Unlock()
		return llm.Result{}, fmt.Errorf("fake model: no reply scripted for request %d", n)
	}
	r := m.replies[n-1]
	m.mu.Unlock()
	if r.withReq != nil {
		return r.withReq(ctx, req, fn)
	}
	if r.fn != nil {
		return r.fn(ctx, fn)
	}
	if err := fn(llm.Delta{Kind: llm.Content, Text: r.content}); err != nil {
		return llm.Result{Content: r.content, Stopped: true}, nil
	}
	return llm.Result{Content: r.content}, nil
}

// requestText is everything the model got in request i.
func (m *fakeModel) requestText(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.sent) {
		return ""
	}
	var b strings.Builder
	for _, msg := range m.sent[i] {
		b.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
	}
	return b.String()
}

func (m *fakeModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// blocking is a reply that signals started and streams until its context
// ends (a slow model).
func blocking(started chan<- struct{}) reply {
	return reply{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
		partial := `{"thoughts": ["thinking slowly`
		if err := fn(llm.Delta{Kind: llm.Content, Text: partial}); err != nil {
			return llm.Result{Content: partial}, err
		}
		close(started)
		<-ctx.Done()
		return llm.Result{Content: partial}, context.Cause(ctx)
	}}
}

func toolReq(tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"thoughts":  []string{"using " + tool},
		"headline":  "Using " + tool,
		"tool_name": tool,
		"tool_args": args,
	})
	return string(b)
}

func respond(text string) string { return toolReq("response", map[string]any{"text": text}) }

type toolFunc struct {
	name string
	fn   func(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error)
}

func (t toolFunc) Name() string { return t.name }
func (t toolFunc) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	return t.fn(ctx, call)
}

var responseTool = toolFunc{"response", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
	text, _ := c.Args["text"].(string)
	return loop.ToolResult{Text: text, BreakLoop: true}, nil
}}

// execTool stands in for code_execution_tool and counts its runs.
type execTool struct {
	mu  sync.Mutex
	ran []string
}

func (e *execTool) Name() string { return "code_execution_tool" }
func (e *execTool) Execute(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
	code, _ := c.Args["code"].(string)
	e.mu.Lock()
	e.ran = append(e.ran, code)
	e.mu.Unlock()
	return loop.ToolResult{Text: "ran " + code}, nil
}

func (e *execTool) runs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ran)
}

func execCall(code string) string {
	return toolReq("code_execution_tool", map[string]any{"runtime": "terminal", "code": code})
}

// env is a manager over fake models: models[spec.Profile] answers for the
// sessions of that profile.
type env struct {
	m      *Manager
	broker *Broker
	exec   *execTool
}

func newEnv(t testing.TB, models map[string]*fakeModel, policy *Policy) *env {
	t.Helper()
	e := &env{exec: &execTool{}}
	reg := loop.Builtins()
	if policy != nil {
		e.broker = NewBroker(*policy, BrokerOptions{})
	}
	set, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		t.Fatalf("resolve hooks: %v", err)
	}
	setup := func(_ context.Context, spec SessionSpec) (loop.Setup, error) {
		model := models[spec.Profile]
		if model == nil {
			return loop.Setup{}, fmt.Errorf("no model for profile %q", spec.Profile)
		}
		return loop.Setup{
			Profile: spec.Profile,
			Model:   model,
			Prompts: profiles.New(),
			Tools:   []loop.Tool{responseTool, e.exec},
			Hooks:   set,
		}, nil
	}
	e.m = NewManager(Options{
		Broker: e.broker,
		Setup:  setup,
		NewSession: func(ctx context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error) {
			st, err := setup(ctx, spec)
			if err != nil {
				return nil, err
			}
			root := ""
			if len(spec.Roots) > 0 {
				root = spec.Roots[0]
			}
			return loop.NewSession(spec.ID, loop.Config{
				Setup:     st,
				Workspace: root,
				Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
			}, sink), nil
		},
	})
	t.Cleanup(e.m.CloseAll)
	return e
}

func (e *env) create(t *testing.T, profile string) *Session {
	t.Helper()
	s, err := e.m.Create(t.Context(), SessionSpec{Roots: []string{t.TempDir()}, Profile: profile})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ofType(evs []Event, typ loop.EventType) []Event {
	var out []Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
