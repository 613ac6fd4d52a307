package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/zeroagent/zero/app"
)

const mcpLoginUsage = `  zero mcp login [--scope S]... [--url URL] [--workspace DIR] NAME
  zero mcp logout [--url URL] [--workspace DIR] NAME`

const mcpLoginAbout = `Logs in to an MCP server behind OAuth (a url server of mcp_servers in your config.yaml, or of a
trusted workspace's .mcp.json; with --url, a server your editor gives Zero), or forgets the login. login connects to the server as a session does;
when it asks for a login, the authorization page opens in your browser ($BROWSER, else xdg-open or
open; the page's address is printed too) and Zero waits for its answer on 127.0.0.1. The tokens are
kept in your config folder (mcp-auth/, readable by you only) and refreshed by the sessions; a session
that finds a server needing a login (or more access) says to run this. Everything is said on stderr.`

const mcpLoginExamples = `  zero mcp login github
  zero mcp login --scope repo --scope read:org github
  zero mcp logout github`

// isMCPAuth reports whether args (from the command on) are `zero mcp
// login` or `zero mcp logout`, which have help of their own.
func isMCPAuth(args []string) bool {
	return len(args) > 1 && args[0] == "mcp" && (args[1] == "login" || args[1] == "logout")
}

// mcpAuthCommand is `zero mcp login|logout NAME`.
func mcpAuthCommand(ctx context.Context, sub string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero mcp "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "the workspace whose trusted .mcp.json may name the server (default: the current directory)")
	addr := fs.String("url", "", "the server's address, for a server no config names (one your editor passes Zero)")
	var scopes []string
	if sub == "login" {
		fs.Func("scope", "a scope to ask for beside those the server names (repeat for more)", func(s string) error {
			scopes = append(scopes, strings.Fields(s)...)
			return nil
		})
	}
	helpOutput(fs, args, stdout)
	fs.Usage = func() { printUsage(fs, mcpLoginUsage, mcpLoginAbout, mcpLoginExamples) }
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(words) != 1 {
		fmt.Fprintf(stderr, "zero mcp %s: name one server (as in mcp_servers of your config.yaml)\n", sub)
		return 2
	}
	name := words[0]
	ws, err := app.ResolveWorkspace(*workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	a, err := app.NewAppAt(ws, nil, nil, newLogger(stderr), nil)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	if sub == "logout" {
		if err := a.MCPLogout(name, *addr); err != nil {
			fmt.Fprintf(stderr, "zero mcp logout: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "logged out of %s\n", name)
		return 0
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := a.MCPLogin(ctx, name, *addr, scopes, browserOpener(name, stderr))
	if ok {
		fmt.Fprintf(stderr, "logged in to %s\n", name)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "zero mcp login: %v\n", err)
		return 1
	case !ok:
		fmt.Fprintf(stderr, "zero mcp login: %s asked for no login: its tools answer without one\n", name)
	}
	return 0
}

// browserOpener shows the person the authorization page: it prints its
// address and starts a browser on it.
func browserOpener(name string, stderr io.Writer) func(context.Context, string) error {
	return func(_ context.Context, page string) error {
		fmt.Fprintf(stderr, "Log in to %s in your browser. If it does not open, open this page:\n\n  %s\n\nWaiting for the login (Ctrl-C gives up)...\n", name, page)
		if err := startBrowser(page); err != nil {
			fmt.Fprintf(stderr, "(no browser started: %v)\n", err)
		}
		return nil
	}
}

// startBrowser starts $BROWSER (a list of commands separated by ':', each
// with %s for the page or the page added last, as xdg-utils has it), else
// xdg-open or open, on page: a program and its arguments, never a shell,
// so nothing in the address is run.
func startBrowser(page string) error {
	if u, err := url.Parse(page); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not a web page", page)
	}
	var cmds [][]string
	for _, entry := range strings.Split(os.Getenv("BROWSER"), string(os.PathListSeparator)) {
		words := strings.Fields(entry)
		if len(words) == 0 {
			continue
		}
		hasPage := false
		for i, w := range words {
			if strings.Contains(w, "%s") {
				words[i], hasPage = strings.ReplaceAll(w, "%s", page), true
			}
		}
		if !hasPage {
			words = append(words, page)
		}
		cmds = append(cmds, words)
	}
	if runtime.GOOS == "darwin" {
		cmds = append(cmds, []string{"open", page})
	} else {
		cmds = append(cmds, []string{"xdg-open", page}, []string{"open", page})
	}
	var errs []error
	for _, c := range cmds {
		path, err := exec.LookPath(c[0])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cmd := exec.Command(path, c[1:]...)
		// Not in the directory zero was started in, which may be a
		// workspace someone else wrote.
		cmd.Dir = os.TempDir()
		if home, err := os.UserHomeDir(); err == nil {
			cmd.Dir = home
		}
		if err := cmd.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		go cmd.Wait() // a browser may run on; its exit is not waited for
		return nil
	}
	return errors.Join(errs...)
}
