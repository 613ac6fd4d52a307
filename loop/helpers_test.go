package loop_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/proctest"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
)

// reply is one scripted model answer.
type reply struct {
	reasoning string
	content   string
	chunk     int // bytes per content delta; 0 = all at once
	err       error
	// fn, when set, replaces the scripted streaming.
	fn func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error)
}

// fakeModel is an in-process model that answers from a script and records
// what the loop sent.
type fakeModel struct {
	mu      sync.Mutex
	replies []reply
	sent    [][]llm.Message
}

func (m *fakeModel) Stream(ctx context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.sent = append(m.sent, slices.Clone(req.Messages))
	if len(m.sent) > len(m.replies) {
		m.mu.Unlock()
		return llm.Result{}, fmt.Errorf("fake model: no reply scripted for request %d", len(m.sent))
	}
	r := m.replies[len(m.sent)-1]
	m.mu.Unlock()
	if r.fn != nil {
		return r.fn(ctx, fn)
	}
	if r.err != nil {
		return llm.Result{}, r.err
	}
	var res llm.Result
	if r.reasoning != "" {
		res.Reasoning = r.reasoning
		if err := fn(llm.Delta{Kind: llm.Reasoning, Text: r.reasoning}); err != nil {
			return res, err
		}
	}
	size := r.chunk
	if size <= 0 {
		size = len(r.content)
	}
	for s := r.content; s != ""; {
		n := min(size, len(s))
		chunk := s[:n]
		s = s[n:]
		res.Content += chunk
		if err := fn(llm.Delta{Kind: llm.Content, Text: chunk}); err != nil {
			if errors.Is(err, llm.ErrStop) {
				res.Stopped = true
				return res, nil
			}
			return res, err
		}
	}
	res.Usage = llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	return res, nil
}

func (m *fakeModel) requests() [][]llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sent)
}

// lastRequestText is everything the model got in its last request.
func (m *fakeModel) requestText(i int) string {
	reqs := m.requests()
	var b strings.Builder
	for _, msg := range reqs[i] {
		b.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
	}
	return b.String()
}

// toolReq renders a tool request as the model would send it.
func toolReq(thought, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"thoughts":  []string{thought},
		"headline":  "Doing " + thought,
		"tool_name": tool,
		"tool_args": args,
	})
	return string(b)
}

func respond(text string) string {
	return toolReq("answer", "response", map[string]any{"text": text})
}

// toolFunc is a tool made of a function.
type toolFunc struct {
	name string
	fn   func(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error)
}

func (t toolFunc) Name() string { return t.name }
func (t toolFunc) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	return t.fn(ctx, call)
}

// responseTool is a minimal response tool (package tools has the real one).
var responseTool = toolFunc{"response", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
	text, _ := c.Args["text"].(string)
	return loop.ToolResult{Text: text, BreakLoop: true}, nil
}}

func noopTool(name string) toolFunc {
	return toolFunc{name, func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		return loop.ToolResult{Text: "ok"}, nil
	}}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []loop.Event
}

func (r *recorder) sink(e loop.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []loop.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) ofType(t loop.EventType) []loop.Event {
	var out []loop.Event
	for _, e := range r.all() {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) text(t loop.EventType) string {
	var b strings.Builder
	for _, e := range r.ofType(t) {
		b.WriteString(e.Text)
	}
	return b.String()
}

type setup struct {
	model    *fakeModel
	tools    []loop.Tool
	registry *hooks.Registry
	layers   []hooks.Layer
	hookOpts hooks.Options
	limits   loop.Limits
	// subordinate resolves subordinates' profiles (nil: the superior's setup).
	subordinate func(profile string) (loop.Setup, error)
	secrets     *secrets.Set
	logger      *slog.Logger
	utility     loop.Model   // nil: the chat model
	prompts     loop.Prompts // nil: the default set
	// protocol is the tool protocol; "": Agent Zero's JSON protocol, which
	// the fake model's replies speak (native_test.go sets the others).
	protocol string
}

// newSession builds a session over the fake model and the real default
// prompts.
func newSession(t testing.TB, s setup) (*loop.Session, *recorder) {
	t.Helper()
	if s.registry == nil {
		s.registry = loop.Builtins()
	}
	rec := &recorder{}
	var sess *loop.Session
	opts := s.hookOpts
	if opts.OnWarning == nil {
		opts.OnWarning = func(w hooks.Warning) { sess.Warn(w.Error()) }
	}
	set, err := hooks.Resolve(s.registry, s.layers, opts)
	if err != nil {
		t.Fatalf("resolve hooks: %v", err)
	}
	if s.limits.CriticalRetryDelay == 0 {
		s.limits.CriticalRetryDelay = time.Millisecond
	}
	tools := s.tools
	if tools == nil {
		tools = []loop.Tool{responseTool}
	}
	prompts := s.prompts
	if prompts == nil {
		prompts = profiles.New()
	}
	sess = loop.NewSession("test", loop.Config{
		Setup: loop.Setup{
			Model:        s.model,
			UtilityModel: s.utility,
			Prompts:      prompts,
			Tools:        tools,
			Hooks:        set,
			ToolProtocol: cmp.Or(s.protocol, loop.ProtocolJSON),
		},
		Secrets:     s.secrets,
		Logger:      s.logger,
		Subordinate: s.subordinate,
		Workspace:   t.TempDir(),
		Limits:      s.limits,
		Now:         func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) },
	}, rec.sink)
	return sess, rec
}

func testPrompts() loop.Prompts { return profiles.New() }

func runCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	t.Cleanup(cancel)
	return ctx
}
