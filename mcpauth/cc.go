package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The client credentials grant (no person: SEP-1046) is Zero's own on
// go-sdk's discovery: go-sdk's extauth.ClientCredentialsHandler sends no
// resource parameter, binds its token source to the context of the first
// request, and knows no private_key_jwt (RFC 7523), which Zero signs with
// golang-jwt.

// clientCredentials discovers the server's authorization server from its
// refusal resp and asks it for a token with the configured client's
// secret or key. r is what was stored (nil: nothing).
func (t *authTransport) clientCredentials(ctx context.Context, req *http.Request, resp *http.Response, r *record) error {
	o := t.srv.OAuth
	if o == nil || o.ClientID == "" || (o.ClientSecret == "" && o.PrivateKey == "") {
		return t.fail("logging in", errors.New("oauth.grant client_credentials needs oauth.client_id and oauth.client_secret or oauth.private_key"))
	}
	fc := t.newFlowClient(resp, nil, "")
	prm, err := protectedResource(ctx, fc, resp, t.srv.URL)
	if err != nil {
		if res := fc.hostileResource(); res != "" {
			return t.fail("logging in", hostileError(t.srv.URL, res), r)
		}
		return t.fail("finding its authorization server", err, r)
	}
	as := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, as, fc.client())
	if err != nil {
		return t.fail("reading its authorization server's metadata", err, r)
	}
	if asm == nil { // 2025-03-26: the default endpoints
		asm = &oauthex.AuthServerMeta{Issuer: as, TokenEndpoint: strings.TrimSuffix(as, "/") + "/token"}
	}
	if r != nil && r.Client != nil && r.Client.ID == o.ClientID && r.Issuer != "" && !sameIssuer(r.Issuer, asm.Issuer) {
		// The client's secret (or assertion) went to r.Issuer before; a
		// server that now names another could be collecting them.
		return t.fail("logging in", fmt.Errorf("its authorization server changed from %s to %s; Zero does not send the client's credentials to another. If that is right, run `zero mcp logout %s`", r.Issuer, clean(asm.Issuer, 200), t.srv.Name), r)
	}
	asked := strings.Fields(bearerParam(resp, "scope"))
	if len(asked) == 0 {
		asked = prm.ScopesSupported
	}
	n := &record{Grant: grantClientCredentials, Resource: cmpOr(prm.Resource, t.srv.URL), Issuer: asm.Issuer, TokenEndpoint: asm.TokenEndpoint}
	if r != nil {
		n.Scopes = r.Scopes
	}
	n.Scopes = union(n.Scopes, asked, o.Scopes)
	n.Client = &client{ID: o.ClientID}
	if o.PrivateKey != "" {
		key, err := loadKey(o.PrivateKey)
		if err != nil {
			return t.fail("reading oauth.private_key", err)
		}
		alg, err := pickAlg(key, o.SigningAlg, asm.TokenEndpointAuthSigningAlgValuesSupported)
		if err != nil {
			return t.fail("signing its client assertion", err)
		}
		n.Client.AuthMethod, n.Client.SigningAlg = "private_key_jwt", alg
	} else {
		n.Client.AuthMethod = secretMethod(asm.TokenEndpointAuthMethodsSupported)
	}
	return t.requestClientCredentials(ctx, n)
}

// secretMethod picks how a client secret goes to a token endpoint that
// lists the methods it takes: HTTP Basic, which every server must take
// (RFC 6749 2.3.1), unless it lists only the form.
func secretMethod(supported []string) string {
	if !slices.Contains(supported, "client_secret_basic") && slices.Contains(supported, "client_secret_post") {
		return "client_secret_post"
	}
	return "client_secret_basic"
}

func sameIssuer(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }

// requestClientCredentials asks r's token endpoint for a token for r's
// resource and scopes with the configured client, and keeps it.
func (t *authTransport) requestClientCredentials(ctx context.Context, r *record) error {
	ca, err := t.clientAuthOf(r)
	if err != nil {
		return t.fail("asking for a token", err, r)
	}
	form := url.Values{"grant_type": {grantClientCredentials}}
	if len(r.Scopes) > 0 {
		form.Set("scope", strings.Join(r.Scopes, " "))
	}
	if r.Resource != "" {
		form.Set("resource", r.Resource)
	}
	tr, err := t.a.tokenRequest(ctx, r.TokenEndpoint, form, ca)
	if err != nil {
		return t.fail("asking for a token (client credentials)", err, r)
	}
	t.a.apply(r, tr, r.Scopes)
	r.RefreshToken = "" // the grant is run again rather than refreshed
	return t.stored(r)
}
