package servertest_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// usageAnswer is a reply that answers the user.
const usageAnswer = `{"thoughts": ["answering"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "done"}}`

// musing is a reply that holds no tool request: the model is asked again,
// and the whole stream was read, usage chunk included (a reply whose tool
// request is complete is cut there, before the usage the endpoint would
// send after it).
func musing(u llmtest.Usage) llmtest.Reply {
	return llmtest.Reply{Content: "Let me think about it first.", Usage: &u}
}

// jsonProtocol adds tool_protocol json to settings: these tests are of
// Agent Zero's protocol, where a reply without a tool request is asked
// again (musing) and a reply is cut at its request, before its usage.
func jsonProtocol(settings map[string]string) map[string]string {
	out := map[string]string{"models.chat.tool_protocol": "json"}
	for k, v := range settings {
		out[k] = v
	}
	return out
}

// prompt runs msg in a new session of env and returns the session, the
// result and the run's events.
func prompt(t *testing.T, env *servertest.Env, msg string) (*server.Session, server.RunResult, []server.Event) {
	t.Helper()
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Prompt(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events(0)
	return s, res, evs
}

func ofType(evs []server.Event, typ loop.EventType) []server.Event {
	var out []server.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// A run's totals reach the faces in run_ended and the prompt's result:
// what the endpoint reported, its cached tokens and its cost, with the
// call Zero had to count itself (a reply cut at its tool request) making
// the cost a partial one, never a free one.
func TestRunUsageReported(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonProtocol(nil), Replies: []llmtest.Reply{
		musing(llmtest.Usage{PromptTokens: 1000, CompletionTokens: 20, TotalTokens: 1020, CachedTokens: 600, Cost: 0.003}),
		{Content: usageAnswer},
	}})
	_, res, evs := prompt(t, env, "go")
	if res.StopReason != loop.StopResponse {
		t.Fatalf("run = %+v", res)
	}
	calls := ofType(evs, loop.EventUsage)
	if len(calls) != 2 || calls[0].Usage.Role != loop.RoleChat || calls[0].Usage.CachedTokens != 600 ||
		calls[0].Usage.Cost == nil || *calls[0].Usage.Cost != 0.003 || calls[1].Usage.Cost != nil || !calls[1].Usage.Estimated {
		t.Fatalf("usage events = %+v", calls)
	}
	ended := ofType(evs, loop.EventRunEnded)
	u := ended[0].Usage
	if u == nil || u.Calls != 2 || u.CachedTokens != 600 || u.PromptTokens < 1000 || u.Cost == nil || *u.Cost != 0.003 || !u.CostPartial {
		t.Fatalf("run_ended usage = %+v", u)
	}
	if res.Usage == nil || res.Usage.TotalTokens != u.TotalTokens {
		t.Errorf("the prompt's result carries %+v, run_ended %+v", res.Usage, u)
	}
	if line := u.Line(); !strings.Contains(line, "cost at least 0.0030") || !strings.HasPrefix(line, "~") {
		t.Errorf("usage line = %q", line)
	}
}

// With models.chat.price configured, every chat call is costed, those Zero
// counted too; a reported cost wins over the price.
func TestRunCostFromPrice(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{
		Settings: jsonProtocol(map[string]string{"models.chat.price.input": "2", "models.chat.price.output": "10", "models.chat.price.cached": "0.5"}),
		Replies: []llmtest.Reply{
			musing(llmtest.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100, CachedTokens: 400}),
			musing(llmtest.Usage{PromptTokens: 10, CompletionTokens: 1, TotalTokens: 11, Cost: 0.25}),
			{Content: usageAnswer},
		},
	})
	_, res, evs := prompt(t, env, "go")
	calls := ofType(evs, loop.EventUsage)
	if len(calls) != 3 {
		t.Fatalf("%d usage events", len(calls))
	}
	want := (600*2 + 400*0.5 + 100*10) / 1e6
	if c := calls[0].Usage.Cost; c == nil || math.Abs(*c-want) > 1e-12 {
		t.Errorf("priced call cost %v, want %g", c, want)
	}
	if c := calls[1].Usage.Cost; c == nil || *c != 0.25 {
		t.Errorf("reported cost %v, want the endpoint's 0.25", c)
	}
	if c := calls[2].Usage.Cost; c == nil || *c <= 0 {
		t.Errorf("a counted call's cost %v, want one by the price", c)
	}
	if u := res.Usage; u == nil || u.Cost == nil || u.CostPartial || *u.Cost < want+0.25 {
		t.Errorf("run usage = %+v", u)
	}
}

// limits.tokens ends a run once its calls reached it, before the next one:
// stop_reason budget, and a message that names the limit and the use.
func TestBudgetStopsRun(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{
		Settings: jsonProtocol(map[string]string{"limits.tokens": "500"}),
		Replies: []llmtest.Reply{
			musing(llmtest.Usage{PromptTokens: 1000, CompletionTokens: 20, TotalTokens: 1020}),
			{Content: usageAnswer},
		},
	})
	_, res, evs := prompt(t, env, "go")
	if res.StopReason != loop.StopBudget || res.Err == nil {
		t.Fatalf("run = %+v, want stop_reason budget", res)
	}
	ended := ofType(evs, loop.EventRunEnded)
	if len(ended) != 1 || ended[0].StopReason != loop.StopBudget {
		t.Fatalf("run_ended = %+v", ended)
	}
	for _, want := range []string{"limits.tokens", "1020 tokens", "500"} {
		if !strings.Contains(ended[0].Error, want) {
			t.Errorf("run_ended's error %q does not say %q", ended[0].Error, want)
		}
	}
	if n := len(env.Model.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1: none after the budget was reached", n)
	}
}

// A session's totals are kept with it: a Zero started again over the same
// store has them, and adds the next run to them.
func TestSessionUsageSurvivesRestart(t *testing.T) {
	t.Parallel()
	replies := []llmtest.Reply{musing(llmtest.Usage{PromptTokens: 700, CompletionTokens: 30, TotalTokens: 730, CachedTokens: 100, Cost: 0.01}), {Content: usageAnswer}}
	env := servertest.New(t, servertest.Options{Store: true, Settings: jsonProtocol(nil), Replies: replies})
	s, _, _ := prompt(t, env, "first")
	id, before := s.ID(), s.Info().Usage
	if before == nil || before.Calls != 2 || before.CachedTokens != 100 {
		t.Fatalf("session usage = %+v", before)
	}
	env.Close()

	again := servertest.New(t, servertest.Options{Store: true, Settings: jsonProtocol(nil), Home: env.Home, Workspace: env.Workspace, Replies: replies})
	s2, err := again.Manager.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	after := s2.Info().Usage
	if after == nil || after.Calls != before.Calls || after.TotalTokens != before.TotalTokens || after.CachedTokens != 100 ||
		after.Cost == nil || *after.Cost != *before.Cost || after.Roles == nil || after.Roles.Chat == nil {
		t.Fatalf("after a restart the session's usage = %+v, want %+v", after, before)
	}
	if _, err := s2.Prompt(context.WithoutCancel(t.Context()), "second"); err != nil {
		t.Fatal(err)
	}
	if u := s2.Info().Usage; u == nil || u.Calls != 4 {
		t.Errorf("after another run the session's usage = %+v, want 4 calls", u)
	}
}

// The system message the chat model gets is the same, byte for byte, from
// turn to turn and run to run in the product's assembly (the date and the
// like go at the end), so a provider's prompt cache serves it.
func TestSystemMessageStable(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonProtocol(nil), Replies: []llmtest.Reply{
		musing(llmtest.Usage{PromptTokens: 1, TotalTokens: 1}), {Content: usageAnswer}, {Content: usageAnswer},
	}})
	s, _, _ := prompt(t, env, "first")
	if _, err := s.Prompt(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	reqs := env.Model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Messages[0].Role != llm.System || r.Messages[0].Content != reqs[0].Messages[0].Content {
			t.Errorf("request %d's system message differs from the first's", i)
		}
		if !strings.Contains(r.Messages[len(r.Messages)-1].Content, "current date and time") {
			t.Errorf("request %d does not end with the date", i)
		}
	}
}

// With native tool calls every answer is read to its end, so every chat
// call's usage is the endpoint's, none counted by Zero, and the run's cost
// is whole.
func TestNativeRunUsageIsReported(t *testing.T) {
	t.Parallel()
	call := llmtest.Usage{PromptTokens: 900, CompletionTokens: 15, TotalTokens: 915, CachedTokens: 800, Cost: 0.002}
	answer := llmtest.Usage{PromptTokens: 950, CompletionTokens: 5, TotalTokens: 955, CachedTokens: 900, Cost: 0.001}
	env := servertest.New(t, servertest.Options{Settings: map[string]string{"models.chat.tool_protocol": "native"}, Replies: []llmtest.Reply{
		{Content: "Reading it.", Usage: &call, ToolCalls: []llmtest.ScriptedCall{{ID: "c1", Name: "text_editor_read", Arguments: `{"path": "missing.txt"}`}}},
		{Content: "There is no such file.", Usage: &answer},
	}})
	_, res, evs := prompt(t, env, "read missing.txt")
	if res.StopReason != loop.StopResponse || res.Response != "There is no such file." {
		t.Fatalf("run = %+v", res)
	}
	calls := ofType(evs, loop.EventUsage)
	if len(calls) != 2 || calls[0].Usage.Estimated || calls[1].Usage.Estimated || calls[0].Usage.CachedTokens != 800 {
		t.Fatalf("usage events = %+v", calls)
	}
	u := ofType(evs, loop.EventRunEnded)[0].Usage
	if u == nil || u.PromptTokens != 1850 || u.CompletionTokens != 20 || u.CachedTokens != 1700 || u.Cost == nil || *u.Cost < 0.00299 || *u.Cost > 0.00301 || u.CostPartial {
		t.Fatalf("run_ended usage = %+v", u)
	}
}
