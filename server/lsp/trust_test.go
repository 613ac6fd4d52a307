package lsp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/server"
)

func untrusted() *servertest.FakeTrust { return servertest.UntrustedTrust("sha256:feed") }

// A new session on a workspace with untrusted code asks the user, listing
// the files; "Trust" records exactly the digest that was shown.
func TestTrustAskedOnNewSession(t *testing.T) {
	t.Parallel()
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	c := start(t, env, clientOpts{answer: func(p protocol.ShowMessageRequestParams) any {
		if strings.Contains(p.Message, "Trust exactly these files?") {
			return protocol.MessageActionItem{Title: actionTrust}
		}
		return nil
	}})
	c.initialize(env.Workspace)
	c.newSession()
	c.waitFor("the trust result", func(ns []note) bool {
		return slices.ContainsFunc(ns, func(n note) bool {
			return n.method == "window/showMessage" && strings.Contains(string(n.params), "trusted")
		})
	})
	if got := ft.Granted(); !slices.Equal(got, []string{"sha256:feed"}) {
		t.Errorf("granted %v", got)
	}
	c.mu.Lock()
	asked := slices.Clone(c.asked)
	c.mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0].Message, ".zero/extensions/agent_init/_10_x") {
		t.Errorf("the question must list the files: %+v", asked)
	}
}

// "Not now" (or dismissing the message) trusts nothing.
func TestTrustDeclined(t *testing.T) {
	t.Parallel()
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	c := start(t, env, clientOpts{answer: func(protocol.ShowMessageRequestParams) any {
		return protocol.MessageActionItem{Title: actionNotNow}
	}})
	c.initialize(env.Workspace)
	id := c.newSession()
	var st server.TrustState
	c.call("zero/trust", map[string]any{"sessionId": id}, &st) // after the question was answered
	if len(ft.Granted()) != 0 || st.Status != server.TrustUntrusted {
		t.Errorf("granted %v, state %+v", ft.Granted(), st)
	}
}

// zero/trust reports the state, and grants only the digest the user saw.
func TestTrustRequest(t *testing.T) {
	t.Parallel()
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	c := start(t, env, clientOpts{failAsk: true})
	c.initialize(env.Workspace)
	id := c.newSession()

	var st server.TrustState
	c.call("zero/trust", map[string]any{"sessionId": id}, &st)
	if st.Status != server.TrustUntrusted || st.Digest != "sha256:feed" || len(st.Files) != 1 {
		t.Fatalf("state %+v", st)
	}
	if e := c.rpcErr("zero/trust", map[string]any{"sessionId": id, "digest": "sha256:other"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "changed") {
		t.Errorf("a stale digest: %+v", e)
	}
	if len(ft.Granted()) != 0 {
		t.Fatal("a stale digest was granted")
	}
	var raw json.RawMessage
	c.call("zero/trust", map[string]any{"sessionId": id, "digest": "sha256:feed"}, &raw)
	if !strings.Contains(string(raw), `"status":"trusted"`) || len(ft.Granted()) != 1 {
		t.Errorf("grant: %s, granted %v", raw, ft.Granted())
	}
	if e := c.rpcErr("zero/trust", map[string]any{}); e.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("no session: %+v", e)
	}
}
