package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/secrets"
)

// logSecrets are the values every log line of this process is masked
// with: the user's secrets.env and Zero's own keys (see newLogger).
var logSecrets atomic.Pointer[secrets.Set]

// secrets are the secrets of the app's agents: the user's
// ~/.config/zero/secrets.env and, once the workspace is trusted, its
// .zero/secrets.env (from the copy of what was trusted). The model sees only their names; §§secret(NAME) in a
// tool's arguments becomes the value just before the tool runs, and every
// value is masked wherever it would show. Zero's own keys (the model keys,
// ZERO_MCP_TOKEN) are masked too, and never given to the agent.
func (a *app) secrets() *secrets.Set {
	a.mu.Lock()
	if a.secretSet != nil {
		defer a.mu.Unlock()
		return a.secretSet
	}
	a.mu.Unlock()
	files := []string{filepath.Join(a.userDir, "secrets.env")}
	if code, _ := a.workspaceCode(); code != "" { // exactly what the user trusted
		files = append(files, filepath.Join(code, ".zero", "secrets.env"))
	}
	set, errs := secrets.Load(files...)
	for _, name := range append(keyVariables(a.cfg, a.loader), "OPENAI_API_KEY", "ZERO_MCP_TOKEN") {
		set = set.With(name, os.Getenv(name))
	}
	set = withMCPCredentials(set, a.cfg.MCPServers)
	logSecrets.Store(set) // the process's log lines are masked with them too
	for _, err := range errs {
		a.warn.warn(err.Error())
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.secretSet == nil {
		a.secretSet = set
	}
	return a.secretSet
}

// withMCPCredentials adds the credentials among the configured MCP
// servers' env and headers to set, masked only (never given to the agent):
// an Authorization header's token, and the values of variables whose names
// say they hold one (…TOKEN…, …KEY…, …SECRET…, …PASSWORD…). Other values
// (a log level, a URL) would mask ordinary words wherever they appear.
func withMCPCredentials(set *secrets.Set, servers map[string]config.MCPServer) *secrets.Set {
	for name, srv := range servers {
		for k, v := range srv.Env {
			if credentialName(k) {
				set = set.With("MCP_"+name+"_"+k, v)
			}
		}
		for k, v := range srv.Headers {
			if strings.EqualFold(k, "authorization") {
				if _, token, ok := strings.Cut(v, " "); ok {
					set = set.With("MCP_"+name+"_TOKEN", token) // "Bearer <token>": the token alone
				}
				set = set.With("MCP_"+name+"_"+k, v)
			} else if credentialName(k) {
				set = set.With("MCP_"+name+"_"+k, v)
			}
		}
	}
	return set
}

// credentialName reports whether a variable or header name says it holds a
// credential.
func credentialName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASS", "AUTH", "CREDENTIAL"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
