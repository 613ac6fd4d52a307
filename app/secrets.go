package app

import (
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/secrets"
)

// LogSecrets are the values every log line of this process is masked
// with: the user's secrets.env and Zero's own keys (see newLogger).
var LogSecrets atomic.Pointer[secrets.Set]

// Secrets are the secrets of the app's agents: the user's
// ~/.config/zero/secrets.env and, once the workspace is trusted, its
// .zero/secrets.env (from the copy of what was trusted). The model sees only their names; §§secret(NAME) in a
// tool's arguments becomes the value just before the tool runs, and every
// value is masked wherever it would show. Zero's own keys (the model keys,
// ZERO_MCP_TOKEN) are masked too, and never given to the agent.
func (a *App) Secrets() *secrets.Set {
	a.mu.Lock()
	if a.secretSet != nil {
		defer a.mu.Unlock()
		return a.secretSet
	}
	a.mu.Unlock()
	files := []string{filepath.Join(a.UserDir, "secrets.env")}
	code, _ := a.workspaceCode()
	if code != "" { // exactly what the user trusted
		files = append(files, filepath.Join(code, ".zero", "secrets.env"))
	}
	set, errs := secrets.Load(files...)
	for _, name := range append(keyVariables(a.Config, a.Loader), "OPENAI_API_KEY", "ZERO_MCP_TOKEN") {
		set = set.With(name, a.env.Get(name))
	}
	set = withMCPCredentials(set, append(a.configMCP(), a.WorkspaceMCP(code)...))
	LogSecrets.Store(set) // the process's log lines are masked with them too
	for _, err := range errs {
		a.Warn.warn(err.Error())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.secretSet == nil {
		a.secretSet = set
	}
	return a.secretSet
}

// withMCPCredentials adds every value Zero hands an MCP server, as an env
// value or a header, to set, masked only (never given to the agent): from
// whichever source the server came (the user's config.yaml, a trusted
// workspace's .mcp.json, the editor's mcpServers), whatever the variable or
// header is called, since a server may echo what it was given. An
// Authorization header's token is masked alone too ("Bearer <token>").
// Values shorter than secrets.MinMasked are too short to mask.
func withMCPCredentials(set *secrets.Set, servers []mcpclient.Server) *secrets.Set {
	for _, srv := range servers {
		for k, v := range srv.Env {
			set = set.With("MCP_"+srv.Name+"_"+k, v)
		}
		for k, v := range srv.Headers {
			if scheme, token, ok := strings.Cut(v, " "); ok && strings.EqualFold(k, "authorization") && scheme != "" {
				set = set.With("MCP_"+srv.Name+"_TOKEN", token) // the token alone
			}
			set = set.With("MCP_"+srv.Name+"_"+k, v)
		}
		if o := srv.OAuth; o != nil {
			set = set.With("MCP_"+srv.Name+"_CLIENT_SECRET", o.ClientSecret)
			if strings.Contains(o.PrivateKey, "PRIVATE KEY") { // the key itself, not a file's path
				set = set.With("MCP_"+srv.Name+"_PRIVATE_KEY", o.PrivateKey)
			}
		}
	}
	return set
}

// AddMCPCredentials masks, from now on, the credentials of servers an
// editor passed for a session (see withMCPCredentials), in the agents'
// secrets and in this process's logs.
func (a *App) AddMCPCredentials(servers []mcpclient.Server) {
	a.Secrets() // loaded first
	a.mu.Lock()
	a.secretSet = withMCPCredentials(a.secretSet, servers)
	set := a.secretSet
	a.mu.Unlock()
	LogSecrets.Store(set)
}
