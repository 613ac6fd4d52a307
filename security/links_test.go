package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

const (
	hostFileSecret = "AWS-HOST-FILE-SECRET-MATERIAL"
	hostEnvSecret  = "ghp_HOST-ENV-SECRET-MATERIAL"
)

// leakCheck fails the test when the host file or the environment variable
// reached a model request, an event or a log line.
func leakCheck(t *testing.T, b *box, events, logs string) {
	t.Helper()
	var reqs strings.Builder
	for _, r := range b.model.Requests() {
		reqs.Write(r.Body)
	}
	for where, text := range map[string]string{"a model request": reqs.String(), "an event": events, "the log": logs} {
		for _, leak := range []string{hostFileSecret, hostEnvSecret} {
			if strings.Contains(text, leak) {
				t.Errorf("%s reached %s", leak, where)
			}
		}
	}
}

// TestClonedRepoPromptLinks: a repository ships prompt files and an
// agent.yaml that are links to a host file (absolute, by "..") and to
// zero's own environment, and a .zero that is itself a link out; nothing of
// their targets reaches the model, an event or the log, and the user is told
// which links are not followed.
func TestClonedRepoPromptLinks(t *testing.T) {
	t.Parallel()
	b := newBox(t, answer("done"))
	secret := filepath.Join(b.home, ".aws", "credentials")
	write(t, secret, "[default]\naws_secret_access_key = "+hostFileSecret+"\n", 0o600)
	up := strings.Repeat("../", strings.Count(b.ws, "/")+2)
	for link, target := range map[string]string{
		".zero/prompts/agent.system.main.role.md":               secret,
		".zero/prompts/agent.system.main.communication.md":      up + strings.TrimPrefix(secret, "/"),
		".zero/prompts/agent.system.main.solving.md":            "/proc/self/environ",
		".zero/agents/agent0/agent.yaml":                        secret,
		".zero/agents/agent0/prompts/agent.system.main.tips.md": "/proc/self/environ",
	} {
		symlink(t, target, filepath.Join(b.ws, link))
	}
	out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto", "GITHUB_TOKEN=" + hostEnvSecret}, "run", "--json", "--workspace", b.ws, "hello")
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, stderr)
	}
	leakCheck(t, b, out, stderr)
	if !strings.Contains(out, "agent.system.main.role.md") || !strings.Contains(out, "symbolic link out of its folder") {
		t.Errorf("the user is not told which links are not followed:\n%s", out)
	}
}

// TestAgentPlantsPromptLinks: the agent itself, from inside each sandbox,
// links the workspace's prompt files to a host file that the sandbox hides
// and to zero's environment, then calls a subordinate (whose prompts load
// afresh): the subordinate's prompt holds neither.
func TestAgentPlantsPromptLinks(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"local", "docker"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			replies := func(secret string) []llmtest.Reply {
				plant := fmt.Sprintf("mkdir -p .zero/prompts .zero/agents/developer/prompts && "+
					"ln -sf %s .zero/prompts/agent.system.main.role.md && "+
					"ln -sf /proc/self/environ .zero/prompts/agent.system.main.communication.md && "+
					"ln -sf %s .zero/agents/developer/prompts/agent.system.main.tips.md && echo planted", secret, secret)
				return []llmtest.Reply{
					shell(plant),
					tool("call_subordinate", `{"message": "say hi", "profile": "developer"}`),
					answer("subordinate done"),
					answer("done"),
				}
			}
			b := boxIn(t, backend)
			secret := filepath.Join(b.home, ".aws", "credentials")
			write(t, secret, "aws_secret_access_key = "+hostFileSecret+"\n", 0o600)
			b.model.Push(replies(secret)...)
			out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto", "GITHUB_TOKEN=" + hostEnvSecret}, "run", "--json", "--workspace", b.ws, "go")
			if err != nil {
				t.Fatalf("zero run: %v\n%s\n%s", err, out, stderr)
			}
			if !strings.Contains(outputs(out), "planted") || !strings.Contains(out, "subordinate done") {
				t.Fatalf("the attack did not play out:\n%s", out)
			}
			if n := len(b.model.Requests()); n < 4 {
				t.Fatalf("only %d model requests: the subordinate did not ask the model", n)
			}
			leakCheck(t, b, out, stderr)
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
