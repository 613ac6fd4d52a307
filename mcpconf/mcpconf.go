// Package mcpconf is an MCP server as configurations name one, in the
// shape Claude Desktop's, Cursor's and Claude Code's have: a command
// started on stdio, or a URL spoken to over streamable HTTP. Zero's
// config.yaml (mcp_servers), a workspace's .mcp.json, the servers an
// editor gives a session and the client that starts them share this one
// type; nothing of ours is below it.
package mcpconf

import (
	"maps"
	"slices"
)

// Server is one MCP server: Command (with Args, Env, Dir) for stdio, or
// URL (with Headers) for streamable HTTP.
type Server struct {
	// Name is the key the server is listed under (its tools are
	// name.tool); the files give it as the key, not in the entry.
	Name string `json:"-" yaml:"-"`
	// Type is what .mcp.json may say ("stdio", "http"); Command or URL is
	// what decides.
	Type    string            `json:"type,omitempty" yaml:"type"`
	Command string            `json:"command,omitempty" yaml:"command"`
	Args    []string          `json:"args,omitempty" yaml:"args"`
	Env     map[string]string `json:"env,omitempty" yaml:"env"`
	// Dir is the working directory of a stdio server (cwd); empty is
	// Zero's choice, never the workspace.
	Dir      string            `json:"cwd,omitempty" yaml:"cwd"`
	URL      string            `json:"url,omitempty" yaml:"url"`
	Headers  map[string]string `json:"headers,omitempty" yaml:"headers"`
	Disabled bool              `json:"disabled,omitempty" yaml:"disabled"`
	// Tools filter the server's tools by name.
	Tools Tools `json:"tools,omitzero" yaml:"tools"`
	// Origin is where it was configured ("user <path>:<line>"), for people.
	Origin string `json:"-" yaml:"-"`
}

// Tools filter a server's tools by name (path.Match patterns): an empty
// Allow allows all, Deny takes away.
type Tools struct {
	Allow []string `json:"allow,omitempty" yaml:"allow"`
	Deny  []string `json:"deny,omitempty" yaml:"deny"`
}

// EnvList is Env as KEY=VALUE entries, sorted by key.
func (s Server) EnvList() []string {
	out := make([]string, 0, len(s.Env))
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, k+"="+s.Env[k])
	}
	return out
}

// File is a .mcp.json (Claude Code's and Cursor's file):
// {"mcpServers": {name: {command, args, env} or {type: "http", url, headers}}}.
type File struct {
	MCPServers map[string]Server `json:"mcpServers"`
}

// Servers are the file's servers with their names, sorted by name.
func (f File) Servers() []Server {
	out := make([]Server, 0, len(f.MCPServers))
	for _, name := range slices.Sorted(maps.Keys(f.MCPServers)) {
		s := f.MCPServers[name]
		s.Name = name
		out = append(out, s)
	}
	return out
}
