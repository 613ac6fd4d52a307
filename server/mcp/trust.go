package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/server"
)

// trustWarning is the note start and run results carry when the session's
// workspace has code that is off; nil when there is none.
type trustWarning struct {
	Status  string   `json:"status"`
	Files   []string `json:"files"`
	Message string   `json:"message"`
}

func sessionTrust(s *server.Session) *trustWarning {
	st, ok, err := s.TrustState()
	if !ok || err != nil || !st.NeedsTrust() {
		return nil
	}
	w := &trustWarning{Status: st.Status, Message: st.Message +
		" The user can trust it with the zero_trust tool (it asks them) or in a terminal."}
	for _, f := range st.Files {
		w.Files = append(w.Files, f.Path)
	}
	return w
}

type (
	trustArgs struct {
		Session   string `json:"session"`
		Workspace string `json:"workspace"`
	}
	trustOut struct {
		Workspace string   `json:"workspace"`
		Status    string   `json:"status"`
		Files     []string `json:"files,omitempty"`
		Message   string   `json:"message,omitempty"`
	}
)

var trustOutSchema = []byte(`{"type":"object","properties":{"workspace":{"type":"string"},
"status":{"type":"string","enum":["none","trusted","untrusted","changed"]},"files":{"type":"array","items":{"type":"string"}},
"message":{"type":"string"}},"required":["workspace","status"]}`)

// handleTrust is zero_trust. The model may call it, but only the person can
// grant: the files are put to them by elicitation, and without elicitation
// the tool says how they can trust the workspace themselves. The model's
// own word never trusts anything: the repository it would trust may be what
// steered it.
func (f *face) handleTrust(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a trustArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	tr := f.mgr.Trust()
	if tr == nil {
		return toolError(errors.New("this server keeps no workspace trust")), nil
	}
	var roots []string
	var sess *server.Session
	if a.Session != "" {
		s, err := f.session(a.Session)
		if err != nil {
			return toolError(err), nil
		}
		sess, roots = s, s.Spec().Roots
	} else {
		r, err := f.workspace(ctx, a.Workspace)
		if err != nil {
			return toolError(err), nil
		}
		roots = r
	}
	st, err := tr.TrustState(roots)
	if err != nil {
		return toolError(fmt.Errorf("trust: %w", err)), nil
	}
	out := trustOut{Workspace: st.Workspace, Status: st.Status, Message: st.Message}
	for _, fl := range st.Files {
		out.Files = append(out.Files, fl.Path)
	}
	if !st.NeedsTrust() {
		return result(out, "Nothing to do: the workspace's code is "+st.Status+"."), nil
	}
	if !canElicit(mcpserver.ClientSessionFromContext(ctx)) {
		out.Message = "Only the user can trust a workspace, and this client cannot ask them. " +
			"Ask the user to review the files and run: zero trust --workspace " + st.Workspace
		return result(out, out.Message), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Zero: %s\n\nFiles:\n", st.Message)
	for _, fl := range st.Files {
		b.WriteString("  " + fl.Path)
		if fl.Change != "" {
			b.WriteString(" (" + fl.Change + ")")
		}
		b.WriteByte('\n')
	}
	b.WriteString("\nTrust exactly these files? They will run on this machine; any later change turns them off again.")
	res, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Message: b.String(),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
				"trust": map[string]any{"type": "boolean", "title": "Trust these files", "default": false},
			}, "required": []string{"trust"}},
		},
	})
	if err != nil {
		out.Message = "The user could not be asked (" + err.Error() + "); they can run: zero trust --workspace " + st.Workspace
		return result(out, out.Message), nil
	}
	yes := false
	if m, ok := res.Content.(map[string]any); ok {
		yes, _ = m["trust"].(bool)
	}
	if res.Action != mcp.ElicitationResponseActionAccept || !yes {
		out.Message = "The user did not trust the workspace; its code stays off."
		return result(out, out.Message), nil
	}
	if sess != nil {
		st, err = sess.GrantTrust(ctx, st.Digest)
	} else {
		st, err = tr.Grant(roots, st.Digest)
	}
	if err != nil {
		return toolError(fmt.Errorf("trust: %w", err)), nil
	}
	out.Status, out.Message = st.Status, fmt.Sprintf("The user trusted %d files; they run from the next step on.", len(st.Files))
	return result(out, out.Message), nil
}
