package servertest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpsrv "github.com/mark3labs/mcp-go/server"
)

// AskingServer is an MCP server over streamable HTTP on loopback whose tool
// "book" asks the user during the call (elicitation/create) for a form:
// name (a string, required), seats (an integer, default 2) and window (a
// boolean), with the message "Which name is the booking under?". The
// tool's result says what came back: "booked for NAME, SEATS seats
// (window: W)", "declined" or "cancelled"; an error when the client could
// not be asked. Its tool "open" asks the user to open a page (URL mode).
// The server is closed when the test ends.
func AskingServer(tb testing.TB) (url string) {
	tb.Helper()
	s := mcpsrv.NewMCPServer("asking", "1.0.0", mcpsrv.WithElicitation())
	s.AddTool(mcp.NewTool("book", mcp.WithDescription("Books a table; asks the user whose name it is under.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: "Which name is the booking under?",
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"name":   map[string]any{"type": "string", "title": "Name"},
						"seats":  map[string]any{"type": "integer", "title": "Seats", "default": 2, "minimum": 1, "maximum": 12},
						"window": map[string]any{"type": "boolean", "title": "By the window"},
					},
					"required": []string{"name"},
				},
			}})
			if err != nil {
				return mcp.NewToolResultError("could not ask: " + err.Error()), nil
			}
			switch res.Action {
			case mcp.ElicitationResponseActionAccept:
				c, _ := res.Content.(map[string]any)
				return mcp.NewToolResultText(fmt.Sprintf("booked for %v, %v seats (window: %v)", c["name"], c["seats"], c["window"])), nil
			default:
				return mcp.NewToolResultText(string(res.Action) + "d"), nil
			}
		})
	s.AddTool(mcp.NewTool("open", mcp.WithDescription("Asks the user to open a page.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Mode: mcp.ElicitationModeURL, ElicitationID: "e1", URL: "https://example.com/connect",
				Message: "Connect your account",
			}})
			if err != nil {
				return mcp.NewToolResultError("could not ask: " + err.Error()), nil
			}
			return mcp.NewToolResultText(string(res.Action)), nil
		})
	hs := httptest.NewServer(mcpsrv.NewStreamableHTTPServer(s, mcpsrv.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler))))
	tb.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// MCPConfig writes a config.yaml in home whose mcp_servers hold one URL
// server, name at url (for New's Options.Home).
func MCPConfig(tb testing.TB, home, name, url string) {
	tb.Helper()
	cfg := filepath.Join(home, ".config", "zero", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("mcp_servers:\n  "+name+":\n    url: "+url+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// LockedServer is an MCP server over streamable HTTP on loopback behind
// OAuth that no one has logged in to: every request gets 401 with a
// Bearer challenge naming its resource metadata. A session that uses it
// is told the server needs a login (`zero mcp login NAME`).
func LockedServer(tb testing.TB) (url string) {
	tb.Helper()
	var hs *httptest.Server
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+hs.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	tb.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
