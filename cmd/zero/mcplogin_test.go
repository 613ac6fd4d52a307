package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpsrv "github.com/mark3labs/mcp-go/server"
	"github.com/zeroagent/zero/llm/llmtest"
)

// loginServer is an MCP server behind OAuth on loopback with its own
// authorization server: dynamic registration, the code flow with PKCE
// (verified) and the resource parameter, one token.
type loginServer struct {
	URL    string
	mu     sync.Mutex
	code   map[string]string // code -> PKCE challenge
	tokens map[string]bool
}

func newLoginServer(t *testing.T) *loginServer {
	l := &loginServer{code: map[string]string{}, tokens: map[string]bool{}}
	js := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"resource": l.URL, "authorization_servers": []string{base + "/as"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		js(w, 200, map[string]any{"issuer": base + "/as", "authorization_endpoint": base + "/as/authorize", "token_endpoint": base + "/as/token",
			"registration_endpoint": base + "/as/register", "code_challenge_methods_supported": []string{"S256"}, "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("/as/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		json.NewDecoder(r.Body).Decode(&md)
		md["client_id"], md["token_endpoint_auth_method"] = "zero-1", "none"
		js(w, 201, md)
	})
	mux.HandleFunc("/as/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("resource") != l.URL || q.Get("code_challenge_method") != "S256" {
			http.Error(w, "resource and PKCE required", 400)
			return
		}
		code := rand.Text()
		l.mu.Lock()
		l.code[code] = q.Get("code_challenge")
		l.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+q.Get("state"), http.StatusFound)
	})
	mux.HandleFunc("/as/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		l.mu.Lock()
		defer l.mu.Unlock()
		if ch, ok := l.code[r.PostForm.Get("code")]; !ok || ch != base64.RawURLEncoding.EncodeToString(sum[:]) || r.PostForm.Get("resource") != l.URL {
			js(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		tok := "at-" + rand.Text()
		l.tokens[tok] = true
		js(w, 200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	ms := mcpsrv.NewMCPServer("protected", "1.0.0")
	ms.AddTool(mcpgo.NewTool("echo"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("echo"), nil
	})
	mcp := mcpsrv.NewStreamableHTTPServer(ms)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		ok := l.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		l.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", 401)
			return
		}
		mcp.ServeHTTP(w, r)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	base, l.URL = s.URL, s.URL+"/mcp"
	return l
}

// `zero mcp login NAME` prints the authorization page on stderr (here the
// browser is a program that does nothing), waits for the person's login
// (the test follows the page to Zero's loopback redirect) and keeps the
// token in the user's config folder, readable by the user only; `zero
// mcp logout NAME` forgets it. The configured name is found as written.
func TestMCPLoginLogout(t *testing.T) {
	t.Parallel()
	srv := newLoginServer(t)
	cfg := t.TempDir()
	mustWrite(t, filepath.Join(cfg, "zero", "config.yaml"), "mcp_servers:\n  Docs.Site:\n    url: "+srv.URL+"\n")
	env := []string{"XDG_CONFIG_HOME=" + cfg, "BROWSER=true"}

	said := mcpLogin(t, env, "Docs.Site")
	if !strings.Contains(said, "logged in to Docs.Site") {
		t.Errorf("zero mcp login said on stderr:\n%s", said)
	}
	dir := filepath.Join(cfg, "zero", "mcp-auth")
	files, err := os.ReadDir(dir)
	if err != nil || len(files) != 1 {
		t.Fatalf("token folder: %v, %d files", err, len(files))
	}
	fi, _ := os.Stat(dir)
	ffi, _ := files[0].Info()
	if fi.Mode().Perm() != 0o700 || ffi.Mode().Perm() != 0o600 {
		t.Errorf("modes: folder %v, file %v; want 0700, 0600", fi.Mode().Perm(), ffi.Mode().Perm())
	}

	if out, err := zeroCmd(t, env, "mcp", "logout", "docs.site").CombinedOutput(); err != nil || !strings.Contains(string(out), "logged out of docs.site") {
		t.Fatalf("zero mcp logout: %v\n%s", err, out)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("logout left %d files", len(files))
	}
	out, err := zeroCmd(t, env, "mcp", "login", "nosuch").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no MCP server nosuch") || !strings.Contains(string(out), "--url") {
		t.Errorf("zero mcp login nosuch: %v\n%s", err, out)
	}
	// A server no config names (an editor's): its address is given.
	if said := mcpLogin(t, env, "--url", srv.URL, "editors"); !strings.Contains(said, "logged in to editors") {
		t.Errorf("zero mcp login --url: %s", said)
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("after a login with --url: %d files", len(files))
	}
	if out, err := zeroCmd(t, env, "mcp", "logout", "--url", srv.URL, "editors").CombinedOutput(); err != nil {
		t.Fatalf("zero mcp logout --url: %v\n%s", err, out)
	}
	if out, err := zeroCmd(t, env, "mcp", "login", "--url", "file:///etc/passwd", "editors").CombinedOutput(); err == nil || !strings.Contains(string(out), "http or https") {
		t.Errorf("zero mcp login --url file://: %v\n%s", err, out)
	}
	if out, _ := zeroCmd(t, env, "mcp", "login").CombinedOutput(); !strings.Contains(string(out), "name one server") {
		t.Errorf("zero mcp login without a name:\n%s", out)
	}
	if out, err := zeroCmd(t, env, "mcp", "login", "--help").Output(); err != nil || !strings.HasPrefix(string(out), "Usage:\n  zero mcp login") || !strings.Contains(string(out), "-scope") {
		t.Errorf("zero mcp login --help: %v\n%s", err, out)
	}
}

// mcpLogin runs `zero mcp login args...` as a person would: the page it
// prints is followed (the login server redirects to Zero's loopback port
// at once); it returns what the command said on stderr, and fails the
// test when it printed anything on stdout or failed.
func mcpLogin(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := zeroCmd(t, env, append([]string{"mcp", "login"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		said.WriteString(line + "\n")
		if page := strings.TrimSpace(line); strings.HasPrefix(page, "http://") && strings.Contains(page, "/as/authorize?") {
			resp, err := http.Get(page) // the person logs in: the page redirects to Zero
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "logged in") {
				t.Errorf("the redirect's page: %s %s", resp.Status, body)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zero mcp login: %v\n%s", err, said.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("zero mcp login wrote on stdout:\n%s", stdout.String())
	}
	return said.String()
}

// A session uses a server behind OAuth once the person logged in: before,
// the run says the server needs a login and what to run; after `zero mcp
// login`, the agent calls the server's tool with the token, which shows
// in no output, log or request to the model.
func TestMCPLoginThenSession(t *testing.T) {
	t.Parallel()
	srv := newLoginServer(t)
	cfg := t.TempDir()
	mustWrite(t, filepath.Join(cfg, "zero", "config.yaml"), "mcp_servers:\n  docs:\n    url: "+srv.URL+"\n")
	model := llmtest.NewServer(t,
		llmtest.Reply{Match: "before the login", Content: chatAnswer("not yet")},
		llmtest.Reply{Match: "use the docs", Content: chatToolReply("Asking the docs", "docs.echo", `{}`)},
		llmtest.Reply{Match: "echo", Content: chatAnswer("the docs answered")},
	)
	env := []string{"XDG_CONFIG_HOME=" + cfg, "BROWSER=true", "ZERO_MODEL=m", "OPENAI_BASE_URL=" + model.URL()}

	out, err := zeroCmd(t, env, "run", "--workspace", t.TempDir(), "before the login").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "needs a login: run `zero mcp login docs`") {
		t.Fatalf("a run before the login: %v\n%s", err, out)
	}

	mcpLogin(t, env, "docs")
	out, err = zeroCmd(t, env, "run", "--workspace", t.TempDir(), "use the docs").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the docs answered") {
		t.Fatalf("a run after the login: %v\n%s", err, out)
	}
	srv.mu.Lock()
	var tokens []string
	for tok := range srv.tokens {
		tokens = append(tokens, tok)
	}
	srv.mu.Unlock()
	if len(tokens) != 1 {
		t.Fatalf("%d tokens issued", len(tokens))
	}
	var sent strings.Builder
	for _, r := range model.Requests() {
		sent.Write(r.Body)
	}
	if !strings.Contains(sent.String(), "echo") {
		t.Errorf("the tool's result did not reach the model")
	}
	if strings.Contains(sent.String()+string(out), tokens[0]) {
		t.Errorf("the access token showed in the output or a request to the model")
	}
}
