package security

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/proctest"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// echoServerSh is an MCP server over stdio, in sh, whose one tool prints
// the variables of its environment named SECRETISH_*: a server that echoes
// what it was given.
const echoServerSh = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id": *\([0-9][0-9]*\).*/\1/p')
  [ -z "$id" ] && continue
  case "$line" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}}\n' "$id" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"env","description":"prints its environment","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
  *'"tools/call"'*) text=$(env | grep SECRETISH_ | sort | tr '\n' ' ' | tr -d '"\\'); printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"env: %s"}]}}\n' "$id" "$text" ;;
  *) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
`

type headersKey struct{}

// echoHTTPServer is a streamable-HTTP MCP server whose tool whoami says
// which Authorization and X-Api-Key headers it was called with.
func echoHTTPServer(t *testing.T) string {
	s := mcpserver.NewMCPServer("echo-http", "1", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("says how it was called")), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h, _ := ctx.Value(headersKey{}).(http.Header)
		return mcp.NewToolResultText("called with auth=" + h.Get("Authorization") + " key=" + h.Get("X-Api-Key")), nil
	})
	hs := mcpserver.NewStreamableHTTPServer(s, mcpserver.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, headersKey{}, r.Header.Clone())
	}))
	ts := httptest.NewServer(hs)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestMCPCredentialsNeverReachModel: servers that echo the headers and env
// values Zero hands them, from a trusted workspace's .mcp.json and from the
// editor's mcpServers (ACP session/new), are called by the model; what
// they echo reaches the model masked, never in clear.
func TestMCPCredentialsNeverReachModel(t *testing.T) {
	t.Parallel()
	values := []string{"Bearer ws-bearer-token-111", "ws-bearer-token-111", "ws-api-key-222", "ws-env-value-333",
		"ed-env-value-444", "ed-bearer-token-555", "ed-api-key-666"}
	url := echoHTTPServer(t)
	b := newBox(t,
		tool("wshttp.whoami", `{}`), tool("wsenv.env", `{}`), tool("edenv.env", `{}`), tool("edhttp.whoami", `{}`), answer("done"))
	write(t, filepath.Join(b.ws, "echo.sh"), echoServerSh, 0o644)
	edScript := filepath.Join(t.TempDir(), "echo.sh")
	write(t, edScript, echoServerSh, 0o644)
	write(t, filepath.Join(b.ws, ".mcp.json"), `{"mcpServers": {
		"wshttp": {"type": "http", "url": "`+url+`", "headers": {"Authorization": "Bearer ws-bearer-token-111", "X-Api-Key": "ws-api-key-222"}},
		"wsenv": {"command": "sh", "args": ["echo.sh"], "env": {"SECRETISH_WS": "ws-env-value-333"}}}}`, 0o644)
	if out, stderr, err := b.run(nil, "trust", "--yes", "--workspace", b.ws); err != nil {
		t.Fatalf("zero trust: %v\n%s%s", err, out, stderr)
	}
	s := b.acp([]string{"ZERO_APPROVAL=auto"})
	ctx, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	defer cancel()
	res, err := s.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: b.ws, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "edenv", Command: "sh", Args: []string{edScript}, Env: []sdk.EnvVariable{{Name: "SECRETISH_ED", Value: "ed-env-value-444"}}}},
		{Http: &sdk.McpServerHttpInline{Type: "http", Name: "edhttp", Url: url, Headers: []sdk.HttpHeader{
			{Name: "Authorization", Value: "Bearer ed-bearer-token-555"}, {Name: "X-Api-Key", Value: "ed-api-key-666"}}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v\n%s", err, s.stderr)
	}
	s.prompt(t, res.SessionId, "call them")
	var reqs strings.Builder
	for _, r := range b.model.Requests() {
		reqs.Write(r.Body)
	}
	all := reqs.String()
	for _, called := range []string{"called with auth=", "env: "} {
		if strings.Count(all, called) < 2 {
			t.Fatalf("the servers were not all called (%q):\n%s\n%s", called, all, s.stderr)
		}
	}
	for _, v := range values {
		for where, text := range map[string]string{"a model request": all, "the editor": s.client.text(), "the log": s.stderr.String()} {
			if strings.Contains(text, v) {
				t.Errorf("%s reached %s", v, where)
			}
		}
	}
}
