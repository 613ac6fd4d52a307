package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/zeroagent/zero/mcpclient"
)

// workspaceMCP reads the MCP servers of a trusted workspace's .mcp.json
// (Claude Code's and Cursor's file: {"mcpServers": {name: {command, args,
// env} or {type: "http", url, headers}}}), from code, the copy of what the
// user trusted (see workspaceCode); none when the workspace is not trusted.
func (a *app) workspaceMCP(code string) []mcpclient.Server {
	if code == "" {
		return nil
	}
	raw := readSmall(filepath.Join(code, ".mcp.json"), 1<<20)
	if raw == "" {
		return nil
	}
	var f struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		a.warn.warn(fmt.Sprintf("%s: %v; its MCP servers are not started", filepath.Join(a.ws, ".mcp.json"), err))
		return nil
	}
	var out []mcpclient.Server
	for _, name := range slices.Sorted(maps.Keys(f.MCPServers)) {
		c := f.MCPServers[name]
		out = append(out, mcpclient.Server{Name: name, Command: c.Command, Args: c.Args, Env: envList(c.Env), URL: c.URL, Headers: c.Headers, Dir: a.ws})
	}
	return out
}
