// Package mcpconf is an MCP server as configurations name one, in the
// shape Claude Desktop's, Cursor's and Claude Code's have: a command
// started on stdio, or a URL spoken to over streamable HTTP. Zero's
// config.yaml (mcp_servers), a workspace's .mcp.json, the servers an
// editor gives a session and the client that starts them share this one
// type; nothing of ours is below it.
package mcpconf

import (
	"maps"
	"regexp"
	"slices"
	"strings"
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
	Dir     string            `json:"cwd,omitempty" yaml:"cwd"`
	URL     string            `json:"url,omitempty" yaml:"url"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers"`
	// OAuth configures the login to a URL server behind OAuth; nil
	// discovers everything from the server's 401 (dynamic registration or
	// a client ID metadata document, the authorization code grant).
	OAuth    *OAuth `json:"oauth,omitempty" yaml:"oauth"`
	Disabled bool   `json:"disabled,omitempty" yaml:"disabled"`
	// Tools filter the server's tools by name.
	Tools Tools `json:"tools,omitzero" yaml:"tools"`
	// Origin is where it was configured ("user <path>:<line>"), for people.
	Origin string `json:"-" yaml:"-"`
}

// OAuth is a URL server's OAuth client, for authorization servers that do
// not register clients themselves, or a machine-to-machine grant.
type OAuth struct {
	// Grant is "authorization_code" (the default: the user logs in through
	// the browser, `zero mcp login NAME`) or "client_credentials" (no user:
	// the client's own secret or key).
	Grant string `json:"grant,omitempty" yaml:"grant"`
	// ClientID is a client registered with the authorization server by
	// hand; empty registers one (dynamic client registration) or uses
	// ClientMetadataURL.
	ClientID     string `json:"client_id,omitempty" yaml:"client_id"`
	ClientSecret string `json:"client_secret,omitempty" yaml:"client_secret"`
	// PrivateKey is a PEM private key (or the path of a PEM file) that
	// signs the client's assertions (private_key_jwt) instead of a secret;
	// SigningAlg is its algorithm (RS256, ES256…; empty picks from the key
	// and what the server supports).
	PrivateKey string `json:"private_key,omitempty" yaml:"private_key"`
	SigningAlg string `json:"signing_alg,omitempty" yaml:"signing_alg"`
	// Scopes are asked for beyond those the server's challenge names.
	Scopes []string `json:"scopes,omitempty" yaml:"scopes"`
	// ClientMetadataURL is the https URL of a client ID metadata document
	// to be known by, where the authorization server accepts them.
	ClientMetadataURL string `json:"client_metadata_url,omitempty" yaml:"client_metadata_url"`
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

// Normalize makes a configured server name usable in tool names: lower
// case, anything but letters, digits, _ and - replaced by _, at most 64
// bytes (Agent Zero normalizes them too). Normalizing a normalized name
// changes nothing, so a configured name and a session's find the same
// server (and the same login).
func Normalize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// LoginHint tells the person how to log in to the server named name
// (`zero mcp login`): the one wording, which the faces find in a warning
// (LoginHinted) to offer the login their own way.
func LoginHint(name string) string { return "run `zero mcp login " + name + "`" }

// loginHint matches a LoginHint of a name that cannot read as a flag.
var loginHint = regexp.MustCompile("run `zero mcp login ([A-Za-z0-9_][A-Za-z0-9_-]{0,63})`")

// LoginHinted finds a LoginHint in text: the server's name, and whether
// there is one.
func LoginHinted(text string) (name string, ok bool) {
	m := loginHint.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}
