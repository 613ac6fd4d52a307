package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroagent/zero/mcpconf"
)

// Options configure an Auth.
type Options struct {
	// Dir is where tokens live: one file per server name and URL, the
	// folder mode 0700, each file 0600, written atomically. Empty keeps
	// them in memory, for this Auth only.
	Dir string
	// Open, when set, lets a request that needs the person (the first
	// login, a step-up to more scopes) open the authorization URL (a
	// browser) and wait for the redirect on a loopback listener
	// (127.0.0.1, a random port or the one registered before, path
	// /callback, the state checked). Nil: such a request fails with
	// *LoginRequired.
	Open   func(ctx context.Context, authURL string) error
	Logger *slog.Logger
	// HTTPClient makes the discovery, registration and token requests;
	// nil is a client with timeouts.
	HTTPClient *http.Client
}

// Auth logs Zero in to MCP URL servers and keeps their tokens. It is safe
// for concurrent use; one per token folder in a process lets the sessions
// share a refresh.
type Auth struct {
	o   Options
	now func() time.Time // the clock; tests move it

	mu     sync.Mutex
	states map[string]*state // by file name
}

// state is what requests to one server share in this process.
type state struct {
	// sem makes one request at a time renew the token or run a flow; the
	// others wait (or give up with their context) and use what it got.
	sem chan struct{}

	mu     sync.Mutex
	cached *record     // the file as last read or written
	fi     os.FileInfo // and its stat then, to see another process's write
	// forced makes requests go without the stored token, so that the
	// server's 401 starts a new login (Login); scopes are asked beside.
	forced      bool
	loginScopes []string
	loggedIn    bool // a flow completed while forced
}

func (s *state) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *state) unlock() { <-s.sem }

// New returns an Auth with o.
func New(o Options) *Auth {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultClient()
	}
	return &Auth{o: o, now: time.Now, states: map[string]*state{}}
}

// defaultClient bounds each discovery, registration and token request.
func defaultClient() *http.Client {
	c := &http.Client{Timeout: 60 * time.Second}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		t.ResponseHeaderTimeout = 30 * time.Second
		c.Transport = t
	}
	return c
}

func (a *Auth) state(srv mcpconf.Server) *state {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := fileName(srv)
	s := a.states[k]
	if s == nil {
		s = &state{sem: make(chan struct{}, 1)}
		a.states[k] = s
	}
	return s
}

// load returns the server's record (nil when there is none), read again
// only when the file changed: a login in another process reaches the
// sessions of this one at their next request. The record is shared: copy
// it (clone) to change it.
func (a *Auth) load(srv mcpconf.Server) (*record, error) {
	st := a.state(srv)
	if a.o.Dir == "" {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.cached, nil
	}
	fi, err := os.Stat(filepath.Join(a.o.Dir, fileName(srv)))
	st.mu.Lock()
	if err == nil && st.fi != nil && os.SameFile(fi, st.fi) && fi.ModTime().Equal(st.fi.ModTime()) && fi.Size() == st.fi.Size() {
		r := st.cached
		st.mu.Unlock()
		return r, nil
	}
	st.mu.Unlock()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r, fi, err := a.read(srv)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.cached, st.fi = r, fi
	st.mu.Unlock()
	return r, nil
}

// save writes r as the server's record.
func (a *Auth) save(srv mcpconf.Server, r *record) error {
	r.Server, r.URL = keyName(srv.Name), srv.URL
	var fi os.FileInfo
	if a.o.Dir != "" {
		var err error
		if fi, err = a.write(r); err != nil {
			return fmt.Errorf("keeping the login of MCP server %s: %w", srv.Name, err)
		}
	}
	st := a.state(srv)
	st.mu.Lock()
	st.cached, st.fi = r, fi
	st.mu.Unlock()
	return nil
}

// expired reports whether r's access token is past its expiry, or within
// a minute of it (a request takes time to arrive).
func (a *Auth) expired(r *record) bool {
	return !r.Expiry.IsZero() && !a.now().Before(r.Expiry.Add(-time.Minute))
}

// Transport wraps base for server srv: it adds Authorization: Bearer from
// the stored token (renewing it, with the resource parameter, when it
// expired), and on a 401, or a 403 insufficient_scope, runs the flow once
// for the request and sends it again (its body from GetBody). The
// authorization code grant needs Options.Open; without it the request
// fails with *LoginRequired. client_credentials runs without. A server
// with no oauth configuration and no token is still logged in to on a
// 401: discovery needs nothing configured. A server configured with its
// own Authorization header is left to it. Tokens never reach the logs or
// an error.
func (a *Auth) Transport(srv mcpconf.Server, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{a: a, srv: srv, st: a.state(srv), base: base}
}

// LoginRequired is why a request to an MCP server failed when only the
// person can log in (Options.Open is nil): the first login, a token that
// expired and cannot be refreshed, or a server asking for more scopes.
type LoginRequired struct {
	Server, URL string
	// Scopes are those the server asked for, when it asked for more
	// (a step-up); the next login asks for them.
	Scopes []string
}

func (e *LoginRequired) Error() string {
	msg := fmt.Sprintf("the MCP server %s needs a login: %s", e.Server, mcpconf.LoginHint(e.Server))
	if len(e.Scopes) > 0 {
		msg += fmt.Sprintf(" (it asks for more access: %s)", strings.Join(e.Scopes, " "))
	}
	return msg
}

// Refused reports that the server refused the request before running it:
// a call that failed with LoginRequired did not run, and can be sent
// again once the person logged in.
func (e *LoginRequired) Refused() bool { return true }

// Logout forgets the server's login: its tokens and the client Zero
// registered for it. It is no error when there was none.
func (a *Auth) Logout(srv mcpconf.Server) error {
	st := a.state(srv)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cached, st.fi = nil, nil
	if a.o.Dir == "" {
		return nil
	}
	err := os.Remove(filepath.Join(a.o.Dir, fileName(srv)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Status is what Zero holds of a server's login, never the token.
type Status struct {
	// LoggedIn: a token is stored.
	LoggedIn bool
	// Expired: that token expired and cannot be renewed without the
	// person (no refresh token); a client_credentials token renews itself.
	Expired bool
	Scopes  []string
	Expiry  time.Time
	// NeedsLogin: the server refused Zero for want of a login (or of more
	// scopes) since the last one.
	NeedsLogin bool
}

// Status says what is stored for srv, without a request.
func (a *Auth) Status(srv mcpconf.Server) (Status, error) {
	r, err := a.load(srv)
	if err != nil || r == nil {
		return Status{}, err
	}
	st := Status{LoggedIn: r.AccessToken != "", Scopes: slices.Clone(r.Scopes), Expiry: r.Expiry, NeedsLogin: r.NeedsLogin}
	st.Expired = st.LoggedIn && a.expired(r) && r.RefreshToken == "" && r.Grant != grantClientCredentials
	return st, nil
}

// Login runs connect (which makes requests to srv through a Transport of
// a) so that the server's next request asks the person again, even when a
// token is stored, with scopes asked for beside those the server names
// and those it asked for before: what `zero mcp login` does. It reports
// whether a login happened; false with a nil error is a server that
// answered without one.
func (a *Auth) Login(ctx context.Context, srv mcpconf.Server, scopes []string, connect func(context.Context) error) (bool, error) {
	st := a.state(srv)
	st.mu.Lock()
	st.forced, st.loginScopes, st.loggedIn = true, slices.Clone(scopes), false
	st.mu.Unlock()
	err := connect(ctx)
	st.mu.Lock()
	done := st.loggedIn
	st.forced, st.loginScopes, st.loggedIn = false, nil, false
	st.mu.Unlock()
	if done {
		// The login went through; what failed after it (a tool list the
		// server refused) is the server's and said so.
		return true, err
	}
	return false, err
}
