package app

import (
	"context"
	"fmt"
	neturl "net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeroagent/zero/mcpauth"
	"github.com/zeroagent/zero/mcpclient"
)

// The OAuth logins to MCP URL servers (mcpauth) live in the user's config
// folder, mcp-auth/, one file per server: never in a workspace, whose
// .mcp.json naming a server like the user's at another URL finds none.

// mcpAuths are the process's Auths, one per token folder, so that every
// session (and doctor) shares one refresh of a token.
var (
	mcpAuthsMu sync.Mutex
	mcpAuths   = map[string]*mcpauth.Auth{}
)

func (a *App) mcpAuthDir() string { return filepath.Join(a.UserDir, "mcp-auth") }

// mcpAuth is what a session's pool wraps its URL servers' requests with
// (Options.HTTPTransport): it sends the stored tokens and renews them; a
// server that needs the person fails with *mcpauth.LoginRequired, which
// names `zero mcp login`. It never opens a browser.
func (a *App) mcpAuth() *mcpauth.Auth {
	dir := a.mcpAuthDir()
	mcpAuthsMu.Lock()
	defer mcpAuthsMu.Unlock()
	if au := mcpAuths[dir]; au != nil {
		return au
	}
	au := mcpauth.New(mcpauth.Options{Dir: dir, Logger: a.Logger.With("component", "mcpauth")})
	mcpAuths[dir] = au
	return au
}

// mcpLoginWait bounds a login: the person finds the page, logs in, agrees.
const mcpLoginWait = 10 * time.Minute

// MCPServer is the MCP server named name (as configured, or as a session
// names it) among the user's config.yaml servers, then a trusted
// workspace's .mcp.json: as a session's pool would start it.
func (a *App) MCPServer(name string) (mcpclient.Server, error) {
	code, _ := a.workspaceCode()
	var servers []mcpclient.Server
	for _, n := range a.Config.MCPServerNames() {
		s := a.Config.MCPServers[n]
		s.Name = n
		servers = append(servers, s)
	}
	servers = append(servers, a.WorkspaceMCP(code)...)
	for _, s := range servers {
		if mcpclient.Normalize(s.Name) == mcpclient.Normalize(name) {
			if s.URL == "" {
				return s, fmt.Errorf("the MCP server %s is started on stdio (command %s): it needs no login", s.Name, s.Command)
			}
			return s, nil
		}
	}
	return mcpclient.Server{}, fmt.Errorf("no MCP server %s in mcp_servers of %s, nor in a trusted workspace's .mcp.json (for a server your editor gives Zero, name its address too: --url URL)", name, filepath.Join(a.UserDir, "config.yaml"))
}

// mcpServerAt is the server named name: at url when one is given (a
// server an editor passes a session, which no file of Zero's names), else
// as MCPServer finds it.
func (a *App) mcpServerAt(name, url string) (mcpclient.Server, error) {
	if url == "" {
		return a.MCPServer(name)
	}
	if u, err := neturl.Parse(url); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return mcpclient.Server{}, fmt.Errorf("--url %q: an MCP server's address is an http or https URL", url)
	}
	return mcpclient.Server{Name: name, URL: url}, nil
}

// MCPLogin logs in to the MCP URL server named name: it connects to the
// server as a session does, and when the server asks for a login, open
// shows the person the authorization page (a browser) and Zero waits for
// its redirect; the tokens are kept for the sessions. scopes are asked
// for beside those the server names; url, when given, is the address of
// a server no file names (an editor's). It reports false (and no error) for
// a server that asks for no login.
func (a *App) MCPLogin(ctx context.Context, name, url string, scopes []string, open func(context.Context, string) error) (bool, error) {
	srv, err := a.mcpServerAt(name, url)
	if err != nil {
		return false, err
	}
	au := mcpauth.New(mcpauth.Options{Dir: a.mcpAuthDir(), Open: open, Logger: a.Logger.With("component", "mcpauth")})
	return au.Login(ctx, srv, scopes, func(ctx context.Context) error {
		// The session's own code path: a pool of that one server whose
		// requests go through the Auth that may ask the person.
		p, errs := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{
			InitTimeout: mcpLoginWait, Logger: a.Logger.With("component", "mcp"), Version: Version, HTTPTransport: au.Transport})
		if len(errs) > 0 {
			return errs[0]
		}
		defer p.Close()
		_, errs = p.List(ctx)
		if len(errs) > 0 {
			return errs[0]
		}
		return nil
	})
}

// MCPLogout forgets the login to the MCP URL server named name (at url,
// when given).
func (a *App) MCPLogout(name, url string) error {
	srv, err := a.mcpServerAt(name, url)
	if err != nil {
		return err
	}
	return a.mcpAuth().Logout(srv)
}
