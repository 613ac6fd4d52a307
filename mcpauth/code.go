package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

func (t *authTransport) newFlowClient(resp *http.Response, reuse *client, issuer string) *flowClient {
	return &flowClient{base: t.a.o.HTTPClient, resource: t.srv.URL, prmURL: bearerParam(resp, "resource_metadata"), reuse: reuse, reuseIssuer: issuer}
}

// authorizationCode logs in through the person's browser with go-sdk's
// AuthorizationCodeHandler, answering the server's refusal resp of req,
// and keeps what it got. r is what was stored (nil: nothing).
func (t *authTransport) authorizationCode(ctx context.Context, req *http.Request, resp *http.Response, r *record) error {
	var prevRedirect string
	if c := reusable(r); c != nil {
		prevRedirect = c.RedirectURI
	}
	ln, redirect, err := listenLoopback(prevRedirect)
	if err != nil {
		return t.fail("listening for the login's redirect", err)
	}
	defer ln.Close()
	var reuse *client
	var reuseIssuer string
	if c := reusable(r); c != nil && c.RedirectURI == redirect {
		reuse, reuseIssuer = c, r.Issuer
	}
	fc := t.newFlowClient(resp, reuse, reuseIssuer)

	// What the handler gets and does not return: the authorization URL
	// (its resource parameter is the resource the token is for) and the
	// token with the client that got it.
	var authURL string
	var got struct {
		cfg *oauth2.Config
		tok *oauth2.Token
	}
	t.st.mu.Lock()
	login := t.st.loginScopes
	t.st.mu.Unlock()
	var extra []string // beside what the server names: what was granted and asked for before, and configured
	if r != nil {
		extra = union(r.Scopes, r.Wanted)
	}
	if o := t.srv.OAuth; o != nil {
		extra = union(extra, o.Scopes)
	}
	extra = union(extra, login)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			authURL = args.URL
			t.a.o.Logger.Info("mcp server login: waiting for the browser", "server", t.srv.Name)
			return waitForCode(ctx, ln, args.URL, t.a.o.Open)
		},
		ScopeFilter:         func(discovered []string) []string { return union(extra, discovered) },
		RequestRefreshToken: true,
		Client:              fc.client(),
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.tok = c, tok
			return oauth2.StaticTokenSource(tok), nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect},
			// A program on the person's machine keeps no secret from its
			// user: a public client, with PKCE.
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              "Zero",
			SoftwareID:              "github.com/zeroagent/zero",
		}},
	}
	if o := t.srv.OAuth; o != nil {
		if o.ClientMetadataURL != "" {
			cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
		}
		if o.ClientID != "" {
			pre := &oauthex.ClientCredentials{ClientID: o.ClientID}
			if o.ClientSecret != "" {
				pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
			}
			// The client is the authorization server's it was first used
			// with: its secret goes to no other.
			if r != nil && r.Client != nil && r.Client.ID == o.ClientID && r.Issuer != "" {
				pre.Issuer = r.Issuer
			}
			cfg.PreregisteredClient = pre
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return t.fail("logging in", err)
	}
	t.a.o.Logger.Info("mcp server login", "server", t.srv.Name, "status", resp.StatusCode)
	if err := h.Authorize(ctx, req, resp); err != nil {
		if res := fc.hostileResource(); res != "" || errors.Is(err, errHostile) {
			return t.fail("logging in", hostileError(t.srv.URL, res), r)
		}
		fc.mu.Lock()
		unregistered := fc.issuer != "" && !fc.registers && cfg.PreregisteredClient == nil && cfg.ClientIDMetadataDocumentConfig == nil
		issuer := fc.issuer
		fc.mu.Unlock()
		if unregistered {
			return t.fail("logging in", fmt.Errorf("its authorization server (%s) registers no clients itself: register Zero there (redirect URI http://127.0.0.1/callback, any port) and set oauth.client_id (and client_secret) of %s in your config.yaml", clean(issuer, 200), t.srv.Name), r)
		}
		return t.fail("logging in", err, r)
	}
	if got.cfg == nil || got.tok == nil {
		return t.fail("logging in", errors.New("the login ended without a token"), r)
	}

	n := &record{Grant: grantAuthorizationCode, TokenEndpoint: got.cfg.Endpoint.TokenURL, Resource: t.srv.URL}
	if u, err := url.Parse(authURL); err == nil && u.Query().Get("resource") != "" {
		n.Resource = u.Query().Get("resource")
	}
	fc.mu.Lock()
	n.Issuer = fc.issuer
	registered := fc.registered
	fc.mu.Unlock()
	o := t.srv.OAuth
	switch {
	case registered != nil && registered.ID == got.cfg.ClientID:
		n.Client = registered
		n.Client.RedirectURI = redirect
		if n.Client.AuthMethod == "" {
			n.Client.AuthMethod = "client_secret_basic" // RFC 7591's default
		}
	case o != nil && o.ClientMetadataURL == got.cfg.ClientID:
		n.Client = &client{ID: got.cfg.ClientID, AuthMethod: "none"}
	default:
		n.Client = &client{ID: got.cfg.ClientID, AuthMethod: methodOf(got.cfg.Endpoint.AuthStyle, got.cfg.ClientSecret)}
	}
	t.a.apply(n, fromOAuth2(got.tok), got.cfg.Scopes)
	if n.Expiry.IsZero() && !got.tok.Expiry.IsZero() {
		n.Expiry = got.tok.Expiry
	}
	return t.stored(n)
}

// methodOf names the token endpoint authentication x/oauth2 used.
func methodOf(style oauth2.AuthStyle, secret string) string {
	switch {
	case secret == "":
		return "none"
	case style == oauth2.AuthStyleInParams:
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// stored keeps a record a flow got, and ends a forced login.
func (t *authTransport) stored(n *record) error {
	if err := t.a.save(t.srv, n); err != nil {
		return err
	}
	t.st.mu.Lock()
	if t.st.forced {
		t.st.forced, t.st.loggedIn = false, true
	}
	t.st.mu.Unlock()
	t.a.o.Logger.Info("mcp server logged in", "server", t.srv.Name, "issuer", n.Issuer, "scopes", n.Scopes, "grant", n.Grant)
	return nil
}
