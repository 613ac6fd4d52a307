package mcpconf

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// A .mcp.json as Claude Code writes it, and the same servers in
// config.yaml's shape, are one type with the same fields.
func TestOneShapeForEveryFile(t *testing.T) {
	t.Parallel()
	var f File
	if err := json.Unmarshal([]byte(`{"mcpServers": {
		"web": {"type": "http", "url": "https://example.org/mcp", "headers": {"Authorization": "Bearer x"}},
		"git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"B": "2", "A": "1"}, "cwd": "/srv"}}}`), &f); err != nil {
		t.Fatal(err)
	}
	var y map[string]Server
	if err := yaml.Unmarshal([]byte(`
web: {type: http, url: "https://example.org/mcp", headers: {Authorization: Bearer x}}
git: {command: uvx, args: [mcp-server-git], env: {B: "2", A: "1"}, cwd: /srv}
`), &y); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f.MCPServers, y); d != "" {
		t.Errorf(".mcp.json and config.yaml read otherwise (-json +yaml):\n%s", d)
	}
	got := f.Servers()
	if names := []string{got[0].Name, got[1].Name}; !slices.Equal(names, []string{"git", "web"}) {
		t.Errorf("Servers() = %q, want git then web, named", names)
	}
	if env := got[0].EnvList(); !slices.Equal(env, []string{"A=1", "B=2"}) {
		t.Errorf("EnvList = %q", env)
	}
}

func TestLoginHint(t *testing.T) {
	if name, ok := LoginHinted("x: the MCP server gh needs a login: " + LoginHint("gh") + " (more)"); !ok || name != "gh" {
		t.Errorf("LoginHinted = %q, %v", name, ok)
	}
	for _, text := range []string{"run `zero mcp login`", "run `zero mcp login a b`", "run `zero mcp login --evil`", "nothing"} {
		if name, ok := LoginHinted(text); ok {
			t.Errorf("LoginHinted(%q) = %q", text, name)
		}
	}
}
