package app

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/mcpauth"
	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/mcpconf"
)

// zero doctor says which URL server needs a login, and what to run: a
// server that refused a session for want of one (recorded by the session's
// Auth) is named, with `zero mcp login NAME` as the fix.
func TestDoctorSaysWhoNeedsALogin(t *testing.T) {
	t.Parallel()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "log in first", http.StatusUnauthorized)
	}))
	t.Cleanup(refusing.Close)
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "zero", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("mcp_servers:\n  docs:\n    url: "+refusing.URL+"/mcp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{"HOME=" + home, "ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "ZERO_SANDBOX=local", "ZERO_STORE=off"}
	a, err := NewAppAt(t.TempDir(), nil, nil, slog.New(slog.DiscardHandler), env)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv, err := a.MCPServer("docs")
	if err != nil {
		t.Fatal(err)
	}
	// A session's request: refused, no person to log in.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("{}"))
	_, err = (&http.Client{Transport: a.mcpAuth().Transport(srv, http.DefaultTransport)}).Do(req)
	if _, ok := errors.AsType[*mcpauth.LoginRequired](err); !ok {
		t.Fatalf("the session's request: %v, want a login required", err)
	}
	r, ok := checkMCP(t.Context(), a)
	if !ok || r.OK || !strings.Contains(r.Detail, "docs (0 tools) needs a login: run `zero mcp login docs`") || !strings.Contains(r.Fix, "run `zero mcp login docs`") {
		t.Errorf("doctor's MCP check: %+v", r)
	}
}

// TestOAuthSecretsMasked: a server's client secret and inline private key
// are masked like its headers, wherever Zero would show them.
func TestOAuthSecretsMasked(t *testing.T) {
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkey0123456789\n-----END EC PRIVATE KEY-----"
	set := withMCPCredentials(nil, []mcpclient.Server{{Name: "gh", URL: "https://example.com/mcp",
		OAuth: &mcpconf.OAuth{ClientID: "zero-client", ClientSecret: "s3cret-value-42", PrivateKey: key}}})
	got := set.Mask("secret s3cret-value-42 key " + key)
	if strings.Contains(got, "s3cret-value-42") || strings.Contains(got, "MHcCAQEEIBkey") {
		t.Fatalf("masked = %q", got)
	}
	if !strings.Contains(got, "§§secret(MCP_GH_CLIENT_SECRET)") {
		t.Errorf("masked = %q; want the secret's alias", got)
	}
}
