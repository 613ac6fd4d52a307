package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
		Session   string `json:"session,omitempty" jsonschema:"Session whose workspace to trust."`
		Workspace string `json:"workspace,omitempty" jsonschema:"Absolute path of the workspace, when no session is given."`
	}
	trustOut struct {
		Workspace string   `json:"workspace"`
		Status    string   `json:"status"`
		Files     []string `json:"files,omitempty"`
		Message   string   `json:"message,omitempty"`
	}
)

// handleTrust is zero_trust. The model may call it, but only the person can
// grant: the files are put to them by elicitation, and without elicitation
// the tool says how they can trust the workspace themselves. The model's
// own word never trusts anything: the repository it would trust may be what
// steered it.
//
// From protocol 2026-07-28 on the question goes back as an input request
// and the client calls again with the answer and the request state (see
// trustAnswered).
func (f *face) handleTrust(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a trustArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	tr := f.mgr.Trust()
	if tr == nil {
		return toolError(errors.New("this server keeps no workspace trust")), nil
	}
	if state := req.Params.RequestState; state != "" {
		return f.trustAnswered(ctx, tr, a, state, req.Params.InputResponses), nil
	}
	sess, roots, ask, err := f.trustTarget(ctx, a, req.Params.InputResponses)
	if err != nil {
		return toolError(err), nil
	}
	if ask != nil {
		return ask, nil
	}
	st, err := tr.TrustState(roots)
	if err != nil {
		return toolError(fmt.Errorf("trust: %w", err)), nil
	}
	out := newTrustOut(st)
	if !st.NeedsTrust() {
		return result(out, "Nothing to do: the workspace's code is "+st.Status+"."), nil
	}
	if clientCaps(ctx).Elicitation == nil {
		out.Message = "Only the user can trust a workspace, and this client cannot ask them. " +
			"Ask the user to review the files and run: zero trust --workspace " + st.Workspace
		return result(out, out.Message), nil
	}
	if mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx)) {
		shown := shownTrust{Session: a.Session, Roots: roots, Digest: st.Digest}
		return mcpserver.NewInputRequestBuilder(shown.seal()).Elicit(trustInput, trustQuestion(st)).ToolResult(), nil
	}
	res, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  trustQuestion(st),
	})
	if err != nil {
		out.Message = "The user could not be asked (" + err.Error() + "); they can run: zero trust --workspace " + st.Workspace
		return result(out, out.Message), nil
	}
	if !trusts(res) {
		out.Message = "The user did not trust the workspace; its code stays off."
		return result(out, out.Message), nil
	}
	return grant(ctx, tr, sess, roots, st.Digest, out), nil
}

// trustTarget is the workspace a zero_trust call names: its session's, or
// the workspace argument's, or the client's roots (ask, when not nil, asks
// a 2026-07-28 client for them), or the default workspace.
func (f *face) trustTarget(ctx context.Context, a trustArgs, in mcp.InputResponses) (*server.Session, []string, *mcp.CallToolResult, error) {
	if a.Session != "" {
		s, err := f.session(a.Session)
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s.Spec().Roots, nil, nil
	}
	roots, ask, err := f.workspace(ctx, a.Workspace, in)
	return nil, roots, ask, err
}

// trustAnswered takes up a zero_trust a 2026-07-28 client calls again with
// the user's answer. The state is the client's to echo, so it is checked
// like any argument: it must be one this process sealed, the call's
// arguments must name the workspace it names, and the workspace's code
// must still have the digest the user was shown. Only then does the
// user's yes trust that digest.
func (f *face) trustAnswered(ctx context.Context, tr server.Trust, a trustArgs, state string, in mcp.InputResponses) *mcp.CallToolResult {
	shown, ok := openTrustState(state)
	if !ok {
		return toolError(badArg("requestState", "not a state this server gave"))
	}
	if a.Session != shown.Session {
		return toolError(badArg("session", "the user was asked about another session's workspace; call zero_trust again"))
	}
	var sess *server.Session
	if a.Session != "" || a.Workspace != "" {
		s, roots, _, err := f.trustTarget(ctx, a, nil) // names its workspace: asks nothing
		if err != nil {
			return toolError(err)
		}
		if !slices.Equal(roots, shown.Roots) {
			return toolError(badArg("workspace", "the user was asked about another workspace; call zero_trust again"))
		}
		sess = s
	}
	st, err := tr.TrustState(shown.Roots)
	if err != nil {
		return toolError(fmt.Errorf("trust: %w", err))
	}
	out := newTrustOut(st)
	if !st.NeedsTrust() {
		return result(out, "Nothing to do: the workspace's code is "+st.Status+".")
	}
	if st.Digest != shown.Digest {
		return toolError(fmt.Errorf("trust: %w", server.ErrTrustMoved))
	}
	if !trusts(mcpserver.ElicitationResponse(in, trustInput)) {
		out.Message = "The user did not trust the workspace; its code stays off."
		return result(out, out.Message)
	}
	return grant(ctx, tr, sess, shown.Roots, shown.Digest, out)
}

func newTrustOut(st server.TrustState) trustOut {
	out := trustOut{Workspace: st.Workspace, Status: st.Status, Message: st.Message}
	for _, fl := range st.Files {
		out.Files = append(out.Files, fl.Path)
	}
	return out
}

// grant trusts the code of roots as the user saw it (digest), through the
// session when there is one, so that it reloads.
func grant(ctx context.Context, tr server.Trust, sess *server.Session, roots []string, digest string, out trustOut) *mcp.CallToolResult {
	var st server.TrustState
	var err error
	if sess != nil {
		st, err = sess.GrantTrust(ctx, digest)
	} else {
		st, err = tr.Grant(roots, digest)
	}
	if err != nil {
		return toolError(fmt.Errorf("trust: %w", err))
	}
	out.Status, out.Message = st.Status, fmt.Sprintf("The user trusted %d files; they run from the next step on.", len(st.Files))
	return result(out, out.Message)
}

// trustInput keys the trust question among a call's input requests.
const trustInput = "trust"

// trustQuestion puts the workspace's code to the user: the files, and
// whether to trust exactly them.
func trustQuestion(st server.TrustState) mcp.ElicitationParams {
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
	return mcp.ElicitationParams{
		Message: b.String(),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"trust": map[string]any{"type": "boolean", "title": "Trust these files", "default": false},
		}, "required": []string{"trust"}},
	}
}

// trusts reports whether the user's answer trusts the files: accepted, with
// the box ticked.
func trusts(res *mcp.ElicitationResult) bool {
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return false
	}
	m, _ := res.Content.(map[string]any)
	yes, _ := m["trust"].(bool)
	return yes
}

// shownTrust is what a trust question showed the user: the workspace (of
// the session, if the call named one) and the digest of its code. It is
// the request state of a 2026-07-28 call, sealed with a key of this
// process, so that a state a client made up or changed is refused rather
// than trusting code the user was never shown.
type shownTrust struct {
	Session string   `json:"s,omitempty"`
	Roots   []string `json:"r"`
	Digest  string   `json:"d"`
}

// trustStatePrefix marks the request state of a zero_trust question.
const trustStatePrefix = "zero-trust:"

// stateKey seals trust states; a state outlives no process.
var stateKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
})

func stateMAC(payload []byte) []byte {
	m := hmac.New(sha256.New, stateKey())
	m.Write([]byte(trustStatePrefix))
	m.Write(payload)
	return m.Sum(nil)
}

func (s shownTrust) seal() string {
	payload, err := json.Marshal(s)
	if err != nil {
		panic(err) // strings only
	}
	enc := base64.RawURLEncoding
	return trustStatePrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(stateMAC(payload))
}

// openTrustState returns the question a state sealed, and false for any
// state this process did not seal.
func openTrustState(state string) (shownTrust, bool) {
	rest, ok := strings.CutPrefix(state, trustStatePrefix)
	p, m, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return shownTrust{}, false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, stateMAC(payload)) {
		return shownTrust{}, false
	}
	var s shownTrust
	if err := json.Unmarshal(payload, &s); err != nil || len(s.Roots) == 0 || s.Digest == "" {
		return shownTrust{}, false
	}
	return s, true
}
