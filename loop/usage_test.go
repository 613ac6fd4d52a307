package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
)

// meteredModel answers from a script, each reply with the usage the
// endpoint reports, and records what it was sent.
type meteredModel struct {
	mu      sync.Mutex
	replies []string
	usage   llm.Usage
	sent    [][]llm.Message
}

func (m *meteredModel) Stream(_ context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.sent = append(m.sent, slices.Clone(req.Messages))
	n := len(m.sent)
	m.mu.Unlock()
	if n > len(m.replies) {
		return llm.Result{}, errors.New("metered model: no reply scripted")
	}
	res := llm.Result{Content: m.replies[n-1], Usage: m.usage}
	if err := fn(llm.Delta{Kind: llm.Content, Text: res.Content}); errors.Is(err, llm.ErrStop) {
		res.Stopped = true
	} else if err != nil {
		return res, err
	}
	return res, nil
}

func (m *meteredModel) requests() [][]llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sent)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// A run adds up every call it made, whoever made it: agent 0's and its
// subordinate's chat turns, a tool's utility call and its embedding; each
// call is a usage event with its role, and run_ended carries the totals,
// by role, with the cost where it is known.
func TestRunUsageTotals(t *testing.T) {
	t.Parallel()
	chat := &meteredModel{
		replies: []string{
			toolReq("ask", "ask", map[string]any{}),
			delegate("delegate", "find it", "helper", false),
			respond("found"), // agent 1
			respond("done"),
		},
		usage: llm.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, CachedTokens: 40},
	}
	utility := &meteredModel{replies: []string{"a summary"}, usage: llm.Usage{PromptTokens: 50, CompletionTokens: 5, TotalTokens: 55, Cost: 0.002}}
	price := &loop.Price{Input: 1, Output: 2, Cached: 0.5} // per million
	ask := toolFunc{"ask", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		if _, err := c.Agent.CallUtilityModel(ctx, "summarize", "this"); err != nil {
			return loop.ToolResult{}, err
		}
		loop.ReportUsage(ctx, loop.RoleEmbedding, llm.Usage{PromptTokens: 7, TotalTokens: 7}, nil) // no price: unknown
		return loop.ToolResult{Text: "asked"}, nil
	}}
	setup := loop.Setup{Model: chat, UtilityModel: utility, Prompts: testPrompts(),
		Tools: []loop.Tool{responseTool, ask, tools.CallSubordinate{}}, Prices: loop.Prices{Chat: price}}
	rec := &recorder{}
	sess := loop.NewSession("usage", loop.Config{Setup: setup, Workspace: t.TempDir(),
		Subordinate: func(string) (loop.Setup, error) {
			sub := setup
			sub.Tools = []loop.Tool{responseTool}
			return sub, nil
		}}, rec.sink)
	if got, err := sess.Run(runCtx(t), "go"); err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}

	calls := rec.ofType(loop.EventUsage)
	var roles []string
	agents := map[int]bool{}
	for _, e := range calls {
		roles = append(roles, e.Usage.Role)
		agents[e.Agent] = true
	}
	if want := []string{"chat", "utility", "embedding", "chat", "chat", "chat"}; !slices.Equal(roles, want) {
		t.Errorf("usage events' roles = %q, want %q", roles, want)
	}
	if !agents[1] {
		t.Error("no usage event of the subordinate")
	}
	if u := calls[0].Usage; u.CachedTokens != 40 || u.Cost == nil || !near(*u.Cost, (60*1+40*0.5+10*2)/1e6) {
		t.Errorf("a chat call's usage = %+v (cost %v), want 40 cached and the cost by its price", u, u.Cost)
	}
	if u := calls[1].Usage; u.Cost == nil || !near(*u.Cost, 0.002) {
		t.Errorf("the utility call's cost = %v, want the endpoint's 0.002", u.Cost)
	}
	if u := calls[2].Usage; u.Cost != nil {
		t.Errorf("an embedding without a price cost %v, want unknown (nil)", *u.Cost)
	}

	ended := rec.ofType(loop.EventRunEnded)
	if len(ended) != 1 || ended[0].Usage == nil {
		t.Fatalf("run_ended = %+v, want the run's usage", ended)
	}
	u := ended[0].Usage
	if u.Calls != 6 || u.PromptTokens != 4*100+50+7 || u.CompletionTokens != 4*10+5 || u.TotalTokens != 4*110+55+7 || u.CachedTokens != 160 {
		t.Errorf("run totals = %+v", u)
	}
	if u.Cost == nil || !near(*u.Cost, 4*100/1e6+0.002) || !u.CostPartial {
		t.Errorf("run cost = %v partial %v, want 0.0024, partial (the embedding's is unknown)", u.Cost, u.CostPartial)
	}
	r := u.Roles
	if r == nil || r.Chat == nil || r.Utility == nil || r.Embedding == nil {
		t.Fatalf("roles = %+v", r)
	}
	if r.Chat.Calls != 4 || r.Chat.TotalTokens != 440 || r.Chat.CachedTokens != 160 || r.Chat.CostPartial ||
		r.Utility.Calls != 1 || r.Utility.TotalTokens != 55 ||
		r.Embedding.Calls != 1 || r.Embedding.PromptTokens != 7 || r.Embedding.Cost != nil || r.Embedding.CostPartial {
		t.Errorf("by role: chat %+v, utility %+v, embedding %+v", *r.Chat, *r.Utility, *r.Embedding)
	}
}

// Without a reported cost or a price, a call's cost is unknown: omitted,
// never 0 as if it were free; a second run counts from zero.
func TestUsageCostUnknown(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{{content: respond("one")}, {content: respond("two")}}}
	sess, rec := newSession(t, setup{model: model})
	for _, msg := range []string{"a", "b"} {
		if _, err := sess.Run(runCtx(t), msg); err != nil {
			t.Fatal(err)
		}
	}
	ended := rec.ofType(loop.EventRunEnded)
	if len(ended) != 2 {
		t.Fatalf("%d run_ended", len(ended))
	}
	for _, e := range ended {
		b, _ := json.Marshal(e.Usage)
		if e.Usage == nil || e.Usage.Calls != 1 || strings.Contains(string(b), "cost") {
			t.Errorf("run_ended usage = %s, want one call and no cost", b)
		}
	}
}

// limits.tokens ends the run once its calls reached it, before the next
// call: stop_reason budget, and a message naming the limit and the use.
func TestBudgetTokens(t *testing.T) {
	t.Parallel()
	chat := &meteredModel{
		replies: []string{toolReq("one", "noop", map[string]any{}), toolReq("two", "noop", map[string]any{}), respond("never")},
		usage:   llm.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	rec := &recorder{}
	sess := loop.NewSession("budget", loop.Config{
		Setup:     loop.Setup{Model: chat, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, noopTool("noop")}},
		Workspace: t.TempDir(), Limits: loop.Limits{Tokens: 200},
	}, rec.sink)
	_, err := sess.Run(runCtx(t), "go")
	if !errors.Is(err, loop.ErrBudget) {
		t.Fatalf("Run error = %v, want ErrBudget", err)
	}
	if n := len(chat.requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2 (110, then 220 tokens: no third)", n)
	}
	if n := len(rec.ofType(loop.EventToolResult)); n != 2 {
		t.Errorf("%d tool results, want 2: the call that crossed the limit still has its tool run", n)
	}
	ended := rec.ofType(loop.EventRunEnded)
	if len(ended) != 1 || ended[0].StopReason != loop.StopBudget {
		t.Fatalf("run_ended = %+v, want stop_reason budget", ended)
	}
	for _, want := range []string{"limits.tokens", "220 tokens", "200"} {
		if !strings.Contains(ended[0].Error, want) {
			t.Errorf("run_ended error %q does not say %q", ended[0].Error, want)
		}
	}
	if u := ended[0].Usage; u == nil || u.TotalTokens != 220 {
		t.Errorf("run_ended usage = %+v, want 220 tokens", u)
	}

	// The next run has a budget of its own.
	chat.mu.Lock()
	chat.replies = append(chat.replies[:2], respond("again"))
	chat.mu.Unlock()
	if got, err := sess.Run(runCtx(t), "again"); err != nil || got != "again" {
		t.Errorf("the next run = %q, %v", got, err)
	}
}

// limits.cost counts the known cost (here by the configured price); a call
// whose reply is the answer ends the run with it, over the budget or not.
func TestBudgetCost(t *testing.T) {
	t.Parallel()
	chat := &meteredModel{
		replies: []string{toolReq("one", "noop", map[string]any{}), respond("never")},
		usage:   llm.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100},
	}
	rec := &recorder{}
	st := loop.Setup{Model: chat, Prompts: testPrompts(), Tools: []loop.Tool{responseTool, noopTool("noop")},
		Prices: loop.Prices{Chat: &loop.Price{Input: 10, Output: 30}}} // 0.013 a call
	sess := loop.NewSession("cost", loop.Config{Setup: st, Workspace: t.TempDir(), Limits: loop.Limits{Cost: 0.01}}, rec.sink)
	if _, err := sess.Run(runCtx(t), "go"); !errors.Is(err, loop.ErrBudget) {
		t.Fatalf("Run error = %v, want ErrBudget", err)
	}
	ended := rec.ofType(loop.EventRunEnded)
	if len(ended) != 1 || ended[0].StopReason != loop.StopBudget || !strings.Contains(ended[0].Error, "limits.cost") ||
		!strings.Contains(ended[0].Error, "0.0130") {
		t.Fatalf("run_ended = %+v", ended)
	}

	chat2 := &meteredModel{replies: []string{respond("the answer")}, usage: chat.usage}
	st.Model = chat2
	rec2 := &recorder{}
	sess2 := loop.NewSession("cost2", loop.Config{Setup: st, Workspace: t.TempDir(), Limits: loop.Limits{Cost: 0.01}}, rec2.sink)
	if got, err := sess2.Run(runCtx(t), "go"); err != nil || got != "the answer" {
		t.Fatalf("Run = %q, %v: an answer within the last call stands", got, err)
	}
}

// The system message stays byte for byte the same from turn to turn and
// from run to run, while the clock moves: the date goes at the end of the
// request, so a provider's prompt cache can serve the prefix.
func TestSystemPromptStable(t *testing.T) {
	t.Parallel()
	chat := &meteredModel{replies: []string{toolReq("one", "noop", map[string]any{}), respond("first"), respond("second")}}
	var mu sync.Mutex
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	sess := loop.NewSession("stable", loop.Config{
		Setup:     loop.Setup{Model: chat, Prompts: profiles.New(), Tools: []loop.Tool{responseTool, noopTool("noop")}},
		Workspace: t.TempDir(), Now: now,
	}, nil)
	for _, msg := range []string{"first", "second"} {
		if _, err := sess.Run(runCtx(t), msg); err != nil {
			t.Fatal(err)
		}
	}
	reqs := chat.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	var dates []string
	for i, r := range reqs {
		if r[0].Role != llm.System {
			t.Fatalf("request %d starts with %s", i, r[0].Role)
		}
		if r[0].Content != reqs[0][0].Content {
			t.Errorf("request %d's system message differs from the first's", i)
		}
		last := r[len(r)-1].Content
		i := strings.Index(last, "2026-03-01 09:")
		if i < 0 {
			t.Fatalf("the date is not in the request's last message:\n%s", last)
		}
		dates = append(dates, last[i:i+19])
	}
	if dates[0] == dates[1] || dates[1] == dates[2] {
		t.Errorf("the clock did not move between requests (%q): the test proves nothing", dates)
	}
	if strings.Contains(reqs[0][0].Content, "2026-03-01") {
		t.Error("the system message holds the date")
	}
}

func TestFormatCost(t *testing.T) {
	t.Parallel()
	for c, want := range map[float64]string{0: "0", 2.5: "2.50", 0.0123: "0.0123", 0.000042: "0.000042", 0.00123456: "0.0012"} {
		if got := loop.FormatCost(c); got != want {
			t.Errorf("FormatCost(%g) = %q, want %q", c, got, want)
		}
	}
}
