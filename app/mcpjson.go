package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/mcpconf"
)

// WorkspaceMCP reads the MCP servers of a trusted workspace's .mcp.json
// (Claude Code's and Cursor's file: {"mcpServers": {name: {command, args,
// env} or {type: "http", url, headers}}}), from code, the copy of what the
// user trusted (see workspaceCode); none when the workspace is not trusted.
func (a *App) WorkspaceMCP(code string) []mcpclient.Server {
	if code == "" {
		return nil
	}
	raw := readSmall(filepath.Join(code, ".mcp.json"), 1<<20)
	if raw == "" {
		return nil
	}
	var f mcpconf.File
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		a.Warn.warn(fmt.Sprintf("%s: %v; its MCP servers are not started", filepath.Join(a.Workspace, ".mcp.json"), err))
		return nil
	}
	var out []mcpclient.Server
	for _, c := range f.Servers() {
		s := mcpclient.Server{Name: c.Name, URL: c.URL, Headers: c.Headers, Env: c.Env}
		if c.URL != "" && c.OAuth != nil {
			// A workspace may name its server's public client and the scopes
			// it wants; never a secret or a key (Zero would sign with a key
			// file of the user's that the workspace names), nor another grant.
			s.OAuth = &mcpconf.OAuth{ClientID: c.OAuth.ClientID, Scopes: c.OAuth.Scopes, ClientMetadataURL: c.OAuth.ClientMetadataURL}
		}
		if c.Command != "" {
			// A stdio server runs from the snapshot: its working directory is
			// the copy of what the user trusted (laid out like the
			// workspace, holding the files the server names: trust.Scan),
			// so a relative script or module is the trusted copy, and an
			// absolute path into the workspace is pointed at the copy too.
			// Nothing the agent writes into the workspace afterwards runs.
			s.Command, s.Dir = inSnapshot(c.Command, a.Workspace, code), code
			for _, arg := range c.Args {
				s.Args = append(s.Args, inSnapshot(arg, a.Workspace, code))
			}
		}
		out = append(out, s)
	}
	return out
}

// inSnapshot points an absolute path into the workspace ws (alone, or as
// the value of a --flag=value) at the same path in the snapshot code.
func inSnapshot(arg, ws, code string) string {
	flag, value, isFlag := strings.Cut(arg, "=")
	if !isFlag || !strings.HasPrefix(arg, "-") {
		flag, value = "", arg
	}
	rel, err := filepath.Rel(ws, value)
	if !filepath.IsAbs(value) || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return arg
	}
	p := filepath.Join(code, rel)
	if flag != "" {
		return flag + "=" + p
	}
	return p
}
