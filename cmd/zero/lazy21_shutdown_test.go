package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/store"
)

// slowMCPServer is a stdio MCP server that answers initialize and
// tools/list (other requests get "method not found"), then, once its stdin closes, takes 3 s to exit, ignoring
// SIGTERM meanwhile (as a server flushing its state would).
const slowMCPServer = `trap '' TERM
while IFS= read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	case "$line" in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}\n' "$id";;
	*'"method":"tools/list"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"ping","description":"answers pong","inputSchema":{"type":"object"}}]}}\n' "$id";;
	*'"method":"notifications/'*) ;;
	*)
		[ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id";;
	esac
done
sleep 3
`

// zero run with an MCP server that is slow to exit stops the server first,
// waiting for it, and closes the session store last: no warning that the
// store closes without the last events, and they are in it.
func TestRunWaitsForASlowMCPServerBeforeClosingTheStore(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "hello"}}`},
	)
	cfg := t.TempDir()
	script := filepath.Join(cfg, "slow-mcp.sh")
	mustWrite(t, script, slowMCPServer)
	mustWrite(t, filepath.Join(cfg, "zero", "config.yaml"), "mcp_servers:\n  slow:\n    command: /bin/sh\n    args: ["+script+"]\n")
	db := filepath.Join(t.TempDir(), "sessions.db")
	ws := t.TempDir()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "XDG_CONFIG_HOME=" + cfg, "ZERO_STORE=" + db},
		"run", "--json", "--workspace", ws, "say hello")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zero run: %v\nstderr:\n%s", err, stderr.String())
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !reqs[0].Teaches("slow.ping") {
		t.Fatalf("the MCP server's tool is not in the prompt: the server did not start\nstderr:\n%s", stderr.String())
	}
	for _, bad := range []string{"closes without their last events", "did not end in time"} {
		if strings.Contains(stderr.String(), bad) {
			t.Errorf("zero run warned %q:\n%s", bad, stderr.String())
		}
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.Sessions(store.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("stored sessions = %v, %v; want one", list, err)
	}
	evs, err := st.Events(list[0].ID, 0, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events = %v, %v", evs, err)
	}
	// The run's end is stored, and after it only the usage of what the
	// run left going (memorizing, with the utility model).
	last := len(evs) - 1
	for last > 0 && evs[last].Type == "usage" {
		last--
	}
	if evs[last].Type != "run_ended" {
		t.Errorf("the last stored event but usage is %s, want run_ended", evs[last].Type)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatal(err)
	}
}
