package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// TestSecretsNeverShow is issue 14's "a secret's value never appears in any
// event, log line, history message or model request across a run whose
// commands print it, split or whole": the model names the secret by its
// alias, the command gets the value, and its output, the events (--json),
// the log (debug), the stored session and every model request hold only
// §§secret(API_TOKEN).
func TestSecretsNeverShow(t *testing.T) {
	t.Parallel()
	const value = "zq-5ecret-8f3a61c9d2"
	srv := llmtest.NewServer(t,
		reply("SEC-1", "code_execution_tool", `{"runtime": "terminal", "code": "echo §§secret(API_TOKEN) > token.txt; cat token.txt; v=$(cat token.txt); printf '%s' \"${v:0:7}\"; sleep 0.3; printf '%s\\n' \"${v:7}\""}`),
		reply("code_execution_tool", "response", `{"text": "the token is §§secret(API_TOKEN)"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(home, "config", "zero", "secrets.env"), "# the deploy token\nAPI_TOKEN="+value+"\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local", "ZERO_APPROVAL=auto", "ZERO_LOG=debug"}
	cmd := zeroCmd(t, env, "run", "--json", "--workspace", ws, "SEC-1: use the deploy token")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("zero run: %v\n%s\n%s", err, out.String(), errb.String())
	}
	// The command got the value.
	if got, _ := os.ReadFile(filepath.Join(ws, "token.txt")); strings.TrimSpace(string(got)) != value {
		t.Fatalf("the command did not get the secret: %q", got)
	}
	export, _ := zeroCmd(t, env, "sessions", "export", "--workspace", ws, sessionOf(t, out.String())).CombinedOutput()
	var requests strings.Builder
	for _, r := range append(srv.Requests(), srv.MemoryRequests()...) {
		requests.Write(r.Body)
	}
	for what, text := range map[string]string{"events": out.String(), "log": errb.String(), "stored session": string(export), "model requests": requests.String()} {
		if strings.Contains(text, value) || strings.Contains(text, "zq-5ecr") {
			t.Errorf("the secret shows in the %s", what)
		}
	}
	if !strings.Contains(out.String(), "§§secret(API_TOKEN)") {
		t.Errorf("the events do not show the alias:\n%s", out.String())
	}
	if !strings.Contains(requests.String(), "API_TOKEN") {
		t.Error("the model was not told the secret's name")
	}
}

// sessionOf is the session id of zero run --json's events.
func sessionOf(t *testing.T, events string) string {
	t.Helper()
	i := strings.Index(events, `"session":"`)
	if i < 0 {
		t.Fatalf("no session in the events:\n%s", events)
	}
	rest := events[i+len(`"session":"`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// TestWorkspaceSecretsNeedTrust: a workspace's .zero/secrets.env gives the
// agent nothing until the user trusted it (zero trust lists it).
func TestWorkspaceSecretsNeedTrust(t *testing.T) {
	t.Parallel()
	const value = "ws-5ecret-77aa11"
	cmd := `{"runtime": "terminal", "code": "echo §§secret(WS_TOKEN) > got.txt"}`
	srv := llmtest.NewServer(t,
		reply("WS-A", "code_execution_tool", cmd), reply("unknown secret alias", "response", `{"text": "refused"}`),
		reply("WS-B", "code_execution_tool", cmd), reply("WS-B", "response", `{"text": "used"}`),
	)
	home, ws := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(ws, ".zero", "secrets.env"), "WS_TOKEN="+value+"\n")
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "ZERO_SANDBOX=local", "ZERO_APPROVAL=auto"}
	run := func(msg string) string {
		t.Helper()
		out, err := zeroCmd(t, env, "run", "--workspace", ws, msg).CombinedOutput()
		if err != nil {
			t.Fatalf("zero run: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run("WS-A: use the token"); !strings.Contains(out, "refused") {
		t.Fatalf("an untrusted workspace's secret was usable:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "got.txt")); err == nil {
		t.Fatal("the command ran with an untrusted workspace's secret")
	}
	if out, err := zeroCmd(t, env, "trust", "--yes", "--workspace", ws).CombinedOutput(); err != nil || !strings.Contains(string(out), ".zero/secrets.env") {
		t.Fatalf("zero trust does not list .zero/secrets.env: %v\n%s", err, out)
	}
	if out := run("WS-B: use the token"); !strings.Contains(out, "used") || strings.Contains(out, value) {
		t.Fatalf("after the trust:\n%s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "got.txt")); strings.TrimSpace(string(got)) != value {
		t.Errorf("the command did not get the trusted workspace's secret: %q", got)
	}
}
