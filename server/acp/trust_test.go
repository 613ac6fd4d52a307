package acp

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
)

func untrusted() *servertest.FakeTrust { return servertest.UntrustedTrust("sha256:0123456789abcdef") }

// A new session on untrusted code says so in a message and offers /trust,
// which asks with session/request_permission and grants the digest shown.
func TestTrustCommand(t *testing.T) {
	t.Parallel()
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	client := newFakeClient()
	client.choose = func(p sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected(optTrust)
	}
	h := start(t, env, client)
	h.init(t, false)
	id := h.newSession(t).SessionId
	client.waitFor(t, id, "the trust notice", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "Type /trust")
	})
	if !slices.ContainsFunc(client.of(id), func(u sdk.SessionUpdate) bool {
		return u.AvailableCommandsUpdate != nil && slices.ContainsFunc(u.AvailableCommandsUpdate.AvailableCommands,
			func(c sdk.AvailableCommand) bool { return c.Name == "trust" })
	}) {
		t.Error("/trust is not among the available commands")
	}

	resp, err := h.prompt(t.Context(), id, "/trust")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/trust: %+v, %v", resp, err)
	}
	if got := ft.Granted(); !slices.Equal(got, []string{"sha256:0123456789abcdef"}) {
		t.Errorf("granted %v", got)
	}
	client.waitFor(t, id, "the answer", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "Trusted 1 file of")
	})
	client.mu.Lock()
	perms := slices.Clone(client.perms)
	client.mu.Unlock()
	if len(perms) != 1 || perms[0].ToolCall.ToolCallId != "trust-0123456789ab" {
		t.Fatalf("permission requests: %+v", perms)
	}
	if !strings.Contains(toolCallText(client.of(id)), ".zero/extensions/agent_init/_10_x") {
		t.Errorf("the files are not shown:\n%s", describe(client.of(id)))
	}
}

// "Not now" (or a client that cannot ask) trusts nothing.
func TestTrustCommandDeclined(t *testing.T) {
	t.Parallel()
	ft := untrusted()
	env := servertest.New(t, servertest.Options{Trust: ft})
	client := newFakeClient() // answers every permission request with "cancelled"
	h := start(t, env, client)
	h.init(t, false)
	id := h.newSession(t).SessionId
	if _, err := h.prompt(t.Context(), id, "/trust"); err != nil {
		t.Fatal(err)
	}
	if len(ft.Granted()) != 0 {
		t.Error("a dismissed question granted trust")
	}
	client.waitFor(t, id, "the refusal", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "Not trusted")
	})
}

func toolCallText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.ToolCall != nil {
			for _, c := range u.ToolCall.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					b.WriteString(c.Content.Content.Text.Text)
				}
			}
		}
	}
	return b.String()
}
