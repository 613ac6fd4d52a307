package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// Usage is the token usage of one model call (a usage event's: its Role,
// its tokens, its cost when known) or the totals of a run (run_ended's) or
// of a session (Info's), with their parts by role. Cost is in the currency
// of the endpoint or of the configured prices, and absent when unknown,
// never 0 for unknown; CostPartial says that some calls' cost is unknown.
// The fields are loop.Usage's, which says what each means.
type Usage struct {
	UsageCount
	Roles *UsageByRole `json:"roles,omitempty"`
}

// UsageCount is a Usage without its parts by role: a call's, or a role's
// part of totals.
type UsageCount struct {
	Role             string   `json:"role,omitempty"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	TotalTokens      int      `json:"total_tokens"`
	CachedTokens     int      `json:"cached_tokens,omitempty"`
	Cost             *float64 `json:"cost,omitempty"`
	CostPartial      bool     `json:"cost_partial,omitempty"`
	Calls            int      `json:"calls,omitempty"`
	Estimated        bool     `json:"estimated,omitempty"`
}

// UsageByRole are totals' parts by the role of the model.
type UsageByRole struct {
	Chat      *UsageCount `json:"chat,omitempty"`
	Utility   *UsageCount `json:"utility,omitempty"`
	Embedding *UsageCount `json:"embedding,omitempty"`
}

// usageOf is the editor-facing usage of the engine's.
func usageOf(u *loop.Usage) *Usage {
	if u == nil {
		return nil
	}
	out := &Usage{UsageCount: *countOf(u)}
	if r := u.Roles; r != nil {
		out.Roles = &UsageByRole{Chat: countOf(r.Chat), Utility: countOf(r.Utility), Embedding: countOf(r.Embedding)}
	}
	return out
}

func countOf(u *loop.Usage) *UsageCount {
	if u == nil {
		return nil
	}
	out := &UsageCount{Role: u.Role, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.CachedTokens, CostPartial: u.CostPartial, Calls: u.Calls, Estimated: u.Estimated}
	if u.Cost != nil {
		out.Cost = new(*u.Cost)
	}
	return out
}

// engineUsage is a call's usage in the engine's terms, which add it up.
func engineUsage(u *Usage) loop.Usage {
	out := loop.Usage{Role: u.Role, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.CachedTokens, Estimated: u.Estimated}
	if u.Cost != nil {
		out.Cost = new(*u.Cost)
	}
	return out
}

// usageTotals adds up the usage events of a session.
type usageTotals struct{ t loop.Usage }

func (t *usageTotals) see(e Event) {
	if e.Type == loop.EventUsage && e.Usage != nil {
		u := engineUsage(e.Usage)
		if u.Role == "" {
			u.Role = loop.RoleChat // stored before usage had roles: only the chat model's was counted
		}
		t.t.Add(u)
	}
}

// usage is the totals, nil when no call was counted.
func (t *usageTotals) usage() *Usage {
	if t.t.Calls == 0 {
		return nil
	}
	return usageOf(&t.t)
}

// UsageOf adds up the usage events among events: a session's totals when
// they are its whole log.
func UsageOf(events []Event) *Usage {
	var t usageTotals
	for _, e := range events {
		t.see(e)
	}
	return t.usage()
}

// Line says u in one short line, the way every face shows a run's or a
// session's use: "12.3k tokens in (40% cached), 678 out, cost 0.0123".
// Counts Zero estimated (the server reported none) start with "~"; an
// unknown cost is not shown, a partly known one is "at least".
func (u *UsageCount) Line() string {
	if u == nil {
		return "no model calls"
	}
	var b strings.Builder
	if u.Estimated {
		b.WriteString("~")
	}
	fmt.Fprintf(&b, "%s tokens in", Count(u.PromptTokens))
	if u.CachedTokens > 0 && u.PromptTokens > 0 {
		fmt.Fprintf(&b, " (%d%% cached)", int(math.Round(100*float64(u.CachedTokens)/float64(u.PromptTokens))))
	}
	fmt.Fprintf(&b, ", %s out", Count(u.CompletionTokens))
	if u.Cost != nil {
		b.WriteString(", cost ")
		if u.CostPartial {
			b.WriteString("at least ")
		}
		b.WriteString(loop.FormatCost(*u.Cost))
	}
	return b.String()
}

// Count writes a token count short: 678, 12.3k, 4.56M.
func Count(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
}
