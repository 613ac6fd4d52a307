package mcpauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/secrets"
)

const (
	grantAuthorizationCode = "authorization_code"
	grantClientCredentials = "client_credentials"
)

// grantOf is the grant a server's configuration asks for.
func grantOf(srv mcpconf.Server) string {
	if srv.OAuth != nil && srv.OAuth.Grant == grantClientCredentials {
		return grantClientCredentials
	}
	return grantAuthorizationCode
}

// authTransport is Auth.Transport for one server.
type authTransport struct {
	a    *Auth
	srv  mcpconf.Server
	st   *state
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		// The server's configuration gives its own credentials (headers):
		// they are not Zero's to replace.
		return t.base.RoundTrip(req)
	}
	req, err := rewindable(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	tok, err := t.token(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(req, tok, false)
	if err != nil || !refused(resp) {
		return resp, err
	}
	// At most one flow per request: a server that refuses again gets
	// its answer passed on, not another login.
	if err := t.authorize(ctx, req, resp, tok); err != nil {
		return nil, err
	}
	if tok, err = t.token(ctx); err != nil {
		return nil, err
	}
	return t.send(req, tok, true)
}

// rewindable returns req with a GetBody, so that it can be sent again
// after a login (mcp-go's requests have one; the body is buffered
// otherwise). req itself is not changed.
func rewindable(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return req, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.Body, _ = r.GetBody()
	return r, nil
}

// send sends req with the token (none when empty); again takes a new
// body.
func (t *authTransport) send(req *http.Request, tok string, again bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if again && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return t.base.RoundTrip(r)
}

// refused reports whether the server asks for a token, or a token with
// more scopes (a 403 insufficient_scope; any other 403 is its answer).
func refused(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return bearerParam(resp, "error") == "insufficient_scope"
	}
	return false
}

// bearerParam is a parameter of the response's Bearer challenge.
func bearerParam(resp *http.Response, name string) string {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// token is the access token to send: the stored one, renewed first when
// it expired; "" when there is none (or a login is being forced).
func (t *authTransport) token(ctx context.Context) (string, error) {
	if t.forced() {
		return "", nil
	}
	r, err := t.a.load(t.srv)
	if err != nil || r == nil || r.AccessToken == "" {
		return "", err
	}
	if !t.a.expired(r) {
		return r.AccessToken, nil
	}
	if err := t.st.lock(ctx); err != nil {
		return "", err
	}
	defer t.st.unlock()
	// Another request, or another Zero, may have renewed it meanwhile.
	if r, err = t.a.load(t.srv); err != nil || r == nil || r.AccessToken == "" {
		return "", err
	}
	if !t.a.expired(r) {
		return r.AccessToken, nil
	}
	ok, err := t.renew(ctx, r)
	if err != nil && r.Grant == grantClientCredentials {
		// Sent without: the server's 401 has its metadata read again
		// (the authorization server may have moved; see authorize).
		t.a.o.Logger.Info("mcp server's token endpoint refused; discovering again", "server", t.srv.Name, "err", err)
		return "", nil
	}
	if err != nil || !ok {
		return "", err
	}
	r, err = t.a.load(t.srv)
	if err != nil || r == nil {
		return "", err
	}
	return r.AccessToken, nil
}

func (t *authTransport) forced() bool {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.forced
}

// authorize answers the server's refusal of a request sent with the token
// used: with the token another request got meanwhile, a refresh, the
// client credentials grant, or the person's login (Open). It closes
// resp's body.
func (t *authTransport) authorize(ctx context.Context, req *http.Request, resp *http.Response, used string) error {
	defer resp.Body.Close()
	if err := t.st.lock(ctx); err != nil {
		return err
	}
	defer t.st.unlock()
	r, err := t.a.load(t.srv)
	if err != nil {
		return err
	}
	forced := t.forced()
	var asked []string // the scopes a 403 insufficient_scope names
	if resp.StatusCode == http.StatusForbidden {
		asked = strings.Fields(bearerParam(resp, "scope"))
	}
	if !forced && r != nil && r.AccessToken != "" && r.AccessToken != used && !t.a.expired(r) &&
		(resp.StatusCode == http.StatusUnauthorized || covers(r.Scopes, asked)) {
		return nil // renewed meanwhile: the request goes again with that
	}
	if !forced && resp.StatusCode == http.StatusUnauthorized && r != nil && used != "" &&
		(r.RefreshToken != "" || r.Grant == grantClientCredentials) {
		// The server refused a token before its time (revoked, or the
		// clocks differ): a new one may do.
		ok, err := t.renew(ctx, r)
		if ok || err != nil && r.Grant != grantClientCredentials {
			return err
		}
		if err != nil {
			// The token endpoint kept from the last grant failed: the
			// server's metadata is read again (its authorization server
			// may have moved; one that changed is refused below).
			t.a.o.Logger.Info("mcp server's token endpoint refused; discovering again", "server", t.srv.Name, "err", err)
		}
		if r, err = t.a.load(t.srv); err != nil {
			return err
		}
	}
	if grantOf(t.srv) == grantClientCredentials {
		return t.clientCredentials(ctx, req, resp, r)
	}
	if t.a.o.Open == nil {
		return t.needLogin(r, resp.StatusCode, asked)
	}
	return t.authorizationCode(ctx, req, resp, r)
}

// covers reports whether granted holds every scope of asked.
func covers(granted, asked []string) bool {
	for _, s := range asked {
		if !slices.Contains(granted, s) {
			return false
		}
	}
	return true
}

// union is a, then what b adds, without repeats or empty scopes.
func union(a []string, bs ...[]string) []string {
	var out []string
	for _, list := range append([][]string{a}, bs...) {
		for _, s := range list {
			if s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// needLogin records that the server needs the person (so that doctor can
// say it, and the next login asks for the scopes it wants) and is the
// error saying so. A 401 makes the stored token useless; a 403 leaves it
// for what it is good for.
func (t *authTransport) needLogin(r *record, status int, asked []string) error {
	n := &record{}
	if r != nil {
		n = r.clone()
	}
	if status == http.StatusUnauthorized {
		n.AccessToken, n.RefreshToken, n.Expiry = "", "", time.Time{}
	}
	var more []string
	if len(asked) > 0 {
		n.Wanted = union(n.Wanted, asked)
		more = union(n.Scopes, n.Wanted)
	}
	n.NeedsLogin = true
	// Written once: a server's stream that mcp-go opens again every
	// second would otherwise rewrite the file (and the log) as often.
	if r == nil || !r.NeedsLogin || r.AccessToken != n.AccessToken || r.RefreshToken != n.RefreshToken || !slices.Equal(r.Wanted, n.Wanted) {
		if err := t.a.save(t.srv, n); err != nil {
			t.a.o.Logger.Warn("mcp server needs a login, and that could not be recorded", "server", t.srv.Name, "err", err)
		}
		t.a.o.Logger.Info("mcp server needs a login", "server", t.srv.Name, "scopes", more)
	}
	return &LoginRequired{Server: t.srv.Name, URL: t.srv.URL, Scopes: more}
}

// renew gets a new access token without the person: a refresh, or the
// client credentials grant again. It reports false when only a login can
// help (and records that).
func (t *authTransport) renew(ctx context.Context, r *record) (bool, error) {
	switch {
	case r.Grant == grantClientCredentials && r.TokenEndpoint != "" && r.Client != nil:
		if err := t.requestClientCredentials(ctx, r.clone()); err != nil {
			return false, err
		}
		return true, nil
	case r.RefreshToken != "" && r.TokenEndpoint != "":
		return t.refresh(ctx, r.clone())
	}
	return false, nil
}

// errors of the flows pass through fail: their text is masked with every
// secret of the login (an authorization server's error may quote what it
// was sent), and only a context's error stays reachable.
type flowError struct {
	msg string
	ctx error
}

func (e *flowError) Error() string { return e.msg }
func (e *flowError) Unwrap() error { return e.ctx }

func (t *authTransport) fail(what string, err error, rs ...*record) error {
	var lr *LoginRequired
	if errors.As(err, &lr) {
		return err
	}
	var set *secrets.Set
	if o := t.srv.OAuth; o != nil {
		set = set.With("MCP_CLIENT_SECRET", o.ClientSecret)
	}
	for _, r := range rs {
		if r == nil {
			continue
		}
		set = set.With("MCP_ACCESS_TOKEN", r.AccessToken).With("MCP_REFRESH_TOKEN", r.RefreshToken)
		if r.Client != nil {
			set = set.With("MCP_CLIENT_SECRET", r.Client.Secret)
		}
	}
	fe := &flowError{msg: set.Mask(fmt.Sprintf("MCP server %s: %s: %v", t.srv.Name, what, err))}
	if errors.Is(err, context.Canceled) {
		fe.ctx = context.Canceled
	} else if errors.Is(err, context.DeadlineExceeded) {
		fe.ctx = context.DeadlineExceeded
	}
	return fe
}
