package mcpclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/zeroagent/zero/mcpclient"
)

// A server that answers every method it does not know with {} (as the
// MCP conformance suite's do) is still sent initialize, first, and its
// tools are listed: Zero does not take the {} to server/discover for the
// stateless protocol.
func TestInitializeSentToALenientServer(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		methods = append(methods, req.Method)
		mu.Unlock()
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any = map[string]any{}
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "lenient", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "add_numbers", "inputSchema": map[string]any{"type": "object"}}}}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	p, errs := mcpclient.NewPool([]mcpclient.Server{{Name: "lenient", URL: srv.URL}}, mcpclient.Options{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	defer p.Close()
	tools, errs := p.List(ctx(t))
	if len(errs) != 0 || len(tools) != 1 || tools[0].Name != "add_numbers" {
		t.Fatalf("List = %+v, %v", tools, errs)
	}
	mu.Lock()
	defer mu.Unlock()
	i := slices.Index(methods, "initialize")
	if i < 0 || slices.Contains(methods[:i], "tools/list") || !slices.Contains(methods, "notifications/initialized") {
		t.Errorf("methods the server got: %q; want initialize before anything else and notifications/initialized", methods)
	}
}
