package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// rpcReply decodes a JSON-RPC answer.
type rpcReply struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeReply(t *testing.T, line string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("bad answer %q: %v", line, err)
	}
	return r
}

// modernMeta is the _meta of a request in the stateless 2026-07-28 era,
// which has no initialize.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// Before initialize, only initialize and ping are answered; everything
// else (tools/call first of all) gets "server not initialized".
func TestMCPRefusesBeforeInitialize(t *testing.T) {
	t.Run("stdio", testRefusesBeforeInitializeStdio)
	t.Run("http", testRefusesBeforeInitializeHTTP)
}

func testRefusesBeforeInitializeStdio(t *testing.T) {
	env := newEnv(t, nil)
	cw, lines := serveRaw(t, env)
	ask := func(s string) rpcReply {
		t.Helper()
		return rawCall(t, cw, lines, s)
	}
	run := fmt.Sprintf(`{"jsonrpc":"2.0","id":%%d,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"hi","workspace":%q}}}`, env.Workspace)
	refused := []string{
		fmt.Sprintf(run, 1),
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`,
	}
	for i, line := range refused {
		r := ask(line)
		if r.Error == nil || r.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(r.Error.Message, "not initialized") || r.ID != float64(i+1) {
			t.Errorf("before initialize, %s was answered %+v %s, want error %d \"not initialized\"", line, r.Error, r.Result, mcp.INVALID_REQUEST)
		}
	}
	if len(env.Manager.List()) != 0 {
		t.Errorf("a session was created before initialize: %v", env.Manager.List())
	}
	// The stateless 2026-07-28 protocol has no initialize: its requests
	// carry their version in _meta, and are served.
	if r := ask(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"zero_sessions","arguments":{},` + modernMeta + `}}`); r.Error != nil || !strings.Contains(string(r.Result), "sessions") {
		t.Errorf("a 2026-07-28 request: %+v %s", r.Error, r.Result)
	}
	if r := ask(`{"jsonrpc":"2.0","id":10,"method":"ping"}`); r.Error != nil {
		t.Errorf("ping before initialize: %+v", r.Error)
	}
	if r := ask(`{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if r := ask(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"zero_sessions","arguments":{}}}`); r.Error != nil || !strings.Contains(string(r.Result), "sessions") {
		t.Errorf("tools/call after initialize = %+v %s", r.Error, r.Result)
	}
}

// post sends one JSON-RPC message to the HTTP face and returns the status
// and the JSON-RPC answer in the body (if any, as JSON or as one SSE
// event).
func post(t *testing.T, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	status, s, _ := postH(t, url, headers, body)
	return status, s
}

// postH is post that also returns the answer's headers.
func postH(t *testing.T, url string, headers map[string]string, body string) (int, string, http.Header) {
	t.Helper()
	return postBody(t, url, headers, strings.NewReader(body))
}

// postBody posts body and returns the status, the JSON-RPC answer (taken
// out of an event stream) and the headers.
func postBody(t *testing.T, url string, headers map[string]string, body io.Reader) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for l := range strings.SplitSeq(s, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id"`) {
				s = d
			}
		}
	}
	return resp.StatusCode, s, resp.Header
}

func testRefusesBeforeInitializeHTTP(t *testing.T) {
	env := newEnv(t, nil)
	url, token := startHTTP(t, env)
	auth := map[string]string{"Authorization": "Bearer " + token}
	run := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"hi","workspace":%q}}}`, env.Workspace)

	// No session: the client never sent initialize.
	status, body := post(t, url, auth, run)
	r := decodeReply(t, body)
	if status != http.StatusBadRequest || r.Error == nil || r.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(r.Error.Message, "not initialized") || r.ID != float64(1) {
		t.Errorf("tools/call without initialize: %d %s, want 400 and a \"not initialized\" error", status, body)
	}
	// The stateless 2026-07-28 protocol has no initialize: its requests
	// are served.
	modern := map[string]string{"Authorization": "Bearer " + token, mcp.HeaderProtocolVersion: "2026-07-28",
		mcp.HeaderMethod: "tools/call", mcp.HeaderName: "zero_sessions"}
	status, body = post(t, url, modern, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"zero_sessions","arguments":{},`+modernMeta+`}}`)
	r = decodeReply(t, body)
	if status != http.StatusOK || r.Error != nil || !strings.Contains(string(r.Result), "sessions") {
		t.Errorf("a stateless tools/call: %d %s", status, body)
	}
	if len(env.Manager.List()) != 0 {
		t.Errorf("a session was created before initialize: %v", env.Manager.List())
	}

	// After initialize the same call works.
	status, body, h := postH(t, url, auth, `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if status != http.StatusOK || decodeReply(t, body).Error != nil {
		t.Fatalf("initialize: %d %s", status, body)
	}
	sid := h.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize gave no session id")
	}
	session := map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, mcp.HeaderProtocolVersion: "2025-11-25"}
	post(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	status, body = post(t, url, session, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"zero_sessions","arguments":{}}}`)
	if r := decodeReply(t, body); status != http.StatusOK || r.Error != nil || !strings.Contains(string(r.Result), "sessions") {
		t.Errorf("tools/call after initialize: %d %s", status, body)
	}
}

// The HTTP face refuses requests from web pages: an Origin that is not a
// loopback address gets 403, whatever the token; no Origin (a native
// client) or a loopback one goes on to the token check.
func TestMCPHTTPOrigin(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	url, token := startHTTP(t, env)
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	tests := []struct {
		origin string
		token  string
		status int
	}{
		{"", token, http.StatusOK},
		{"http://localhost:3000", token, http.StatusOK},
		{"https://localhost", token, http.StatusOK},
		{"http://LOCALHOST:8080", token, http.StatusOK},
		{"http://127.0.0.1:5173", token, http.StatusOK},
		{"http://127.4.5.6", token, http.StatusOK},
		{"http://[::1]:9000", token, http.StatusOK},
		{"http://localhost:3000", "wrong", http.StatusUnauthorized},
		{"", "wrong", http.StatusUnauthorized},
		{"https://evil.example", token, http.StatusForbidden},
		{"https://evil.example", "wrong", http.StatusForbidden},
		{"http://localhost.evil.example", token, http.StatusForbidden},
		{"http://127.0.0.1.nip.io", token, http.StatusForbidden},
		{"http://192.168.1.10:8080", token, http.StatusForbidden},
		{"http://[::2]", token, http.StatusForbidden},
		{"null", token, http.StatusForbidden},
		{"file://", token, http.StatusForbidden},
		{"vscode-webview://abc", token, http.StatusForbidden},
		{"ftp://localhost", token, http.StatusForbidden},
		{"http://user@localhost", token, http.StatusForbidden},
		{"http://localhost/path", token, http.StatusForbidden},
		{"not a url", token, http.StatusForbidden},
	}
	for _, tt := range tests {
		h := map[string]string{"Authorization": "Bearer " + tt.token}
		if tt.origin != "" {
			h["Origin"] = tt.origin
		}
		if status, body := post(t, url, h, ping); status != tt.status {
			t.Errorf("Origin %q, token %q: status %d (%s), want %d", tt.origin, tt.token, status, strings.TrimSpace(body), tt.status)
		}
	}
}

// A client that probes for the stateless 2026-07-28 protocol first
// (mcp-go's default) gets it, on both transports, and works.
func TestMCPModernProtocol(t *testing.T) {
	env := newEnv(t, nil)
	check := func(name string, c *client.Client) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), waitLong)
		defer cancel()
		if err := c.Start(ctx); err != nil {
			t.Fatalf("%s: start: %v", name, err)
		}
		res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}})
		if err != nil {
			t.Fatalf("%s: initialize: %v", name, err)
		}
		if !mcp.IsModernProtocol(res.ProtocolVersion) {
			t.Errorf("%s: negotiated %s, want the stateless protocol", name, res.ProtocolVersion)
		}
		_, out := call(t, c, "zero_sessions", map[string]any{})
		mustOK(t, out)
	}

	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(t.Context(), sr, sw, Options{Manager: env.Manager}); sw.Close() }()
	c := client.NewClient(transport.NewIO(cr, cw, io.NopCloser(strings.NewReader(""))))
	check("stdio", c)
	cw.Close()
	<-done
	c.Close()

	url, token := startHTTP(t, env)
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	hc := client.NewClient(tr)
	defer hc.Close()
	check("http", hc)
}
