package trust

import (
	"encoding/json"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/mcpconf"
)

// MCPFile is the workspace's MCP server list (Claude Code's and Cursor's
// .mcp.json): its stdio servers are programs started on this machine.
const MCPFile = ".mcp.json"

// KindMCP is a workspace file that an MCP server of .mcp.json runs or
// reads: its script, module or folder.
const KindMCP = "mcp"

// mcpPaths lists the workspace files and folders (slash-separated,
// relative to workspace) that the stdio servers of an .mcp.json name: a
// command with a path separator in it (a bare name is looked up in PATH,
// never in the workspace), every argument and the value of every
// --flag=value argument, and for python's "-m pkg.mod" the package's top
// folder and pkg.py. A relative name counts from the workspace, where
// Claude Code starts these servers; an absolute one counts when it lies in
// the workspace. Names that leave the workspace, and the workspace itself
// ("."), are left out: the first is not the workspace's to trust, and the
// second would make the whole tree code. A name that is not there is
// skipped by the scan. A file that does not parse names nothing (the
// caller reports it when it reads the servers).
func mcpPaths(data []byte, workspace string) []string {
	var f mcpconf.File
	if json.Unmarshal(data, &f) != nil {
		return nil
	}
	var out []string
	add := func(name string) {
		if name == "" || strings.ContainsRune(name, 0) {
			return
		}
		if filepath.IsAbs(name) {
			rel, err := filepath.Rel(workspace, name)
			if err != nil {
				return
			}
			name = rel
		}
		rel := path.Clean(filepath.ToSlash(name))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
			return
		}
		out = append(out, rel)
	}
	for _, s := range f.MCPServers {
		if s.Command == "" {
			continue // a remote server: nothing runs here
		}
		if strings.ContainsAny(s.Command, `/\`) {
			add(s.Command)
		}
		for i, a := range s.Args {
			switch {
			case i > 0 && s.Args[i-1] == "-m":
				top, _, _ := strings.Cut(a, ".")
				add(top)
				add(top + ".py")
			case strings.HasPrefix(a, "-"):
				if _, v, ok := strings.Cut(a, "="); ok {
					add(v)
				}
			default:
				add(a)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
