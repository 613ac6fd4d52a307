package mcpauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// flowClient is the HTTP client one flow discovers, registers and asks for
// tokens through (go-sdk's handler, or Zero's client credentials). It
// notes what go-sdk finds and does not return: the authorization server's
// issuer and the client it registered. It refuses to go on once a
// server's protected resource metadata names another resource than the
// server (RFC 9728 3.3: such metadata must not be used; go-sdk would try
// other places, and in the end the server's own origin): no authorization
// request, no token request follows. And it answers a registration from
// the client Zero registered before at the same endpoint for the same
// redirect URI, when the issuer is the same: go-sdk registers anew at
// each authorization, and an authorization server that remembers consent
// per client, or matches redirect URIs exactly, wants the same client.
type flowClient struct {
	base     *http.Client
	resource string // the server's URL: what its metadata must name
	prmURL   string // the metadata URL the server's challenge names
	// reuse is the client registered at the last login, at reuseIssuer.
	reuse       *client
	reuseIssuer string

	mu sync.Mutex
	// issuer is the last authorization server whose metadata was read;
	// registers says it has a registration endpoint.
	issuer    string
	registers bool
	// hostile is the resource a protected resource metadata named instead
	// of the server's.
	hostile string
	// registered is the client registered in this flow (or reused).
	registered *client
}

func (f *flowClient) client() *http.Client {
	c := *f.base
	c.Transport = f
	return &c
}

// errHostile stops a flow after metadata for another resource.
var errHostile = errors.New("protected resource metadata for another resource")

func (f *flowClient) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	hostile := f.hostile
	f.mu.Unlock()
	if hostile != "" {
		return nil, errHostile
	}
	if req.Method == http.MethodPost {
		if resp := f.cachedRegistration(req); resp != nil {
			return resp, nil
		}
	}
	base := f.base.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	path := req.URL.Path
	switch {
	case req.Method == http.MethodGet && (strings.Contains(path, "/.well-known/oauth-protected-resource") || req.URL.String() == f.prmURL):
		return f.peek(resp, f.notePRM)
	case req.Method == http.MethodGet && (strings.Contains(path, "/.well-known/oauth-authorization-server") || strings.Contains(path, "/.well-known/openid-configuration")):
		return f.peek(resp, f.noteASM)
	case req.Method == http.MethodPost && req.Header.Get("Content-Type") == "application/json":
		// A registration (RFC 7591 posts JSON; token requests post a form).
		return f.peek(resp, func(b []byte) { f.noteRegistration(req.URL.String(), b) })
	}
	return resp, nil
}

// peek reads a response's body (bounded as go-sdk bounds it), hands it to
// note and gives the response back with the same body.
func (f *flowClient) peek(resp *http.Response, note func([]byte)) (*http.Response, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	note(b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (f *flowClient) notePRM(b []byte) {
	var prm struct {
		Resource string `json:"resource"`
	}
	if json.Unmarshal(b, &prm) != nil || sameResource(prm.Resource, f.resource) {
		return
	}
	f.mu.Lock()
	f.hostile = prm.Resource
	f.mu.Unlock()
}

// sameResource reports whether metadata naming got is for the server at
// want: its URL, or its origin (metadata at the root names the origin).
func sameResource(got, want string) bool {
	got, want = strings.TrimSuffix(got, "/"), strings.TrimSuffix(want, "/")
	if got == want {
		return true
	}
	u, err := url.Parse(want)
	if err != nil {
		return false
	}
	return got == u.Scheme+"://"+u.Host
}

func (f *flowClient) noteASM(b []byte) {
	var m struct {
		Issuer               string `json:"issuer"`
		RegistrationEndpoint string `json:"registration_endpoint"`
	}
	if json.Unmarshal(b, &m) != nil || m.Issuer == "" {
		return
	}
	f.mu.Lock()
	f.issuer, f.registers = m.Issuer, m.RegistrationEndpoint != ""
	f.mu.Unlock()
}

// registration is the part of a registration answer Zero keeps.
type registration struct {
	ClientID        string   `json:"client_id"`
	ClientSecret    string   `json:"client_secret,omitempty"`
	AuthMethod      string   `json:"token_endpoint_auth_method,omitempty"`
	RedirectURIs    []string `json:"redirect_uris,omitempty"`
	SecretExpiresAt int64    `json:"client_secret_expires_at,omitempty"`
}

func (f *flowClient) noteRegistration(endpoint string, b []byte) {
	var reg registration
	if json.Unmarshal(b, &reg) != nil || reg.ClientID == "" {
		return
	}
	c := &client{ID: reg.ClientID, Secret: reg.ClientSecret, AuthMethod: reg.AuthMethod, Registered: true, RegistrationEndpoint: endpoint}
	if reg.SecretExpiresAt > 0 {
		c.SecretExpires = time.Unix(reg.SecretExpiresAt, 0)
	}
	f.mu.Lock()
	f.registered = c
	f.mu.Unlock()
}

// cachedRegistration answers a registration at the endpoint Zero
// registered at before, for the same redirect URI and issuer, with that
// client; nil sends the request on.
func (f *flowClient) cachedRegistration(req *http.Request) *http.Response {
	c := f.reuse
	f.mu.Lock()
	issuer := f.issuer
	f.mu.Unlock()
	if c == nil || !c.Registered || c.RegistrationEndpoint != req.URL.String() || req.GetBody == nil ||
		issuer == "" || !sameIssuer(issuer, f.reuseIssuer) {
		return nil
	}
	if !c.SecretExpires.IsZero() && !time.Now().Before(c.SecretExpires) {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var asked oauthex.ClientRegistrationMetadata
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&asked) != nil || len(asked.RedirectURIs) != 1 || asked.RedirectURIs[0] != c.RedirectURI {
		return nil
	}
	reg := registration{ClientID: c.ID, ClientSecret: c.Secret, AuthMethod: c.AuthMethod, RedirectURIs: asked.RedirectURIs}
	if !c.SecretExpires.IsZero() {
		reg.SecretExpiresAt = c.SecretExpires.Unix()
	}
	b, _ := json.Marshal(reg)
	f.mu.Lock()
	reused := *c
	f.registered = &reused
	f.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusCreated, Status: "201 Created", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}

// reusable is the registered client of r that a flow may reuse (the
// issuer must match too, which the flow checks against what it reads).
func reusable(r *record) *client {
	if r == nil || r.Client == nil || !r.Client.Registered || r.Issuer == "" {
		return nil
	}
	return r.Client
}

// protectedResource finds the server's protected resource metadata as
// the spec orders it (go-sdk's AuthorizationCodeHandler does the same):
// the challenge's resource_metadata, then the well-known URL with the
// server's path inserted, then at the root; without any, the 2025-03-26
// fallback: the server's origin is its authorization server.
func protectedResource(ctx context.Context, f *flowClient, resp *http.Response, serverURL string) (*oauthex.ProtectedResourceMetadata, error) {
	type try struct{ url, resource string }
	var tries []try
	if u := bearerParam(resp, "resource_metadata"); u != "" {
		tries = append(tries, try{u, serverURL})
	}
	su, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	origin := su.Scheme + "://" + su.Host
	tries = append(tries,
		try{origin + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(su.Path, "/"), serverURL},
		try{origin + "/.well-known/oauth-protected-resource", origin})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.url, t.resource, f.client())
		if err != nil || prm == nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("its protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	if f.hostileResource() != "" {
		return nil, errHostile
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{origin}, Resource: serverURL}, nil
}

func (f *flowClient) hostileResource() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hostile
}

// hostileError is the error of a flow stopped by metadata for another
// resource.
func hostileError(serverURL, resource string) error {
	return fmt.Errorf("its protected resource metadata is for %s, not for %s: Zero does not log in there (check the server's url)", clean(resource, 200), serverURL)
}
