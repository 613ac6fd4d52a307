package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// The redirect of a login comes back to Zero on a loopback listener (RFC
// 8252 7.3): 127.0.0.1, never a name a hosts file could point elsewhere,
// on the port registered before when it is free (an authorization server
// that matches redirect URIs exactly wants the same one), else any.

// listenLoopback listens where prev (a redirect URI used before) points
// when it can, else on a port of the system's choosing, and returns the
// redirect URI for the listener.
func listenLoopback(prev string) (net.Listener, string, error) {
	if u, err := url.Parse(prev); prev != "" && err == nil && u.Hostname() == "127.0.0.1" && u.Port() != "" && u.Path == "/callback" {
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", u.Port())); err == nil {
			return ln, prev, nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String() + "/callback", nil
}

// callback is what the browser brought back.
type callback struct {
	code, state, iss string
	err              error
}

// waitForCode serves the redirect on ln, has open show the person
// authURL, and waits for the redirect carrying the state authURL holds
// (another state is not this login's and is turned away) or for ctx.
func waitForCode(ctx context.Context, ln net.Listener, authURL string, open func(context.Context, string) error) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
		return nil, fmt.Errorf("the authorization page %s is not https: Zero does not open it", u.Redacted())
	}
	state := u.Query().Get("state")
	done := make(chan callback, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if state == "" || q.Get("state") != state {
			// Not this login's redirect: a page elsewhere cannot end it.
			http.Error(w, "This is not the login Zero is waiting for.", http.StatusBadRequest)
			return
		}
		cb := callback{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		page := "Zero is logged in. You can close this page."
		switch {
		case q.Get("error") != "":
			cb.err = &oauthError{Code: clean(q.Get("error"), 64), Description: clean(q.Get("error_description"), 200)}
			page = "The login did not go through; Zero says why."
		case cb.code == "":
			cb.err = errors.New("the redirect carries no authorization code")
			page = "The login did not go through; Zero says why."
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, page)
		select {
		case done <- cb:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// Let the page being answered finish, briefly.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := open(ctx, authURL); err != nil {
		return nil, fmt.Errorf("opening the authorization page: %w", err)
	}
	select {
	case cb := <-done:
		if cb.err != nil {
			return nil, cb.err
		}
		return &auth.AuthorizationResult{Code: cb.code, State: cb.state, Iss: cb.iss}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
