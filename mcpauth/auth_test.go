package mcpauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsrv "github.com/mark3labs/mcp-go/server"
	"github.com/zeroagent/zero/mcpconf"
)

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newAuth is an Auth on dir whose clock the test moves; open nil is a
// session's (no person).
func newAuth(dir string, open func(context.Context, string) error, clk *clock, logger *slog.Logger) *Auth {
	a := New(Options{Dir: dir, Open: open, Logger: logger})
	if clk != nil {
		a.now = clk.now
	}
	return a
}

func tokenDir(t *testing.T) string { return filepath.Join(t.TempDir(), "mcp-auth") }

// A server that answers 401 is logged in to with nothing configured: its
// metadata found from the challenge, a client registered, the code
// flow with PKCE (which the server verifies) and the resource on the
// authorization and token requests; the tokens are kept in a file only
// the user reads, which a session (no person) then uses.
func TestLoginFromA401(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := tokenDir(t)
	b := &browser{}
	a := newAuth(dir, b.open, nil, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	c, err := session(t, a, srv)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := call(t, c, "echo"); err != nil || out != "echo: hi" {
		t.Fatalf("call = %q, %v", out, err)
	}
	if b.count() != 1 || f.count(&f.registrations) != 1 || f.count(&f.authorizations) != 1 {
		t.Errorf("browser opened %d times, %d registrations, %d authorizations; want 1 each", b.count(), f.registrations, f.authorizations)
	}
	f.set(func() {
		if got := f.authorizeQueries[0].Get("resource"); got != f.URL {
			t.Errorf("authorization request's resource = %q, want %q", got, f.URL)
		}
		if form := f.tokenForms[0]; form.Get("resource") != f.URL || form.Get("code_verifier") == "" {
			t.Errorf("token request lacks the resource or the PKCE verifier: %v", form)
		}
	})

	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("token folder: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 {
		t.Fatalf("token folder holds %d files, want 1 (no temporary left)", len(files))
	}
	if fi, _ := files[0].Info(); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	st, err := a.Status(srv)
	if err != nil || !st.LoggedIn || st.Expired || st.NeedsLogin || st.Expiry.IsZero() {
		t.Errorf("Status = %+v, %v", st, err)
	}

	// A session of another Zero: no person, the stored token.
	c2, err := session(t, newAuth(dir, nil, nil, nil), srv)
	if err != nil {
		t.Fatalf("a session with the stored token: %v", err)
	}
	if _, err := call(t, c2, "echo"); err != nil {
		t.Fatal(err)
	}
	if f.count(&f.authorizations) != 1 {
		t.Error("the session logged in again")
	}
}

// An expired token is refreshed before it is sent (by the clock), and
// when the server refuses one that should still be good; the refresh
// names the resource and takes the rotated refresh token; nobody is
// asked. A refused refresh token leaves a session a login to ask for.
func TestRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := tokenDir(t)
	clk := &clock{t: time.Now()}
	b := &browser{}
	a := newAuth(dir, b.open, clk, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	c, err := session(t, a, srv)
	if err != nil {
		t.Fatal(err)
	}
	refreshes := func() (n int) {
		f.set(func() {
			for _, form := range f.tokenForms {
				if form.Get("grant_type") == "refresh_token" {
					n++
					if form.Get("resource") != f.URL {
						t.Errorf("refresh without the resource: %v", form)
					}
				}
			}
		})
		return n
	}
	clk.add(2 * time.Hour)
	if _, err := call(t, c, "echo"); err != nil {
		t.Fatalf("after the expiry: %v", err)
	}
	if refreshes() != 1 {
		t.Fatalf("%d refreshes after the expiry, want 1", refreshes())
	}
	f.expire() // the server refuses the token our clock still takes
	if _, err := call(t, c, "echo"); err != nil {
		t.Fatalf("after the server refused the token: %v", err)
	}
	if refreshes() != 2 || b.count() != 1 {
		t.Fatalf("%d refreshes and %d logins; want 2 and 1", refreshes(), b.count())
	}

	// The authorization server forgets the refresh token: a session can
	// only say that a login is needed.
	f.set(func() { clear(f.refresh) })
	f.expire()
	sess := newAuth(dir, nil, clk, nil)
	_, err = session(t, sess, srv)
	var lr *LoginRequired
	if !errors.As(err, &lr) {
		t.Fatalf("err = %v, want *LoginRequired", err)
	}
	if st, _ := sess.Status(srv); !st.NeedsLogin || st.LoggedIn {
		t.Errorf("Status = %+v, want needing a login", st)
	}
}

// A 403 insufficient_scope logs in again for the scopes granted and those
// asked (their union) and sends the call again; without a person the call
// fails saying a login is needed, for which scopes, and the next login
// asks for them.
func TestStepUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.set(func() { f.challenge = "read"; f.need["write"] = []string{"write"} })
	dir := tokenDir(t)
	b := &browser{}
	a := newAuth(dir, b.open, nil, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	c, err := session(t, a, srv)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := call(t, c, "write"); err != nil || out != "written" {
		t.Fatalf("call = %q, %v", out, err)
	}
	f.set(func() {
		if len(f.authorizeQueries) != 2 || scopeSet(f.authorizeQueries[0]) != "read" || scopeSet(f.authorizeQueries[1]) != "read write" {
			t.Errorf("authorizations asked for %v; want read, then read write", f.authorizeQueries)
		}
	})

	// Another server needs more than a session has.
	f2 := newFixture(t)
	f2.set(func() { f2.challenge = "read"; f2.need["write"] = []string{"write"} })
	srv2 := mcpconf.Server{Name: "wiki", URL: f2.URL}
	if _, err := session(t, a, srv2); err != nil { // logged in with read
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	sess := newAuth(dir, nil, clk, nil)
	c2, err := session(t, sess, srv2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, c2, "echo"); err != nil {
		t.Fatalf("a tool the token covers: %v", err)
	}
	_, err = call(t, c2, "write")
	var lr *LoginRequired
	if !errors.As(err, &lr) || !slices.Equal(lr.Scopes, []string{"read", "write"}) {
		t.Fatalf("err = %v, want *LoginRequired for read and write", err)
	}
	if !strings.Contains(lr.Error(), "zero mcp login wiki") || !strings.Contains(lr.Error(), "read write") {
		t.Errorf("the error says %q", lr.Error())
	}
	if st, _ := sess.Status(srv2); !st.NeedsLogin || !st.LoggedIn {
		t.Errorf("Status = %+v: the token is still good for what it covers, and a login is needed", st)
	}
	clk.add(2 * time.Hour) // a refresh does not bring the scopes
	if _, err := call(t, c2, "echo"); err != nil {
		t.Fatalf("after a refresh: %v", err)
	}
	if st, _ := sess.Status(srv2); !st.NeedsLogin {
		t.Errorf("after a refresh, Status = %+v: the login for more scopes is still needed", st)
	}
	ok, err := a.Login(t.Context(), srv2, nil, func(ctx context.Context) error { _, err := session(t, a, srv2); return err })
	if !ok || err != nil {
		t.Fatalf("Login = %v, %v", ok, err)
	}
	f2.set(func() {
		if q := f2.authorizeQueries[len(f2.authorizeQueries)-1]; scopeSet(q) != "read write" {
			t.Errorf("the login asked for %q, want read write", q.Get("scope"))
		}
	})
	if _, err := call(t, c2, "write"); err != nil {
		t.Errorf("after the login, the session's call: %v", err)
	}
}

// scopeSet is the scope a request asks for, sorted (go-sdk's union of
// scopes has no order).
func scopeSet(q url.Values) string {
	s := strings.Fields(q.Get("scope"))
	slices.Sort(s)
	return strings.Join(s, " ")
}

// A server that refuses every token with 403 insufficient_scope gets one
// login per request, not a loop of them.
func TestOneLoginPerRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := &browser{}
	a := newAuth(tokenDir(t), b.open, nil, nil)
	c, err := session(t, a, mcpconf.Server{Name: "docs", URL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	f.set(func() { f.always403 = true })
	if _, err := call(t, c, "echo"); err == nil {
		t.Fatal("the call went through a server that refuses everything")
	}
	if b.count() != 2 || f.count(&f.authorizations) != 2 {
		t.Errorf("%d logins, %d authorizations; want 2 (the first, and one for the refused call)", b.count(), f.authorizations)
	}
}

// A client configured by hand (the server registers none) logs in with
// its secret and refreshes with it; the secret stays in the configuration,
// out of the token file.
func TestConfiguredClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secret = "configured-secret-7f3a9c2e"
	f.set(func() {
		f.noDCR = true
		f.clients["zero-app"] = &fclient{secret: secret}
	})
	dir := tokenDir(t)
	// Without it configured, the error says what to do.
	_, err := session(t, newAuth(dir, (&browser{}).open, nil, nil), mcpconf.Server{Name: "docs", URL: f.URL})
	if err == nil || !strings.Contains(err.Error(), "registers no clients itself") || !strings.Contains(err.Error(), "oauth.client_id") {
		t.Errorf("without a client: %v", err)
	}
	clk := &clock{t: time.Now()}
	b := &loopbackAnyPort{f: f, id: "zero-app"}
	a := newAuth(dir, b.open, clk, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL, OAuth: &mcpconf.OAuth{ClientID: "zero-app", ClientSecret: secret}}
	c, err := session(t, a, srv)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Hour)
	if _, err := call(t, c, "echo"); err != nil {
		t.Fatalf("after a refresh with the configured secret: %v", err)
	}
	if f.count(&f.registrations) != 0 {
		t.Error("a client was registered beside the configured one")
	}
	files, _ := os.ReadDir(dir)
	raw, _ := os.ReadFile(filepath.Join(dir, files[0].Name()))
	if bytes.Contains(raw, []byte(secret)) {
		t.Error("the configured secret was written to the token file")
	}
}

// loopbackAnyPort is the browser for a client configured by hand, which
// the fixture lets redirect to any loopback port (RFC 8252 7.3).
type loopbackAnyPort struct {
	browser
	f  *fixture
	id string
}

func (b *loopbackAnyPort) open(ctx context.Context, u string) error {
	q, _ := url.Parse(u)
	b.f.set(func() { b.f.clients[b.id].redirects = []string{q.Query().Get("redirect_uri")} })
	return b.browser.open(ctx, u)
}

// The client credentials grant needs no person: with a secret, or with a
// private_key_jwt assertion the server verifies (signature, iss = sub =
// the client, aud = the issuer, a jti never seen), a new one for each
// token; the resource goes with each request, and an expired token is
// replaced before it is sent.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "svc-secret-5b1d0e77"
	f.set(func() {
		f.ccKey = &key.PublicKey
		f.clients["svc"] = &fclient{secret: secret, method: "client_secret_basic"}
		f.clients["svc-jwt"] = &fclient{method: "private_key_jwt"}
	})
	clk := &clock{t: time.Now()}
	dir := tokenDir(t)
	for _, srv := range []mcpconf.Server{
		{Name: "secret", URL: f.URL, OAuth: &mcpconf.OAuth{Grant: "client_credentials", ClientID: "svc", ClientSecret: secret}},
		{Name: "jwt", URL: f.URL, OAuth: &mcpconf.OAuth{Grant: "client_credentials", ClientID: "svc-jwt", PrivateKey: keyFile}},
	} {
		a := newAuth(dir, nil, clk, nil)
		c, err := session(t, a, srv)
		if err != nil {
			t.Fatalf("%s: %v", srv.Name, err)
		}
		clk.add(2 * time.Hour)
		if _, err := call(t, c, "echo"); err != nil {
			t.Fatalf("%s, after the expiry: %v", srv.Name, err)
		}
	}
	f.set(func() {
		if len(f.tokenForms) != 4 {
			t.Errorf("%d token requests, want 2 per client", len(f.tokenForms))
		}
		for _, form := range f.tokenForms {
			if form.Get("grant_type") != "client_credentials" || form.Get("resource") != f.URL {
				t.Errorf("token request %v", form)
			}
		}
		if len(f.jtis) != 2 {
			t.Errorf("%d assertions verified, want 2", len(f.jtis))
		}
	})

	// The server now names another authorization server (and the first
	// refuses the client): the secret is not sent there.
	moved := newFixture(t)
	srv := mcpconf.Server{Name: "secret", URL: f.URL, OAuth: &mcpconf.OAuth{Grant: "client_credentials", ClientID: "svc", ClientSecret: secret}}
	f.set(func() { f.prmAS = moved.as.URL; delete(f.clients, "svc") })
	f.expire()
	_, err = session(t, newAuth(dir, nil, clk, nil), srv)
	if err == nil || !strings.Contains(err.Error(), "authorization server changed") {
		t.Errorf("err = %v, want the change refused", err)
	}
	moved.set(func() {
		if len(moved.tokenForms) != 0 {
			t.Errorf("the secret went to the other authorization server: %v", moved.tokenForms)
		}
	})
	f.set(func() { f.prmAS = "" })

	// A key the server does not know: refused, said, not repeated.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ = x509.MarshalPKCS8PrivateKey(other)
	bad := mcpconf.Server{Name: "bad", URL: f.URL, OAuth: &mcpconf.OAuth{Grant: "client_credentials", ClientID: "svc-jwt",
		PrivateKey: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}}
	before := f.count(&f.asRequests)
	_, err = session(t, newAuth(dir, nil, clk, nil), bad)
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("err = %v, want the server's invalid_client", err)
	}
	if n := f.count(&f.asRequests) - before; n > 3 {
		t.Errorf("%d requests to the authorization server for one refused connection", n)
	}
}

// Protected resource metadata for another resource than the server:
// nothing is asked of any authorization server, nobody's browser opens,
// and the error says why.
func TestHostileMetadata(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.set(func() { f.prmResource = "https://evil.example.com/mcp" })
	b := &browser{}
	_, err := session(t, newAuth(tokenDir(t), b.open, nil, nil), mcpconf.Server{Name: "docs", URL: f.URL})
	if err == nil || !strings.Contains(err.Error(), "https://evil.example.com/mcp") || !strings.Contains(err.Error(), "not for "+f.URL) {
		t.Fatalf("err = %v", err)
	}
	if b.count() != 0 || f.count(&f.asRequests) != 0 {
		t.Errorf("%d pages opened, %d requests to the authorization server; want none", b.count(), f.asRequests)
	}
}

// No token, code or secret reaches a log line or an error, whatever
// happens: a login, refreshes, a refused refresh, a refused client.
func TestSecretsStayOutOfLogsAndErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.set(func() { f.regMethod = "client_secret_basic" }) // the registration has a secret too
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clk := &clock{t: time.Now()}
	dir := tokenDir(t)
	b := &browser{}
	a := newAuth(dir, b.open, clk, logger)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	var errs []string
	c, err := session(t, a, srv)
	if err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Hour)
	if _, err := call(t, c, "echo"); err != nil {
		t.Fatal(err)
	}
	// The refresh token is refused: the session says a login is needed.
	f.set(func() { clear(f.refresh) })
	f.expire()
	_, err = session(t, newAuth(dir, nil, clk, logger), srv)
	errs = append(errs, err.Error())
	// A client whose secret the server refuses.
	f.set(func() { f.clients["svc"] = &fclient{secret: "the-right-secret-1234", method: "client_secret_basic"} })
	_, err = session(t, newAuth(dir, nil, clk, logger), mcpconf.Server{Name: "svc", URL: f.URL,
		OAuth: &mcpconf.OAuth{Grant: "client_credentials", ClientID: "svc", ClientSecret: "a-wrong-secret-5678"}})
	if err == nil {
		t.Fatal("a refused client connected")
	}
	errs = append(errs, err.Error())

	mu.Lock()
	text := logs.String() + strings.Join(errs, "\n")
	mu.Unlock()
	f.set(func() {
		if len(f.issued) < 5 {
			t.Fatalf("the fixture issued %d secrets; the test did not go through", len(f.issued))
		}
		for _, s := range append(f.issued, "a-wrong-secret-5678") {
			if strings.Contains(text, s) {
				t.Errorf("%q is in the logs or an error", s)
			}
		}
	})
	if !strings.Contains(logs.String(), "docs") {
		t.Error("nothing was logged: the test saw no log to search")
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A workspace's .mcp.json naming a server like the user's, at another URL,
// gets no token: its Status is empty and nothing is sent to it.
func TestAnotherURLGetsNoToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := tokenDir(t)
	a := newAuth(dir, (&browser{}).open, nil, nil)
	if _, err := session(t, a, mcpconf.Server{Name: "docs", URL: f.URL}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(other.Close)
	ws := mcpconf.Server{Name: "docs", URL: other.URL + "/mcp"}
	sess := newAuth(dir, nil, nil, nil)
	if st, err := sess.Status(ws); err != nil || st.LoggedIn {
		t.Errorf("Status of the workspace's server = %+v, %v", st, err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ws.URL, strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: sess.Transport(ws, http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h != "" {
		t.Errorf("the other URL was sent %q", h)
	}
	// The same server under its configured spelling is the same login.
	if st, _ := sess.Status(mcpconf.Server{Name: "Docs", URL: f.URL}); !st.LoggedIn {
		t.Error("the configured name (Docs) does not find the pool's (docs) login")
	}
}

// Without a person (a session), a server's 401 fails the request with
// *LoginRequired, saying what to run, and nothing is asked of any
// authorization server (no client is registered for a login that cannot
// happen); doctor can tell from Status.
func TestLoginRequiredWithoutOpen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := newAuth(tokenDir(t), nil, nil, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	_, err := session(t, a, srv)
	var lr *LoginRequired
	if !errors.As(err, &lr) {
		t.Fatalf("err = %v, want *LoginRequired", err)
	}
	if want := "the MCP server docs needs a login: run `zero mcp login docs`"; lr.Error() != want || lr.URL != f.URL {
		t.Errorf("LoginRequired = %q (%s), want %q", lr.Error(), lr.URL, want)
	}
	if f.count(&f.asRequests) != 0 {
		t.Errorf("%d requests to the authorization server", f.asRequests)
	}
	if st, _ := a.Status(srv); !st.NeedsLogin || st.LoggedIn {
		t.Errorf("Status = %+v", st)
	}
}

// A login asks again even with a good token; the next one reuses the
// client registered before and its redirect URI (an authorization server
// that matches them exactly takes it), and registers anew when that port
// is taken. A server that asks for no login is said to. Logout forgets it
// all.
func TestLoginAgainAndLogout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := tokenDir(t)
	b := &browser{}
	a := newAuth(dir, b.open, nil, nil)
	srv := mcpconf.Server{Name: "docs", URL: f.URL}
	login := func() {
		t.Helper()
		ok, err := a.Login(t.Context(), srv, []string{"extra"}, func(ctx context.Context) error { _, err := session(t, a, srv); return err })
		if !ok || err != nil {
			t.Fatalf("Login = %v, %v", ok, err)
		}
	}
	login()
	login()
	redirect := func(i int) (s string) {
		f.set(func() { s = f.authorizeQueries[i].Get("redirect_uri") })
		return s
	}
	if f.count(&f.registrations) != 1 || f.count(&f.authorizations) != 2 || redirect(0) != redirect(1) {
		t.Fatalf("%d registrations, %d authorizations, redirects %s and %s; want 1 registration, 2 logins, one redirect URI",
			f.registrations, f.authorizations, redirect(0), redirect(1))
	}
	f.set(func() {
		if s := f.authorizeQueries[1].Get("scope"); s != "extra" {
			t.Errorf("the login asked for scope %q, want the one given (extra)", s)
		}
	})
	u, _ := url.Parse(redirect(1))
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	login()
	ln.Close()
	if f.count(&f.registrations) != 2 || redirect(2) == redirect(1) {
		t.Errorf("with the port taken: %d registrations, redirect %s; want a new client on another port", f.registrations, redirect(2))
	}

	if err := a.Logout(srv); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Status(srv); st.LoggedIn {
		t.Error("still logged in after Logout")
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("Logout left %d files", len(files))
	}

	open := httptest.NewServer(mcpsrv.NewStreamableHTTPServer(mcpsrv.NewMCPServer("open", "1.0.0")))
	t.Cleanup(open.Close)
	plain := mcpconf.Server{Name: "plain", URL: open.URL + "/mcp"}
	ok, err := a.Login(t.Context(), plain, nil, func(ctx context.Context) error { _, err := session(t, a, plain); return err })
	if ok || err != nil {
		t.Errorf("Login to a server that asks none = %v, %v; want false, nil", ok, err)
	}
}
