package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/oauth2"
)

// Token requests Zero makes itself (a refresh, the client credentials
// grant): x/oauth2 sends no resource parameter on a refresh and takes no
// client assertion, and the spec wants the resource on every token
// request (RFC 8707).

// maxTokenResponse bounds what is read of a token endpoint's answer.
const maxTokenResponse = 1 << 20

// clientAuth is how a client authenticates at the token endpoint.
type clientAuth struct {
	id, secret string
	method     string // client_secret_basic, client_secret_post, private_key_jwt, none
	// assertion signs a fresh client assertion (private_key_jwt).
	assertion func() (string, error)
}

// oauthError is an authorization server's error answer (RFC 6749 5.2).
type oauthError struct {
	Code, Description string
}

func (e *oauthError) Error() string {
	if e.Description == "" {
		return "the authorization server refused: " + e.Code
	}
	return "the authorization server refused: " + e.Code + " (" + e.Description + ")"
}

// tokenResponse is a token endpoint's answer (RFC 6749 5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    any    `json:"expires_in"` // a number, or a number in a string
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
	Description  string `json:"error_description"`
}

// tokenRequest posts form to the token endpoint with the client's
// authentication and returns the token. Errors never hold the answer's
// body: only an OAuth error's code and description (cleaned).
func (a *Auth) tokenRequest(ctx context.Context, endpoint string, form url.Values, c clientAuth) (*tokenResponse, error) {
	form = cloneValues(form)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, nil)
	if err != nil {
		return nil, err
	}
	switch c.method {
	case "client_secret_basic":
		req.SetBasicAuth(url.QueryEscape(c.id), url.QueryEscape(c.secret))
	case "client_secret_post":
		form.Set("client_id", c.id)
		form.Set("client_secret", c.secret)
	case "private_key_jwt":
		jwt, err := c.assertion()
		if err != nil {
			return nil, err
		}
		form.Set("client_id", c.id)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	default: // none: a public client names itself
		form.Set("client_id", c.id)
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := a.o.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxTokenResponse {
		return nil, fmt.Errorf("the token endpoint's answer is over %d bytes", maxTokenResponse)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(b, &tr)
	if resp.StatusCode != http.StatusOK {
		if jsonErr == nil && tr.Error != "" {
			return nil, &oauthError{Code: clean(tr.Error, 64), Description: clean(tr.Description, 200)}
		}
		return nil, fmt.Errorf("the token endpoint answered %s", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); jsonErr != nil || mt != "application/json" {
		return nil, fmt.Errorf("the token endpoint's answer is not a JSON token (%s)", cmpOr(mt, "no content type"))
	}
	if tr.AccessToken == "" {
		return nil, errors.New("the token endpoint's answer has no access_token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, fmt.Errorf("the token endpoint issued a %q token; Zero sends Bearer tokens only", clean(tr.TokenType, 32))
	}
	return &tr, nil
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// clean makes text from a server fit an error message: printable, one
// line, at most n runes.
func clean(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			b.WriteString("…")
			break
		}
		if !unicode.IsPrint(r) {
			r = ' '
		}
		b.WriteRune(r)
		n--
	}
	return b.String()
}

// expiresIn reads expires_in, a number of seconds (some servers quote it).
func (tr *tokenResponse) expiresIn() time.Duration {
	switch v := tr.ExpiresIn.(type) {
	case float64:
		return time.Duration(v) * time.Second
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return time.Duration(n) * time.Second
	}
	return 0
}

// apply puts a token response into r: the access token, the refresh
// token when a new one came (rotation; else the old one stays), the
// expiry, and the scopes when the server says which it granted (else
// those asked for).
func (a *Auth) apply(r *record, tr *tokenResponse, asked []string) {
	r.AccessToken = tr.AccessToken
	if tr.RefreshToken != "" {
		r.RefreshToken = tr.RefreshToken
	}
	r.Expiry = time.Time{}
	if d := tr.expiresIn(); d > 0 {
		r.Expiry = a.now().Add(d)
	}
	if s := strings.Fields(tr.Scope); len(s) > 0 {
		r.Scopes = s
	} else if len(asked) > 0 {
		r.Scopes = asked
	}
	// Scopes a server asked for beyond the token's still need a login.
	if covers(r.Scopes, r.Wanted) {
		r.Wanted = nil
	}
	r.NeedsLogin = len(r.Wanted) > 0
}

// fromOAuth2 is an x/oauth2 token (the authorization code exchange, done
// by go-sdk) as a token response.
func fromOAuth2(tok *oauth2.Token) *tokenResponse {
	tr := &tokenResponse{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken}
	if tok.ExpiresIn > 0 {
		tr.ExpiresIn = float64(tok.ExpiresIn)
	}
	if s, ok := tok.Extra("scope").(string); ok {
		tr.Scope = s
	}
	return tr
}

// clientAuthOf is how the client of r authenticates at the token
// endpoint: a client Zero registered with its stored secret, a configured
// one with the configuration's secret (or key).
func (t *authTransport) clientAuthOf(r *record) (clientAuth, error) {
	c := r.Client
	if c == nil || c.ID == "" {
		return clientAuth{}, errors.New("no client is recorded")
	}
	ca := clientAuth{id: c.ID, method: c.AuthMethod}
	if c.Registered {
		ca.secret = c.Secret
		return ca, nil
	}
	o := t.srv.OAuth
	if o != nil && o.ClientMetadataURL == c.ID {
		ca.method = "none"
		return ca, nil
	}
	if o == nil || o.ClientID != c.ID {
		return clientAuth{}, errors.New("the configured client changed since the login")
	}
	ca.secret = o.ClientSecret
	if c.AuthMethod == "private_key_jwt" {
		key, err := loadKey(o.PrivateKey)
		if err != nil {
			return clientAuth{}, err
		}
		alg, err := pickAlg(key, cmpOr(o.SigningAlg, c.SigningAlg), nil)
		if err != nil {
			return clientAuth{}, err
		}
		// The authorization server checks the assertion's times by its
		// clock: the wall clock, not the one tests move.
		ca.assertion = func() (string, error) { return assertion(key, alg, c.ID, r.Issuer, time.Now()) }
	}
	return ca, nil
}

// refresh renews r's access token with its refresh token and the
// resource. A refused refresh token (or client) leaves only a login: it
// reports false and records that.
func (t *authTransport) refresh(ctx context.Context, r *record) (bool, error) {
	ca, err := t.clientAuthOf(r)
	if err != nil {
		t.a.o.Logger.Info("mcp server's token cannot be refreshed", "server", t.srv.Name, "why", err.Error())
		return false, t.a.save(t.srv, dropTokens(r))
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.RefreshToken}}
	if r.Resource != "" {
		form.Set("resource", r.Resource)
	}
	tr, err := t.a.tokenRequest(ctx, r.TokenEndpoint, form, ca)
	var oe *oauthError
	if errors.As(err, &oe) && (oe.Code == "invalid_grant" || oe.Code == "invalid_client" || oe.Code == "unauthorized_client") {
		t.a.o.Logger.Info("mcp server refused the refresh token; a login is needed", "server", t.srv.Name, "error", oe.Code)
		if oe.Code != "invalid_grant" && r.Client != nil && r.Client.Registered {
			r.Client = nil // the server forgot the client: the next login registers again
		}
		return false, t.a.save(t.srv, dropTokens(r))
	}
	if err != nil {
		return false, t.fail("refreshing its token", err, r)
	}
	t.a.apply(r, tr, r.Scopes)
	if err := t.a.save(t.srv, r); err != nil {
		return false, err
	}
	t.a.o.Logger.Info("mcp server's token refreshed", "server", t.srv.Name, "expiry", r.Expiry)
	return true, nil
}

// dropTokens is r without its tokens, needing a login.
func dropTokens(r *record) *record {
	r.AccessToken, r.RefreshToken, r.Expiry = "", "", time.Time{}
	r.NeedsLogin = true
	return r
}
