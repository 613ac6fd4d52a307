package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/server"
)

// The answers of the trust question.
const (
	actionTrust  = "Trust"
	actionNotNow = "Not now"
)

// trustMessage is the question put to the user: what would run, then
// whether to trust exactly that.
func trustMessage(st server.TrustState) string {
	var b strings.Builder
	b.WriteString(st.Message)
	b.WriteString("\n\nFiles:")
	for i, f := range st.Files {
		if i == 12 {
			fmt.Fprintf(&b, "\n  … and %d more (zero trust --check lists them all)", len(st.Files)-i)
			break
		}
		b.WriteString("\n  " + f.Path)
		if f.Change != "" {
			b.WriteString(" (" + f.Change + ")")
		}
	}
	b.WriteString("\n\nTrust exactly these files? Any later change turns them off again.")
	return b.String()
}

// askTrust tells the user, when the session's workspace carries code that
// is off, and lets them trust it with window/showMessageRequest. The answer
// may take minutes, so it is asked from a goroutine of its own.
func (c *conn) askTrust(t *tracked) {
	st, ok, err := t.sess.TrustState()
	if !ok || err != nil || !st.NeedsTrust() || !c.capabilities().ask {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.wg.Go(func() { // under mu with closing false
		var choice *protocol.MessageActionItem
		err := t.rc.Call(c.ctx, "window/showMessageRequest", &protocol.ShowMessageRequestParams{
			Type:    protocol.MessageTypeWarning,
			Message: trustMessage(st),
			Actions: []protocol.MessageActionItem{{Title: actionTrust}, {Title: actionNotNow}},
		}, &choice)
		if err != nil || choice == nil || choice.Title != actionTrust {
			return
		}
		c.grantTrust(c.ctx, t, st.Digest)
	})
}

// grantTrust trusts the code the user was shown and says how it went.
func (c *conn) grantTrust(ctx context.Context, t *tracked, digest string) {
	st, err := t.sess.GrantTrust(ctx, digest)
	msg := &protocol.ShowMessageParams{Type: protocol.MessageTypeInfo,
		Message: fmt.Sprintf("Zero: this workspace's code is trusted (%d files); it runs from the next step on.", len(st.Files))}
	if err != nil {
		msg = &protocol.ShowMessageParams{Type: protocol.MessageTypeError, Message: "Zero: not trusted: " + err.Error()}
	}
	if err := t.rc.Notify(ctx, "window/showMessage", msg); err != nil {
		c.log.Debug("trust result not shown", "err", err)
	}
}

// trustParams are zero/trust's params: without digest it only reports; with
// the digest of the state the user was shown, the editor records the user's
// consent to exactly that content.
type trustParams struct {
	SessionID *string `json:"sessionId"`
	Digest    string  `json:"digest"`
}

// zero/trust: the editor's own trust prompt (the VS Code extension shows
// the files in its view and sends the user's answer here).
func (c *conn) trust(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p trustParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	sess, err := c.session(p.SessionID, "")
	if err != nil {
		return continuation{}, err
	}
	st, ok, err := sess.TrustState()
	switch {
	case !ok:
		return continuation{}, fmt.Errorf("zero/trust: %w", server.ErrUnsupported)
	case err != nil:
		return continuation{}, fmt.Errorf("zero/trust: %w", err)
	case p.Digest == "":
		return done(st), nil
	}
	return later(func(ctx context.Context) (any, error) {
		st, err := sess.GrantTrust(ctx, p.Digest)
		if errors.Is(err, server.ErrTrustMoved) {
			return nil, invalidParams("digest", "%v", err)
		}
		if err != nil {
			return nil, fmt.Errorf("zero/trust: %w", err)
		}
		return st, nil
	}), nil
}
