package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/server/acp"
	"github.com/zeroagent/zero/server/lsp"
	mcpface "github.com/zeroagent/zero/server/mcp"
)

// closeGrace is how long the host waits for runs to end after a face
// returned; then it closes their shells, which ends them. A face may itself
// wait up to a second for its runs, so the process is gone within 2 s of
// stdin closing.
const closeGrace = 800 * time.Millisecond

// serveFace runs one face until the editor closes stdin, a signal arrives
// or the face fails, then ends every session.
func serveFace(ctx context.Context, h *app.Host, name string, serve func(context.Context) error) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	h.Logger.Info("serving", "face", name, "workspace", h.Workspace, "version", version)
	err := serve(ctx)
	h.Close(closeGrace)
	if err != nil && ctx.Err() == nil {
		h.Logger.Error("face stopped", "face", name, "err", err)
		return 1
	}
	return 0
}

// stdioFace is the command of a face that speaks on stdin and stdout.
func stdioFace(name string, serve func(ctx context.Context, h *app.Host, in io.Reader, out io.Writer) error) func(context.Context, []string, io.Reader, io.Writer, io.Writer) int {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		h, code := serveFlags(ctx, "zero "+name, args, stderr, nil)
		if h == nil {
			return code
		}
		if err := h.CheckStart(); err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			return app.ExitUsage
		}
		return serveFace(ctx, h, name, func(ctx context.Context) error { return serve(ctx, h, stdin, stdout) })
	}
}

var (
	acpCommand = stdioFace("acp", func(ctx context.Context, h *app.Host, in io.Reader, out io.Writer) error {
		return acp.Serve(ctx, in, out, acp.Options{Manager: h.Manager, Catalog: h.Catalog, Version: version, Logger: h.Logger.With("face", "acp")})
	})
	lspCommand = stdioFace("lsp", func(ctx context.Context, h *app.Host, in io.Reader, out io.Writer) error {
		return lsp.Serve(ctx, in, out, lsp.Options{Manager: h.Manager, Catalog: h.Catalog, Version: version, Logger: h.Logger.With("face", "lsp")})
	})
)

func mcpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if isMCPAuth(append([]string{"mcp"}, args...)) {
		return mcpAuthCommand(ctx, args[0], args[1:], stdout, stderr)
	}
	var addr *string
	var budget *time.Duration
	h, code := serveFlags(ctx, "zero mcp", args, stderr, func(fs *flag.FlagSet) {
		addr = fs.String("http", "", "serve streamable HTTP on this loopback address (e.g. 127.0.0.1:7777) instead of stdio; the bearer token is $ZERO_MCP_TOKEN, or a new one printed on stderr")
		budget = fs.Duration("run-budget", mcpface.DefaultRunBudget, "how long a zero_run call may last before it returns the run's cursor while the run goes on (clients give up on a tool call after about 60 s)")
	})
	if h == nil {
		return code
	}
	if err := h.CheckStart(); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return app.ExitUsage
	}
	backend, where := h.Sandbox()
	opts := mcpface.Options{Manager: h.Manager, Catalog: h.Catalog, Version: version, DefaultWorkspace: h.DefaultWorkspace(), RunBudget: *budget,
		Backend: backend, Sandbox: where, Logger: h.Logger.With("face", "mcp")}
	if *addr == "" {
		return serveFace(ctx, h, "mcp", func(ctx context.Context) error {
			return mcpface.ServeStdio(ctx, stdin, stdout, opts)
		})
	}
	ln, err := mcpface.ListenLoopback(*addr)
	if err != nil {
		fmt.Fprintln(stderr, "zero mcp:", err)
		h.Close(0)
		return 2
	}
	token := os.Getenv("ZERO_MCP_TOKEN")
	if token == "" {
		token = mcpface.NewToken()
		fmt.Fprintf(stderr, "zero mcp: bearer token %s (set ZERO_MCP_TOKEN to choose it)\n", token)
	}
	fmt.Fprintf(stderr, "zero mcp: listening on http://%s/mcp\n", ln.Addr())
	return serveFace(ctx, h, "mcp-http", func(ctx context.Context) error {
		return mcpface.ServeHTTP(ctx, ln, token, opts)
	})
}

// faces are the editor-facing commands.
var faces = map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{
	"acp": acpCommand, "mcp": mcpCommand, "lsp": lspCommand,
}
