package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/loop"
)

var testPolicy = Policy{
	Default: Auto,
	Rules: []Rule{
		{Tool: "code_execution_tool", Pattern: "rm -rf*", Decision: Deny, Reason: "destructive commands are off limits"},
		{Tool: "code_execution_tool", Decision: Ask},
	},
}

// answerWith answers every approval request of s as fn decides, from the
// event stream as a face would.
func answerWith(t *testing.T, e *env, s *Session, fn func(b *Broker, id string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	f := s.Follow(s.Cursor())
	go func() {
		defer close(done)
		for {
			b, err := f.Next(ctx)
			if err != nil {
				return
			}
			for _, ev := range b.Events {
				if ev.Type == EventApprovalRequested {
					fn(e.broker, ev.Text)
				}
			}
		}
	}()
}

func TestApprovals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		replies    []string
		answer     func(t *testing.T, b *Broker, id string)
		wantRuns   []string
		wantAsked  int
		wantStatus []string // approval_resolved statuses
		wantHeard  string   // in the model's last request
	}{
		{
			name:    "ask then approve runs the tool",
			replies: []string{execCall("ls"), respond("listed")},
			answer: func(t *testing.T, b *Broker, id string) {
				if err := b.Approve(id, false); err != nil {
					t.Errorf("Approve: %v", err)
				}
			},
			wantRuns: []string{"ls"}, wantAsked: 1, wantStatus: []string{ApprovalApproved}, wantHeard: "ran ls",
		},
		{
			name:    "ask then deny blocks the tool and the model hears why",
			replies: []string{execCall("make deploy"), respond("ok, not deploying")},
			answer: func(t *testing.T, b *Broker, id string) {
				if err := b.Deny(id, "not on a Friday"); err != nil {
					t.Errorf("Deny: %v", err)
				}
			},
			wantAsked: 1, wantStatus: []string{ApprovalDenied}, wantHeard: "not on a Friday",
		},
		{
			name:    "allow always is remembered for the session",
			replies: []string{execCall("ls"), execCall("pwd"), respond("done")},
			answer: func(t *testing.T, b *Broker, id string) {
				if err := b.Approve(id, true); err != nil {
					t.Errorf("Approve: %v", err)
				}
			},
			wantRuns: []string{"ls", "pwd"}, wantAsked: 1, wantStatus: []string{ApprovalApproved}, wantHeard: "ran pwd",
		},
		{
			name:    "deny by pattern never asks",
			replies: []string{execCall("rm -rf /"), respond("refused")},
			answer: func(t *testing.T, _ *Broker, id string) {
				t.Errorf("request %s: a denied pattern should not ask", id)
			},
			wantHeard: "destructive commands are off limits",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			model := &fakeModel{}
			for _, r := range tt.replies {
				model.replies = append(model.replies, reply{content: r})
			}
			e := newEnv(t, map[string]*fakeModel{"": model}, &testPolicy)
			s := e.create(t, "")
			answerWith(t, e, s, func(b *Broker, id string) { tt.answer(t, b, id) })
			res, err := s.Prompt(testCtx(t), "go")
			if err != nil || res.StopReason != loop.StopResponse {
				t.Fatalf("Prompt = %+v, %v", res, err)
			}
			if diff := cmp.Diff(tt.wantRuns, e.exec.runs()); diff != "" {
				t.Errorf("tool runs (-want +got):\n%s", diff)
			}
			evs, _ := s.Events(0)
			if n := len(ofType(evs, EventApprovalRequested)); n != tt.wantAsked {
				t.Errorf("%d approval requests, want %d", n, tt.wantAsked)
			}
			var statuses []string
			for _, ev := range ofType(evs, EventApprovalResolved) {
				statuses = append(statuses, ev.Status)
			}
			if diff := cmp.Diff(tt.wantStatus, statuses); diff != "" {
				t.Errorf("approval_resolved statuses (-want +got):\n%s", diff)
			}
			if text := model.requestText(model.requests() - 1); !strings.Contains(text, tt.wantHeard) {
				t.Errorf("the model should hear %q:\n%s", tt.wantHeard, text)
			}
			for i, ev := range evs {
				if ev.Seq != int64(i+1) {
					t.Fatalf("event %d (%s) has seq %d: the merged stream must stay contiguous", i, ev.Type, ev.Seq)
				}
			}
			if p := e.broker.Pending(""); len(p) != 0 {
				t.Errorf("Pending() = %+v after the run", p)
			}
		})
	}
}

func TestApprovalCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{{content: execCall("ls")}}}
	e := newEnv(t, map[string]*fakeModel{"": model}, &testPolicy)
	s := e.create(t, "")
	asked := make(chan string, 1)
	answerWith(t, e, s, func(_ *Broker, id string) { asked <- id })

	done := make(chan RunResult, 1)
	go func() {
		res, _ := s.Prompt(testCtx(t), "go")
		done <- res
	}()
	id := <-asked
	pending := e.broker.Pending(s.ID())
	want := []Request{{ID: id, Session: s.ID(), Item: pending[0].Item, Tool: "code_execution_tool", Kind: "other",
		Args: map[string]any{"runtime": "terminal", "code": "ls"}, Title: "code_execution_tool: ls", Subject: "ls"}}
	if diff := cmp.Diff(want, pending); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(pending[0].Item, "tool-") {
		t.Errorf("request item %q should be the tool call's", pending[0].Item)
	}
	s.Cancel()
	res := <-done
	if res.StopReason != loop.StopCancelled {
		t.Errorf("run = %+v, want cancelled", res)
	}
	if got := e.exec.runs(); len(got) != 0 {
		t.Errorf("the tool ran: %v", got)
	}
	if err := e.broker.Approve(id, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("Approve after cancel = %v, want ErrNotFound", err)
	}
	resolved := ofType(mustEvents(s, 0), EventApprovalResolved)
	if len(resolved) != 1 || resolved[0].Status != ApprovalCancelled || resolved[0].Text != id {
		t.Errorf("approval_resolved = %+v", resolved)
	}
}

func TestPolicyDecide(t *testing.T) {
	t.Parallel()
	p := Policy{Default: Ask, Rules: []Rule{
		{Tool: "text_editor:read", Decision: Auto},
		{Tool: "code_execution_tool", Pattern: "git *", Decision: Auto},
		{Tool: "code_execution_tool", Pattern: "*sudo *", Decision: Deny},
		{Tool: "response"},
	}}
	tests := []struct {
		tool, method, subject string
		want                  Decision
	}{
		{"text_editor", "read", "/a", Auto},
		{"text_editor", "write", "/a", Ask},
		{"code_execution_tool", "", "git status", Auto},
		{"code_execution_tool", "", "echo x && sudo rm x", Deny},
		{"code_execution_tool", "", "make", Ask},
		{"response", "", "", Auto},
	}
	for _, tt := range tests {
		t.Run(tt.tool+":"+tt.method+" "+tt.subject, func(t *testing.T) {
			t.Parallel()
			if got, _ := p.decide(Call{Tool: tt.tool, Method: tt.method, Subject: tt.subject}); got != tt.want {
				t.Errorf("decide(%q, %q, %q) = %s, want %s", tt.tool, tt.method, tt.subject, got, tt.want)
			}
		})
	}
	if got := DefaultPolicy(true); got.Default != Auto || len(got.Rules) != 0 {
		t.Errorf("DefaultPolicy(confined) = %+v", got)
	}
	if got, _ := DefaultPolicy(false).decide(Call{Tool: "code_execution_tool", Kind: "execute", Subject: "ls"}); got != Ask {
		t.Errorf("unconfined commands: %s, want ask", got)
	}
}

// Approval "ask" decides by what a call does: reading, searching, fetching
// and thinking pass, and Zero's memory tools; everything else is asked
// about, an MCP server's tool whatever kind it claims, and a tool that
// does not say what it does.
func TestAskPolicyByKind(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		call Call
		want Decision
	}{
		{Call{Tool: "text_editor", Method: "read", Kind: "read"}, Auto},
		{Call{Tool: "text_editor", Method: "write", Kind: "edit"}, Ask},
		{Call{Tool: "text_editor", Method: "patch", Kind: "edit"}, Ask},
		{Call{Tool: "code_execution_tool", Kind: "execute", Subject: "ls"}, Ask},
		{Call{Tool: "input", Kind: "execute"}, Ask},
		{Call{Tool: "deploy_prod", Kind: "execute"}, Ask}, // a user's executable
		{Call{Tool: "mystery"}, Ask},                      // says nothing of what it does
		{Call{Tool: "mystery", Kind: "other"}, Ask},
		{Call{Tool: "github.create_issue", Kind: "other"}, Ask},
		{Call{Tool: "inner.zero_sessions", Kind: "read"}, Ask}, // an MCP tool claiming to read
		{Call{Tool: "memory_save.wipe", Kind: "think"}, Ask},
		{Call{Tool: "memory_save", Kind: "execute"}, Ask}, // an executable of that name
		{Call{Tool: "behaviour_adjustment"}, Ask},
		{Call{Tool: "memory_save", Kind: "edit"}, Auto},
		{Call{Tool: "memory_delete", Kind: "delete"}, Auto},
		{Call{Tool: "memory_forget", Kind: "delete"}, Auto},
		{Call{Tool: "behaviour_adjustment", Kind: "edit"}, Auto},
		{Call{Tool: "memory_load", Kind: "search"}, Auto},
		{Call{Tool: "response", Kind: "think"}, Auto},
		{Call{Tool: "call_subordinate", Kind: "think"}, Auto},
		{Call{Tool: "document_query", Kind: "fetch"}, Auto},
		{Call{Tool: "search_engine", Kind: "search"}, Auto},
		{Call{Tool: "mcp_resources", Kind: "read"}, Auto},
	} {
		if got := AskPolicy().Decide(tt.call); got != tt.want {
			t.Errorf("ask, %+v: %s, want %s", tt.call, got, tt.want)
		}
	}
	for approval, want := range map[string]Decision{"ask": Ask, "auto": Auto, "sandbox": Auto, "": Auto} {
		if got := PolicyFor(approval, true).Decide(Call{Tool: "code_execution_tool", Kind: "execute"}); got != want {
			t.Errorf("approval %q, confined: a command is %s, want %s", approval, got, want)
		}
	}
	if got := PolicyFor("sandbox", false).Decide(Call{Tool: "code_execution_tool", Kind: "execute"}); got != Ask {
		t.Errorf("approval sandbox, unconfined: a command is %s, want ask", got)
	}
}

func TestGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "anything", true},
		{"*", "", true},
		{"rm -rf*", "rm -rf /", true},
		{"rm -rf*", "echo rm -rf /", false},
		{"*rm -rf*", "echo; rm -rf /tmp/x", true},
		{"git", "git", true},
		{"git", "gitk", false},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-c-b", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"|"+tt.s, func(t *testing.T) {
			t.Parallel()
			if got := glob(tt.pattern, tt.s); got != tt.want {
				t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
			}
		})
	}
}

func TestSetPolicyPerSession(t *testing.T) {
	t.Parallel()
	strict := &fakeModel{replies: []reply{{content: execCall("ls")}, {content: respond("refused")}}}
	lax := &fakeModel{replies: []reply{{content: execCall("ls")}, {content: respond("ran")}}}
	e := newEnv(t, map[string]*fakeModel{"strict": strict, "lax": lax}, &Policy{Default: Auto})
	s1, s2 := e.create(t, "strict"), e.create(t, "lax")
	e.broker.SetPolicy(s1.ID(), Policy{Rules: []Rule{{Tool: "code_execution_tool", Decision: Deny, Reason: "no commands here"}}})
	if res, _ := s1.Prompt(testCtx(t), "go"); res.Response != "refused" {
		t.Fatalf("strict session: %+v", res)
	}
	if res, _ := s2.Prompt(testCtx(t), "go"); res.Response != "ran" {
		t.Fatalf("lax session: %+v", res)
	}
	if !strings.Contains(strict.requestText(1), "no commands here") {
		t.Error("the strict session's model did not hear the refusal")
	}
	if diff := cmp.Diff([]string{"ls"}, e.exec.runs()); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}
