package mcp

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

func untrusted() *servertest.FakeTrust { return servertest.UntrustedTrust("sha256:feedface") }

// trustElicitor answers the trust question.
type trustElicitor struct {
	action mcp.ElicitationResponseAction
	trust  bool
	mu     sync.Mutex
	asked  []string
}

func (e *trustElicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action, Content: map[string]any{"trust": e.trust}}}, nil
}

// zero_start and zero_run say when the workspace's code is off.
func TestTrustWarningInResults(t *testing.T) {
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft, Replies: []llmtest.Reply{{Content: answer("one")}, {Content: answer("two")}}})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "hi", "workspace": env.Workspace})
	mustOK(t, res)
	tr, _ := out["trust"].(map[string]any)
	if tr == nil || tr["status"] != "untrusted" || !strings.Contains(text(res), "zero_trust") {
		t.Fatalf("zero_run result: %v\n%s", out, text(res))
	}
	out, res = call(t, r.c, "zero_start", map[string]any{"message": "again", "session": out["session"]})
	mustOK(t, res)
	if tr, _ := out["trust"].(map[string]any); tr == nil || !slices.Contains(anyStrings(tr["files"]), ".zero/extensions/agent_init/_10_x") {
		t.Errorf("zero_start result: %v", out)
	}
}

// zero_trust grants only on the user's answer to an elicitation.
func TestZeroTrustNeedsTheUser(t *testing.T) {
	for _, tt := range []struct {
		name    string
		el      *trustElicitor
		granted bool
	}{
		{"no elicitation", nil, false},
		{"declined", &trustElicitor{action: mcp.ElicitationResponseActionDecline}, false},
		{"accepted unticked", &trustElicitor{action: mcp.ElicitationResponseActionAccept}, false},
		{"accepted", &trustElicitor{action: mcp.ElicitationResponseActionAccept, trust: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := untrusted()
			env := servertest.New(t, servertest.Options{Trust: ft})
			co := clientOpts{}
			if tt.el != nil {
				co.elicit = tt.el
			}
			r := startStdio(t, env, co)
			out, res := call(t, r.c, "zero_trust", map[string]any{"workspace": env.Workspace})
			mustOK(t, res)
			if got := len(ft.Granted()) > 0; got != tt.granted {
				t.Fatalf("granted = %v, want %v; result %v", got, tt.granted, out)
			}
			if tt.el == nil && !strings.Contains(text(res), "zero trust --workspace "+env.Workspace) {
				t.Errorf("without elicitation the user must be told how: %s", text(res))
			}
			if tt.el != nil && (len(tt.el.asked) != 1 || !strings.Contains(tt.el.asked[0], ".zero/extensions/agent_init/_10_x")) {
				t.Errorf("the question must list the files: %q", tt.el.asked)
			}
			if tt.granted && out["status"] != "trusted" {
				t.Errorf("result: %v", out)
			}
		})
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
