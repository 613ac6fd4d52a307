package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/internal/dockertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/sandbox"
)

// zero run --sandbox docker end to end: the command runs in the container,
// inside the provisioned venv, and its file lands in the workspace on the
// host; zero sandbox ls and rm manage the container.
func TestRunInDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["build"], "headline": "Building", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo built-by-agent > result.txt && python3 -c 'import sys; print(\"prefix=\" + sys.prefix)'"}}`},
		llmtest.Reply{Content: `{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "built"}}`},
	)
	ws, cfg := t.TempDir(), t.TempDir()
	// A workspace may not choose the image: the user's config does.
	mustWrite(t, cfg+"/zero/config.yaml", "sandbox:\n  backend: docker\n  image: "+image+"\n  network: none\n")
	zero := func(args ...string) (string, error) {
		cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_CONFIG_HOME=" + cfg}, args...)
		cmd.Env = append(cmd.Env, "ZERO_SANDBOX=") // the user's config decides
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	t.Cleanup(func() { _, _ = zero("sandbox", "rm", "--workspace", ws) })

	out, err := zero("run", "--json", "--workspace", ws, "build it")
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(ws + "/result.txt"); err != nil || strings.TrimSpace(string(b)) != "built-by-agent" {
		t.Errorf("the agent's file on the host: %q, %v", b, err)
	}
	if !strings.Contains(out, "prefix=/opt/venv") {
		t.Errorf("commands should run in the provisioned venv:\n%s", out)
	}
	out, err = zero("sandbox", "ls", "--workspace", ws)
	if err != nil || !strings.Contains(out, ws) {
		t.Errorf("zero sandbox ls should list this workspace's container: %v\n%s", err, out)
	}
	out, err = zero("sandbox", "rm", "--workspace", ws)
	if err != nil || !strings.Contains(out, "removed") {
		t.Errorf("zero sandbox rm: %v\n%s", err, out)
	}
}

func TestDoctorDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	srv := llmtest.NewServer(t)
	cmd := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "ZERO_SANDBOX=docker", "ZERO_SANDBOX_IMAGE=" + image}, "doctor", "--workspace", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sandbox: docker backend: the engine answers; image "+image+" is present") {
		t.Errorf("zero doctor with an engine: %v\n%s", err, out)
	}
	cmd = zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "ZERO_SANDBOX=docker", "DOCKER_HOST=unix:///nonexistent.sock"}, "doctor", "--workspace", t.TempDir())
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "✗ sandbox") || !strings.Contains(string(out), "DOCKER_HOST") {
		t.Errorf("zero doctor without an engine should fail naming DOCKER_HOST: %v\n%s", err, out)
	}
}

// A profile's sandbox.user runs its commands as that user; the others run
// as the workspace's owner.
func TestProfileSandboxUser(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["who"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo A0-uid=$(id -u)"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ask"], "tool_name": "call_subordinate", "tool_args": {"message": "who are you", "profile": "admin"}}`},
		llmtest.Reply{Content: `{"thoughts": ["who"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo A1-uid=$(id -u)"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "admin done"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done"}}`},
	)
	ws, cfg := t.TempDir(), t.TempDir()
	// The user's own profile may run as root; a workspace's may not (see
	// TestSpecMerge in profiles).
	mustWrite(t, cfg+"/zero/config.yaml", "sandbox:\n  backend: docker\n  image: "+image+"\n  network: none\n")
	mustWrite(t, cfg+"/zero/agents/admin/agent.yaml", "title: Admin\ncontext: needs root\nsandbox:\n  user: root\n")
	if err := os.Chown(ws, 1000, 1000); err != nil {
		// Only root can give the workspace another owner; CI runs as root.
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
			t.Fatal("chown the workspace:", err)
		}
		t.Skip("cannot chown the workspace (not root):", err)
	}
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_CONFIG_HOME=" + cfg}, "run", "--json", "--workspace", ws, "who runs")
	cmd.Env = append(cmd.Env, "ZERO_SANDBOX=")
	t.Cleanup(func() {
		c := zeroCmd(t, []string{"XDG_CONFIG_HOME=" + cfg}, "sandbox", "rm", "--workspace", ws)
		c.Env = append(c.Env, "ZERO_SANDBOX=")
		_ = c.Run()
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "A0-uid=1000") || !strings.Contains(string(out), "A1-uid=0") {
		t.Errorf("agent0 should run as the workspace owner and the admin profile as root:\n%s", out)
	}
}

// zero acp with the Docker sandbox: the session's command runs in the
// container without asking (the default policy trusts the container), and
// its live output reaches the editor before the answer.
func TestACPInDocker(t *testing.T) {
	t.Parallel()
	image := dockertest.Image(t)
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["look"], "headline": "Looking around", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "test -f /.dockerenv && echo in-a-container-$((6*7))"}}`},
		llmtest.Reply{Content: `{"thoughts": ["done"], "tool_name": "response", "tool_args": {"text": "looked"}}`},
	)
	ws := t.TempDir()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(),
		"ZERO_SANDBOX=docker", "ZERO_SANDBOX_IMAGE=" + image}, "acp", "--workspace", ws)
	t.Cleanup(func() { _ = zeroCmd(t, nil, "sandbox", "rm", "--workspace", ws).Run() })
	c := attachACP(t, cmd)
	defer cmd.Wait()
	defer c.in.Close()
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s); err != nil || s.SessionID == "" {
		t.Fatalf("session/new: %v", err)
	}
	res := c.call("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "look around"}}})
	if !strings.Contains(string(res), "end_turn") {
		t.Fatalf("session/prompt = %s\nupdates:\n%s", res, c.updates())
	}
	updates := c.updates()
	out, answer := strings.Index(updates, "in-a-container-42"), strings.Index(updates, "looked")
	if out < 0 || answer < out {
		t.Errorf("want the container's output before the answer:\n%s", updates)
	}
	if strings.Contains(updates, "request_permission") {
		t.Errorf("the Docker sandbox should not ask:\n%s", updates)
	}
}

// TestSandboxDefaultsAgree: the defaults config compares a workspace's
// limits with are the ones the Docker sandbox applies.
func TestSandboxDefaultsAgree(t *testing.T) {
	if config.DefaultSandboxMemory != sandbox.DefaultDockerMemory || config.DefaultSandboxPids != sandbox.DefaultDockerPids {
		t.Fatalf("config's defaults (%d, %d) are not the sandbox's (%d, %d)", config.DefaultSandboxMemory, config.DefaultSandboxPids,
			sandbox.DefaultDockerMemory, sandbox.DefaultDockerPids)
	}
}
