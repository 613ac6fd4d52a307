package mcpauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	mcpc "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpsrv "github.com/mark3labs/mcp-go/server"
	"github.com/zeroagent/zero/mcpconf"
)

// fixture is an authorization server and an MCP server it protects, on
// loopback, that check what a client must do (PKCE, the resource, the
// client's authentication, exact redirect URIs) and record what came.
type fixture struct {
	t   *testing.T
	as  *httptest.Server
	mcp *httptest.Server
	URL string // the MCP server's URL

	mu sync.Mutex
	// Knobs, set before use.
	noDCR       bool     // no registration endpoint
	regMethod   string   // the token_endpoint_auth_method registrations get (default none)
	prmResource string   // the resource the metadata names (default URL)
	prmScopes   []string // scopes_supported
	prmAS       string   // the authorization server it names (default as)
	challenge   string   // the scope the 401 names
	need        map[string][]string
	always403   bool // every request with a token: 403 insufficient_scope
	ccKey       *ecdsa.PublicKey
	// Clients by id: the registered and the configured.
	clients map[string]*fclient
	// What came.
	registrations, authorizations int
	asRequests                    int
	authorizeQueries              []url.Values
	tokenForms                    []url.Values
	jtis                          []string
	codes                         map[string]*grant
	access                        map[string]*grant
	refresh                       map[string]*grant
	issued                        []string // every secret it handed out
	n                             int
}

type fclient struct {
	secret, method string
	redirects      []string
}

type grant struct {
	client, redirect, challenge, resource string
	scopes                                []string
	expired                               bool
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, clients: map[string]*fclient{}, codes: map[string]*grant{}, access: map[string]*grant{}, refresh: map[string]*grant{}, need: map[string][]string{}}
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	t.Cleanup(f.as.Close)

	s := mcpsrv.NewMCPServer("protected", "1.0.0")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
	})
	s.AddTool(mcp.NewTool("write"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("written"), nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", f.protect(mcpsrv.NewStreamableHTTPServer(s)))
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"resource": cmpOr(f.prmResource, f.URL), "authorization_servers": []string{cmpOr(f.prmAS, f.as.URL)}, "scopes_supported": f.prmScopes})
	})
	f.mcp = httptest.NewServer(mux)
	t.Cleanup(f.mcp.Close)
	f.URL = f.mcp.URL + "/mcp"
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fixture) secret(prefix string) string {
	f.n++
	s := fmt.Sprintf("%s%d-%s", prefix, f.n, rand.Text())
	f.issued = append(f.issued, s)
	return s
}

// protect lets through requests with a live token for this server, with
// the scopes the tool called needs.
func (f *fixture) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		meta := f.mcp.URL + "/.well-known/oauth-protected-resource/mcp"
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		g := f.access[tok]
		if g == nil || g.expired || g.resource != f.URL {
			challenge := fmt.Sprintf(`Bearer resource_metadata=%q`, meta)
			if f.challenge != "" {
				challenge += fmt.Sprintf(`, scope=%q`, f.challenge)
			}
			f.mu.Unlock()
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(body, &msg)
		need := f.need[msg.Params.Name]
		if msg.Method != "tools/call" {
			need = nil
		}
		short := !covers(g.scopes, need)
		if f.always403 {
			need, short = []string{"everything"}, true
		}
		f.mu.Unlock()
		if short {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(need, " "), meta))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *fixture) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asRequests++
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		m := map[string]any{
			"issuer": f.as.URL, "authorization_endpoint": f.as.URL + "/authorize", "token_endpoint": f.as.URL + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported":                            []string{"authorization_code", "refresh_token", "client_credentials"},
			"token_endpoint_auth_methods_supported":            []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"},
			"token_endpoint_auth_signing_alg_values_supported": []string{"ES256"},
			"authorization_response_iss_parameter_supported":   true,
		}
		if !f.noDCR {
			m["registration_endpoint"] = f.as.URL + "/register"
		}
		writeJSON(w, 200, m)
	case "/register":
		var md struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&md)
		f.registrations++
		id := fmt.Sprintf("dyn-%d", f.registrations)
		c := &fclient{method: cmpOr(f.regMethod, "none"), redirects: md.RedirectURIs}
		resp := map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": c.method}
		if c.method != "none" {
			c.secret = f.secret("cs-")
			resp["client_secret"] = c.secret
		}
		f.clients[id] = c
		writeJSON(w, 201, resp)
	case "/authorize":
		q := r.URL.Query()
		f.authorizeQueries = append(f.authorizeQueries, q)
		c := f.clients[q.Get("client_id")]
		switch {
		case c == nil:
			http.Error(w, "unknown client", 400)
		case !slices.Contains(c.redirects, q.Get("redirect_uri")):
			http.Error(w, "redirect_uri not registered", 400)
		case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
			http.Error(w, "PKCE S256 required", 400)
		case q.Get("resource") != f.URL:
			http.Error(w, "resource must be the MCP server", 400)
		default:
			f.authorizations++
			code := f.secret("code-")
			f.codes[code] = &grant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
			u, _ := url.Parse(q.Get("redirect_uri"))
			u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {f.as.URL}}.Encode()
			http.Redirect(w, r, u.String(), http.StatusFound)
		}
	case "/token":
		r.ParseForm()
		f.tokenForms = append(f.tokenForms, r.PostForm)
		f.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

// authenticate checks the client's authentication at the token endpoint.
func (f *fixture) authenticate(r *http.Request) (string, string) {
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		if c := f.clients[id]; c != nil && c.secret != "" && c.secret == secret {
			return id, ""
		}
		return "", "bad basic credentials"
	}
	id := r.PostForm.Get("client_id")
	c := f.clients[id]
	switch {
	case c == nil:
		return "", "unknown client"
	case r.PostForm.Get("client_assertion_type") != "":
		return f.checkAssertion(id, r.PostForm)
	case c.secret != "" && c.method != "client_secret_basic" && r.PostForm.Get("client_secret") == c.secret:
		return id, ""
	case c.secret == "" && r.PostForm.Get("client_secret") == "":
		return id, ""
	}
	return "", "bad client authentication"
}

func (f *fixture) checkAssertion(id string, form url.Values) (string, string) {
	if form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || f.ccKey == nil {
		return "", "bad assertion type"
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(form.Get("client_assertion"), &claims, func(*jwt.Token) (any, error) { return f.ccKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(f.as.URL), jwt.WithIssuer(id), jwt.WithSubject(id), jwt.WithExpirationRequired())
	if err != nil {
		return "", "bad assertion: " + err.Error()
	}
	if claims.ID == "" || slices.Contains(f.jtis, claims.ID) {
		return "", "assertion replayed"
	}
	f.jtis = append(f.jtis, claims.ID)
	return id, ""
}

func (f *fixture) token(w http.ResponseWriter, r *http.Request) {
	id, why := f.authenticate(r)
	if why != "" {
		writeJSON(w, 401, map[string]string{"error": "invalid_client", "error_description": why})
		return
	}
	form := r.PostForm
	var g *grant
	switch form.Get("grant_type") {
	case "authorization_code":
		c := f.codes[form.Get("code")]
		delete(f.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		switch {
		case c == nil || c.client != id:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
			return
		case form.Get("redirect_uri") != c.redirect || form.Get("resource") != c.resource:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "redirect_uri or resource differ"})
			return
		}
		g = c
	case "refresh_token":
		c := f.refresh[form.Get("refresh_token")]
		delete(f.refresh, form.Get("refresh_token")) // rotated
		if c == nil || c.client != id || form.Get("resource") != c.resource {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "no such refresh token for this client and resource"})
			return
		}
		g = c
	case "client_credentials":
		if form.Get("resource") != f.URL {
			writeJSON(w, 400, map[string]string{"error": "invalid_target"})
			return
		}
		g = &grant{client: id, resource: form.Get("resource"), scopes: strings.Fields(form.Get("scope"))}
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at := f.secret("at-")
	ng := *g
	ng.expired = false
	f.access[at] = &ng
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "scope": strings.Join(g.scopes, " ")}
	if form.Get("grant_type") != "client_credentials" {
		rt := f.secret("rt-")
		f.refresh[rt] = &ng
		resp["refresh_token"] = rt
	}
	writeJSON(w, 200, resp)
}

// expire makes the server refuse every access token it issued.
func (f *fixture) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.access {
		g.expired = true
	}
}

func (f *fixture) count(p *int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *p
}

func (f *fixture) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// browser is an Options.Open that does what a person's browser does when
// the person agrees: follow the authorization URL to the redirect.
type browser struct {
	mu     sync.Mutex
	opened []string
}

func (b *browser) open(ctx context.Context, u string) error {
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("the login page answered %s: %s", resp.Status, b)
	}
	return nil
}

func (b *browser) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.opened)
}

// session is an MCP client of srv through a's transport: what a
// session's pool does, over the real protocol.
func session(t *testing.T, a *Auth, srv mcpconf.Server) (*mcpc.Client, error) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(srv.URL, transport.WithHTTPBasicClient(&http.Client{Transport: a.Transport(srv, http.DefaultTransport)}))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpc.NewClient(tr)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "zero-test", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		return nil, err
	}
	return c, nil
}

func call(t *testing.T, c *mcpc.Client, tool string) (string, error) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = map[string]any{"text": "hi"}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("tool error: %+v", res.Content)
	}
	return res.Content[0].(mcp.TextContent).Text, nil
}
