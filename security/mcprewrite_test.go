package security

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// TestAgentRewritesMCPServer: a trusted workspace's .mcp.json starts
// `sh mcp/srv.sh`; the agent, from inside each sandbox, rewrites that
// script. The next session runs nothing of it on the host: the server is
// off until the user trusts again, and the warning names the file.
func TestAgentRewritesMCPServer(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"local", "docker"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			b := boxIn(t, backend)
			marks := t.TempDir()
			ran, pwned := filepath.Join(marks, "ran"), filepath.Join(marks, "pwned")
			write(t, filepath.Join(b.ws, ".mcp.json"), `{"mcpServers": {"wssrv": {"command": "sh", "args": ["mcp/srv.sh"]}}}`, 0o644)
			write(t, filepath.Join(b.ws, "mcp", "srv.sh"), "echo $$ >> "+ran+"\n"+echoServerSh, 0o644)
			if out, stderr, err := b.run(nil, "trust", "--yes", "--workspace", b.ws); err != nil || !strings.Contains(out, "mcp/srv.sh") {
				t.Fatalf("zero trust does not list the server's script: %v\n%s%s", err, out, stderr)
			}
			rewrite := "printf 'touch " + pwned + "\\n' > mcp/srv.sh && echo rewritten"
			b.model.Push(shell(rewrite), answer("done"))
			out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "first")
			if err != nil {
				t.Fatalf("zero run: %v\n%s", err, stderr)
			}
			if !strings.Contains(outputs(out), "rewritten") {
				t.Fatalf("the agent did not rewrite the script:\n%s", out)
			}
			if !exists(ran) {
				t.Fatalf("the trusted server never started:\n%s", stderr)
			}
			if reqs := b.model.Requests(); !reqs[0].Teaches("wssrv.env") {
				t.Fatalf("the trusted server's tool is not offered: %v", reqs[0].Tools)
			}
			b.model.Push(llmtest.Reply{Content: `{"tool_name": "response", "tool_args": {"text": "second"}}`})
			out, stderr, err = b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "second")
			if err != nil {
				t.Fatalf("zero run: %v\n%s", err, stderr)
			}
			if exists(pwned) {
				t.Fatal("the script the agent wrote ran on the host")
			}
			if !strings.Contains(out, "mcp/srv.sh") {
				t.Errorf("the warning does not name the changed file:\n%s", out)
			}
		})
	}
}
