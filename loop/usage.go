package loop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/zeroagent/zero/llm"
)

// Usage, cost and budgets: every model call of a run (the chat model's
// turns, the utility model's summaries and memory work, the embeddings the
// tools and extensions ask for, a subordinate's as much as agent 0's) is a
// usage event with its role, and adds up into the run's totals, which
// run_ended carries. Limits.Tokens and Limits.Cost end a run that reached
// them, before its next call.

// The roles of the models whose usage is counted (Usage.Role).
const (
	RoleChat      = "chat"
	RoleUtility   = "utility"
	RoleEmbedding = "embedding"
)

// StopBudget is run_ended's stop reason for a run that reached
// Limits.Tokens or Limits.Cost.
const StopBudget = "budget"

// ErrBudget ends a run that reached its token or cost budget (see
// [Limits]); the error says which and what the run used.
var ErrBudget = errors.New("budget reached")

// Price is what a model charges, in a currency per million tokens: Input
// for prompt tokens, Cached for the prompt tokens the provider served from
// its cache, Output for completion tokens.
type Price struct {
	Input, Output, Cached float64
}

// Prices are the prices of a setup's models; nil: unknown. A call whose
// endpoint reports its cost (OpenRouter's usage.cost) is costed by that.
type Prices struct {
	Chat, Utility *Price
}

// costOf is what a call cost: what the endpoint said, else by price, else
// nil (unknown, never 0 as if it were free).
func costOf(u llm.Usage, prompt, completion, cached int, p *Price) *float64 {
	switch {
	case u.Cost > 0:
		return new(u.Cost)
	case p == nil:
		return nil
	}
	cached = min(cached, prompt)
	c := (float64(prompt-cached)*p.Input + float64(cached)*p.Cached + float64(completion)*p.Output) / 1e6
	return &c
}

// UsageByRole are a total's parts by the role of the model.
type UsageByRole struct {
	Chat      *Usage `json:"chat,omitempty"`
	Utility   *Usage `json:"utility,omitempty"`
	Embedding *Usage `json:"embedding,omitempty"`
}

func (r *UsageByRole) of(role string) *Usage {
	p := &r.Chat
	switch role {
	case RoleUtility:
		p = &r.Utility
	case RoleEmbedding:
		p = &r.Embedding
	}
	if *p == nil {
		*p = &Usage{}
	}
	return *p
}

// Add adds one call's usage (a usage event's) to the totals t: its tokens,
// its cost when known (CostPartial says that a call's was not), and the
// same to its role's part.
func (t *Usage) Add(call Usage) {
	t.add(call)
	if t.Roles == nil {
		t.Roles = &UsageByRole{}
	}
	t.Roles.of(call.Role).add(call)
}

func (t *Usage) add(c Usage) {
	prior := t.Calls
	t.Calls++
	t.PromptTokens += c.PromptTokens
	t.CompletionTokens += c.CompletionTokens
	if c.TotalTokens > 0 {
		t.TotalTokens += c.TotalTokens
	} else {
		t.TotalTokens += c.PromptTokens + c.CompletionTokens
	}
	t.CachedTokens += c.CachedTokens
	t.Estimated = t.Estimated || c.Estimated
	switch {
	case c.Cost != nil:
		if t.Cost == nil && prior > 0 {
			t.CostPartial = true // the calls before had none
		}
		t.Cost = new(costValue(t.Cost) + *c.Cost)
	case t.Cost != nil:
		t.CostPartial = true
	}
}

func costValue(c *float64) float64 {
	if c == nil {
		return 0
	}
	return *c
}

// Clone is a copy of t that shares nothing with it.
func (t *Usage) Clone() *Usage {
	if t == nil {
		return nil
	}
	c := *t
	if t.Cost != nil {
		c.Cost = new(*t.Cost)
	}
	if t.Roles != nil {
		r := UsageByRole{Chat: t.Roles.Chat.Clone(), Utility: t.Roles.Utility.Clone(), Embedding: t.Roles.Embedding.Clone()}
		c.Roles = &r
	}
	return &c
}

// usageMeter adds up the usage of the session's run in progress.
type usageMeter struct {
	mu  sync.Mutex
	run *Usage // nil between runs
}

// beginUsage starts counting a run; the returned context carries the
// session, for [ReportUsage].
func (s *Session) beginUsage(ctx context.Context) context.Context {
	s.meter.mu.Lock()
	s.meter.run = &Usage{}
	s.meter.mu.Unlock()
	return context.WithValue(ctx, sessionKey{}, s)
}

// endUsage stops counting the run and returns its totals (nil when it made
// no call). A call that ends later (a background memorization) is still a
// usage event of the session, outside any run.
func (s *Session) endUsage() *Usage {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	run := s.meter.run
	s.meter.run = nil
	if run == nil || run.Calls == 0 {
		return nil
	}
	return run
}

type sessionKey struct{}

// countUsage adds a call's usage to the run's totals and reports it as a
// usage event of agent a.
func (s *Session) countUsage(a *Agent, item string, u Usage) {
	s.meter.mu.Lock()
	if s.meter.run != nil {
		s.meter.run.Add(u)
	}
	s.meter.mu.Unlock()
	a.emit(Event{Type: EventUsage, Item: item, Usage: &u})
}

// chatUsage counts a chat model call: u is what the endpoint reported or,
// when it reported nothing, Zero's estimate; reported is the endpoint's
// own, with its cached tokens and cost.
func (a *Agent) chatUsage(item string, u Usage, reported llm.Usage) {
	a.countCall(RoleChat, item, u, reported, a.setup.Prices.Chat)
}

func (a *Agent) countCall(role, item string, u Usage, reported llm.Usage, p *Price) {
	u.Role = role
	if !u.Estimated {
		u.CachedTokens = reported.CachedTokens
	}
	u.Cost = costOf(reported, u.PromptTokens, u.CompletionTokens, u.CachedTokens, p)
	a.session.countUsage(a, item, u)
}

// utilityUsage counts a utility model call of system and message that got
// res; a server that reported no usage gets it estimated.
func (a *Agent) utilityUsage(system, message string, res llm.Result) {
	r := res.Usage
	u := Usage{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, TotalTokens: r.TotalTokens}
	if u == (Usage{}) {
		count := a.session.cfg.CountTokens
		u = Usage{PromptTokens: count(system) + count(message), CompletionTokens: count(res.Content), Estimated: true}
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	a.countCall(RoleUtility, "", u, r, a.setup.Prices.Utility)
}

// ReportUsage counts a model call made outside the engine (an embedding)
// for the session whose run ctx belongs to, as a usage event of the agent
// at work; price, when known, costs it. A ctx of no run (a knowledge import
// at start) counts nowhere.
func ReportUsage(ctx context.Context, role string, u llm.Usage, price *Price) {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	if s == nil || u.PromptTokens+u.CompletionTokens+u.TotalTokens == 0 {
		return
	}
	s.mu.Lock()
	a := s.active
	if a == nil {
		a = s.agent0
	}
	s.mu.Unlock()
	a.countCall(role, "", Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}, u, price)
}

// overBudget is the error of a run that reached Limits.Tokens or
// Limits.Cost, or nil.
func (s *Session) overBudget() error {
	lim := s.cfg.Limits
	if lim.Tokens <= 0 && lim.Cost <= 0 {
		return nil
	}
	s.meter.mu.Lock()
	run := s.meter.run.Clone()
	s.meter.mu.Unlock()
	switch {
	case run == nil:
		return nil
	case lim.Tokens > 0 && run.TotalTokens >= lim.Tokens:
		return fmt.Errorf("%w: the run used %d tokens (%d in, %d out) of its limit of %d (limits.tokens)",
			ErrBudget, run.TotalTokens, run.PromptTokens, run.CompletionTokens, lim.Tokens)
	case lim.Cost > 0 && run.Cost != nil && *run.Cost >= lim.Cost:
		return fmt.Errorf("%w: the run cost %s of its limit of %s (limits.cost)",
			ErrBudget, FormatCost(*run.Cost), strconv.FormatFloat(lim.Cost, 'f', -1, 64))
	}
	return nil
}

// checkBudget is called before every model call of a run: once the run
// reached its budget it is ended (its context cancelled with the budget's
// error as the cause) and the error returned.
func (s *Session) checkBudget() error {
	err := s.overBudget()
	if err == nil {
		return nil
	}
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel(err)
	}
	s.mu.Unlock()
	return err
}

// FormatCost writes a cost with the precision a small amount needs: 0.0123,
// 1.25, 0.000042.
func FormatCost(c float64) string {
	switch {
	case c == 0:
		return "0"
	case c >= 1:
		return strconv.FormatFloat(c, 'f', 2, 64)
	case c >= 0.01:
		return strconv.FormatFloat(c, 'f', 4, 64)
	}
	// Two significant digits, without an exponent.
	return strconv.FormatFloat(c, 'f', min(1-int(math.Floor(math.Log10(c))), 12), 64)
}
