package acp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/server"
)

// Permission options of the trust question.
const (
	optTrust  = "trust"
	optNotNow = "not_now"
)

// trustNotice tells the user, as a message, that the session's workspace
// carries code that is off and how to turn it on; "" when there is none.
func trustNotice(sess *server.Session) string {
	st, ok, err := sess.TrustState()
	if !ok || err != nil || !st.NeedsTrust() {
		return ""
	}
	return st.Message + "\n\nType /trust to review the files and trust them.\n"
}

// fileList renders the files of a trust state for people.
func fileList(st server.TrustState) string {
	var b strings.Builder
	for _, f := range st.Files {
		b.WriteString("- `" + f.Path + "`")
		switch {
		case f.Change != "":
			b.WriteString(" (" + f.Change + ")")
		case f.Point != "":
			b.WriteString(" (" + f.Kind + " at " + f.Point + ")")
		case f.Kind != "":
			b.WriteString(" (" + f.Kind + ")")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// trustCommand is /trust: it shows the workspace's code as a tool call and
// asks the user, with session/request_permission, whether to trust exactly
// those files. Only the person's answer grants it: a slash command is the
// user's own message, and the question names the digest it shows.
func (a *agent) trustCommand(ctx context.Context, st *sessState) string {
	sess := st.sess
	ts, ok, err := sess.TrustState()
	switch {
	case !ok:
		return "This server keeps no workspace trust."
	case err != nil:
		return "Could not read the workspace's code: " + err.Error()
	case ts.Status == server.TrustNone:
		return "This workspace carries no code that Zero would run; there is nothing to trust."
	case ts.Status == server.TrustTrusted:
		return fmt.Sprintf("This workspace's code is trusted already (%s):\n\n%s", files(len(ts.Files)), fileList(ts))
	}
	digest := strings.TrimPrefix(ts.Digest, "sha256:")
	callID := sdk.ToolCallId("trust-" + digest[:min(len(digest), 12)])
	title := fmt.Sprintf("Trust the code of %s (%s)", ts.Workspace, files(len(ts.Files)))
	kind := sdk.ToolKindOther
	body := ts.Message + "\n\n" + fileList(ts) + "\nTrusting runs exactly these files on this machine; any later change turns them off again."
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(body))}
	idx := st.enqueue(item{update: &sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		ToolCallId: callID, Title: title, Kind: kind, Status: sdk.ToolCallStatusPending, Content: content}}})
	if err := st.waitSent(ctx, idx); err != nil {
		return "Could not ask: " + err.Error()
	}
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(st.id),
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: callID, Title: &title, Kind: &kind, Status: sdk.Ptr(sdk.ToolCallStatusPending)},
		Options: []sdk.PermissionOption{
			{OptionId: optTrust, Name: "Trust these files", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: optNotNow, Name: "Not now", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	status, reply := sdk.ToolCallStatusFailed, "Not trusted: the workspace's code stays off."
	switch {
	case err != nil:
		reply = "Could not ask: " + err.Error()
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optTrust:
		granted, gerr := sess.GrantTrust(ctx, ts.Digest)
		switch {
		case errors.Is(gerr, server.ErrTrustMoved):
			reply = "Not trusted: the files changed while you were asked. Type /trust to see them again."
		case gerr != nil:
			reply = "Could not trust: " + gerr.Error()
		default:
			status = sdk.ToolCallStatusCompleted
			reply = fmt.Sprintf("Trusted %s of %s; they run from the next message on. Any change to them turns them off again.", files(len(granted.Files)), granted.Workspace)
		}
	}
	st.enqueue(item{update: &sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: callID, Status: &status}}})
	return reply
}

// files says how many files, for people.
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
