package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/llm/llmtest"
)

// On protocol 2026-07-28 a server cannot send roots/list: a call without
// a workspace from a client with roots gets an input request for them,
// and the client's retry with its roots opens the session there, for
// zero_start and zero_run alike.
func TestModernClientRootsByInputRequest(t *testing.T) {
	for _, name := range []string{"zero_start", "zero_run"} {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, nil, llmtest.Reply{Content: answer("done here")})
			roots := &rootsLister{dirs: []string{"/no/such/dir", env.Workspace}}
			c := startModern(t, env, client.WithRootsHandler(roots))
			out, res := call(t, c, name, map[string]any{"message": "hi"})
			mustOK(t, res)
			s, err := env.Manager.Get(fmt.Sprint(out["session"]))
			if err != nil || !slices.Equal(s.Spec().Roots, []string{env.Workspace}) {
				t.Fatalf("session roots = %v (%v), want the client's directory root %s; result %v", s.Spec().Roots, err, env.Workspace, out)
			}
			if roots.times() != 1 {
				t.Errorf("roots asked %d times, want 1", roots.times())
			}
			if name == "zero_run" && out["response"] != "done here" {
				t.Errorf("zero_run = %v", out)
			}
		})
	}
}

// The input request itself: roots/list under "roots", and no request
// state (zero_run's is its approvals'); a call naming its workspace is
// not asked.
func TestRootsInputRequestOnTheWire(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	cw, lines := serveRaw(t, env)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`
	r := rawCall(t, cw, lines, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"hi"},`+meta+`}}`)
	var res struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  *string                    `json:"requestState"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("answer: %+v %s", r.Error, r.Result)
	}
	if res.ResultType != string(mcp.ResultTypeInputRequired) || !strings.Contains(string(res.InputRequests["roots"]), `"roots/list"`) || res.RequestState != nil {
		t.Errorf("want an input request for roots without state: %s", r.Result)
	}
	if len(env.Manager.List()) != 0 {
		t.Error("a session was created before the roots came")
	}
	// The retry with roots creates the session there.
	retry := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"hi"},`+
		`"inputResponses":{"roots":{"roots":[{"uri":"file://%s"}]}},`+meta+`}}`, env.Workspace)
	if r := rawCall(t, cw, lines, retry); r.Error != nil || !strings.Contains(string(r.Result), env.Workspace) {
		t.Fatalf("retry with roots: %+v %s", r.Error, r.Result)
	}
	// Roots that are no directories are no workspace: the call says so.
	retry = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"hi"},` +
		`"inputResponses":{"roots":{"roots":[{"uri":"https://example.com/x"},{"uri":"file:///no/such/dir"}]}},` + meta + `}}`
	if r := rawCall(t, cw, lines, retry); r.Error != nil || !strings.Contains(string(r.Result), "workspace: required") {
		t.Errorf("retry with unusable roots: %+v %s", r.Error, r.Result)
	}
	named := fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"zero_start","arguments":{"message":"hi","workspace":%q},`+meta+`}}`, env.Workspace)
	if r := rawCall(t, cw, lines, named); r.Error != nil || strings.Contains(string(r.Result), "input_required") {
		t.Errorf("a call naming its workspace: %+v %s", r.Error, r.Result)
	}
}

// A client before 2026-07-28 is still asked with roots/list.
func TestLegacyClientRoots(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	roots := &rootsLister{dirs: []string{env.Workspace}}
	c, version := startClient(t, env, client.WithLegacyProtocolOnly(), client.WithRootsHandler(roots))
	if mcp.IsModernProtocol(version) {
		t.Fatalf("negotiated %s", version)
	}
	out, res := call(t, c, "zero_start", map[string]any{"message": "hi"})
	mustOK(t, res)
	if out["workspace"] != env.Workspace || roots.times() != 1 {
		t.Errorf("zero_start = %v; roots asked %d times", out, roots.times())
	}
}
