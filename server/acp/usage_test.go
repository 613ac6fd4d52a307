package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// The prompt response carries the turn's tokens (ACP's usage, cached
// included) and Zero's account with the cost in _meta; a turn that reached
// limits.tokens ends with max_tokens, its message saying which limit.
func TestPromptUsageAndBudget(t *testing.T) {
	t.Parallel()
	musing := llmtest.Reply{Content: "Thinking it over.", Usage: &llmtest.Usage{PromptTokens: 900, CompletionTokens: 30, TotalTokens: 930, CachedTokens: 500, Cost: 0.02}}
	env := servertest.New(t, servertest.Options{
		// Agent Zero's JSON protocol: "Thinking it over." is asked again.
		Settings: map[string]string{"limits.tokens": "1500", "models.chat.tool_protocol": "json"},
		Replies:  []llmtest.Reply{musing, {Content: answer("done")}, musing, musing, musing},
	})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	resp, err := h.prompt(t.Context(), s.SessionId, "first")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	u := resp.Usage
	if u == nil || u.InputTokens < 900 || u.CachedReadTokens == nil || *u.CachedReadTokens != 500 || u.TotalTokens < 930 {
		t.Fatalf("usage = %+v", u)
	}
	z, _ := resp.Meta["zero/usage"].(map[string]any)
	if z == nil || z["cost"] != 0.02 || z["cost_partial"] != true || z["calls"] != float64(2) {
		t.Errorf("_meta zero/usage = %#v", resp.Meta["zero/usage"])
	}

	resp, err = h.prompt(t.Context(), s.SessionId, "second")
	if err != nil || resp.StopReason != sdk.StopReasonMaxTokens {
		t.Fatalf("over budget: prompt = %+v, %v; want max_tokens", resp, err)
	}
	if text := messageText(h.client.of(s.SessionId)); !strings.Contains(text, "Stopped: ") || !strings.Contains(text, "limits.tokens") {
		t.Errorf("the turn does not say the budget stopped it:\n%s", text)
	}
}
