package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
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

// On protocol 2026-07-28 zero_trust asks by an input request and grants on
// the retry that carries the user's answer; a client with roots and no
// workspace argument is asked for its roots first, and the answer still
// trusts that workspace.
func TestModernZeroTrust(t *testing.T) {
	for _, tt := range []struct {
		name      string
		el        *trustElicitor
		workspace bool // name the workspace; else the client's roots give it
		granted   bool
	}{
		{"accepted", &trustElicitor{action: mcp.ElicitationResponseActionAccept, trust: true}, true, true},
		{"accepted by roots", &trustElicitor{action: mcp.ElicitationResponseActionAccept, trust: true}, false, true},
		{"accepted unticked", &trustElicitor{action: mcp.ElicitationResponseActionAccept}, true, false},
		{"declined", &trustElicitor{action: mcp.ElicitationResponseActionDecline, trust: true}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := untrusted()
			env := servertest.New(t, servertest.Options{Trust: ft})
			roots := &rootsLister{dirs: []string{env.Workspace}}
			c := startModern(t, env, client.WithElicitationHandler(tt.el), client.WithRootsHandler(roots))
			args := map[string]any{}
			if tt.workspace {
				args["workspace"] = env.Workspace
			}
			out, res := call(t, c, "zero_trust", args)
			mustOK(t, res)
			if got := slices.Equal(ft.Granted(), []string{"sha256:feedface"}); got != tt.granted {
				t.Fatalf("granted %v, want %v; result %v", ft.Granted(), tt.granted, out)
			}
			if len(tt.el.asked) != 1 || !strings.Contains(tt.el.asked[0], ".zero/extensions/agent_init/_10_x") {
				t.Errorf("the question must list the files, once: %q", tt.el.asked)
			}
			wantRoots := 1
			if tt.workspace {
				wantRoots = 0
			}
			if roots.times() != wantRoots {
				t.Errorf("roots asked %d times, want %d", roots.times(), wantRoots)
			}
			if tt.granted && (out["status"] != "trusted" || out["workspace"] != env.Workspace) {
				t.Errorf("result: %v", out)
			}
		})
	}
}

// The request state of a trust question comes back from the client, so it
// is checked like an argument: a state the server did not seal, one
// changed to name other code or another workspace, or one whose code
// changed since the user saw it, trusts nothing, whatever the answer says.
func TestForgedTrustStateGrantsNothing(t *testing.T) {
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	cw, lines := serveRaw(t, env)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	yes := `"inputResponses":{"trust":{"action":"accept","content":{"trust":true}}}`
	id := 0
	trustCall := func(workspace, extra string) rpcReply {
		t.Helper()
		id++
		return rawCall(t, cw, lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"zero_trust","arguments":{"workspace":%q},%s%s}}`,
			id, workspace, extra, meta))
	}
	state := func(s string) string { b, _ := json.Marshal(s); return `"requestState":` + string(b) + "," }

	// The genuine question.
	r := trustCall(env.Workspace, "")
	var asked struct {
		ResultType    string `json:"resultType"`
		RequestState  string `json:"requestState"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &asked) != nil || asked.ResultType != string(mcp.ResultTypeInputRequired) ||
		asked.InputRequests["trust"].Method != string(mcp.MethodElicitationCreate) || asked.RequestState == "" {
		t.Fatalf("want the trust question as an input request: %+v %s", r.Error, r.Result)
	}
	genuine := asked.RequestState
	payload, mac, _ := strings.Cut(strings.TrimPrefix(genuine, trustStatePrefix), ".")
	seal := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	other := t.TempDir()

	for _, tt := range []struct {
		name, workspace, state, want string
	}{
		{"made up", env.Workspace, trustStatePrefix + seal(map[string]any{"r": []string{env.Workspace}, "d": "sha256:feedface"}) + "." + mac, "requestState: not a state"},
		{"no seal", env.Workspace, trustStatePrefix + payload, "requestState: not a state"},
		{"another digest", env.Workspace, trustStatePrefix + seal(map[string]any{"r": []string{env.Workspace}, "d": "sha256:other"}) + "." + mac, "requestState: not a state"},
		{"another workspace in the state", other, trustStatePrefix + seal(map[string]any{"r": []string{other}, "d": "sha256:feedface"}) + "." + mac, "requestState: not a state"},
		{"approval state", env.Workspace, runStatePrefix + "x:1:0", "requestState: not a state"},
		{"another workspace in the call", other, genuine, "workspace: the user was asked about another workspace"},
	} {
		r := trustCall(tt.workspace, state(tt.state)+yes+",")
		if r.Error != nil || !strings.Contains(string(r.Result), tt.want) || !strings.Contains(string(r.Result), `"isError":true`) {
			t.Errorf("%s: %+v %s, want an error %q", tt.name, r.Error, r.Result, tt.want)
		}
		if g := ft.Granted(); len(g) > 0 {
			t.Fatalf("%s: granted %v", tt.name, g)
		}
	}
	// No answer, or no: nothing is trusted.
	for _, answer := range []string{``, `"inputResponses":{"trust":{"action":"decline"}},`, `"inputResponses":{"trust":{"action":"accept","content":{"trust":false}}},`} {
		if r := trustCall(env.Workspace, state(genuine)+answer); r.Error != nil || !strings.Contains(string(r.Result), "did not trust") || len(ft.Granted()) > 0 {
			t.Errorf("answer %s: %+v %s, granted %v", answer, r.Error, r.Result, ft.Granted())
		}
	}
	// The code changed after the question: the yes was not about it.
	ft.State.Digest = "sha256:changed"
	if r := trustCall(env.Workspace, state(genuine)+yes+","); !strings.Contains(string(r.Result), "changed after it was shown") || len(ft.Granted()) > 0 {
		t.Errorf("after a change: %+v %s, granted %v", r.Error, r.Result, ft.Granted())
	}
	// The genuine state with the user's yes, on the code they saw, trusts it.
	ft.State.Digest = "sha256:feedface"
	if r := trustCall(env.Workspace, state(genuine)+yes+","); r.Error != nil || !slices.Equal(ft.Granted(), []string{"sha256:feedface"}) {
		t.Errorf("the genuine answer: %+v %s, granted %v", r.Error, r.Result, ft.Granted())
	}
}
