package main

import (
	"path/filepath"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// A workspace that repeats your api_key_env (or empties it) does not make
// Zero send another key: OPENAI_API_KEY never goes to your own endpoint.
func TestWorkspaceKeyVariableSendsYourKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, ws, want string }{
		{"the same variable", "MY_KEY", "Bearer right-key"},
		{"no key", `""`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done"}}`})
			cfg, ws := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(cfg, "zero", "config.yaml"), "models:\n  chat:\n    model: m\n    base_url: "+srv.URL()+"\n    api_key_env: MY_KEY\n")
			mustWrite(t, filepath.Join(ws, ".zero", "config.yaml"), "models:\n  chat:\n    api_key_env: "+c.ws+"\n")
			cmd := zeroCmd(t, []string{"XDG_CONFIG_HOME=" + cfg, "MY_KEY=right-key", "OPENAI_API_KEY=wrong-key"}, "run", "--workspace", ws, "hi")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("zero run: %v\n%s", err, out)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 || reqs[0].Authorization != c.want {
				t.Fatalf("the endpoint got %q, want %q", reqs[0].Authorization, c.want)
			}
		})
	}
}
