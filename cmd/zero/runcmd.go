package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/tools"
)

func runCommand(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		workspace = fs.String("workspace", "", "the directory the agent works in (default: the current directory)")
		model     = fs.String("model", "", "the chat model (default: $ZERO_MODEL)")
		baseURL   = fs.String("base-url", "", "the OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI)")
		jsonOut   = fs.Bool("json", false, "print one JSON event per line instead of the live view")
	)
	const profile = "default" // profiles beyond the default come with the profile loader
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: zero run [flags] MESSAGE\n\nRuns one task and shows it live; exits 0 when the agent answered.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	message := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if message == "" {
		fmt.Fprintln(stderr, "zero run: no message: say what the agent should do, e.g. zero run \"list the Go files here\"")
		return 2
	}
	mc, err := loadModelConfig(*model, *baseURL, os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	ws, err := resolveWorkspace(*workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	logger := newLogger(stderr)

	client, err := llm.New(llm.Options{Model: mc.Model, BaseURL: mc.BaseURL, APIKey: mc.APIKey, Logger: logger.With("component", "llm")})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	backend, err := sandbox.NewLocal(sandbox.LocalOptions{Dir: ws, Logger: logger.With("component", "sandbox")})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	defer backend.Close()
	ce := tools.NewCodeExecution(backend, tools.Timeouts{})
	defer ce.Close()

	// Extension warnings become warning events; those found while resolving
	// (before the session exists) are held until it does.
	var (
		warnMu sync.Mutex
		sess   *loop.Session
		early  []string
	)
	hookSet, err := hooks.Resolve(loop.Builtins(), hooks.Layers(ws, profile, userConfigDir()), hooks.Options{
		Logger: logger.With("component", "hooks"),
		OnWarning: func(w hooks.Warning) {
			warnMu.Lock()
			defer warnMu.Unlock()
			if sess == nil {
				early = append(early, w.Error())
				return
			}
			sess.Warn(w.Error())
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}

	var sink func(loop.Event)
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		sink = func(e loop.Event) {
			if err := enc.Encode(e); err != nil {
				logger.Warn("write event", "err", err)
			}
		}
	} else {
		sink = newRenderer(stdout, isTerminal(stdout)).event
	}
	session := loop.NewSession(newID(), loop.Config{
		Model:     client,
		Prompts:   profiles.New(),
		Tools:     []loop.Tool{tools.Response{}, ce, ce.InputTool()},
		Hooks:     hookSet,
		Workspace: ws,
		Sandbox:   backend.Name(),
		Profile:   profile,
		Logger:    logger.With("component", "loop"),
	}, sink)
	warnMu.Lock()
	sess = session
	for _, w := range early {
		sess.Warn(w)
	}
	warnMu.Unlock()

	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sctx.Done()
		sess.Cancel() // Ctrl-C: end the run cleanly, killing what it started
	}()
	_, err = sess.Run(context.WithoutCancel(ctx), message)
	stop()
	switch {
	case err == nil:
		return 0
	case errors.Is(err, loop.ErrCancelled):
		if !*jsonOut {
			fmt.Fprintln(stderr, "zero: cancelled")
		}
		return 130
	default:
		if !*jsonOut {
			fmt.Fprintln(stderr, "zero:", err)
		}
		return 1
	}
}

func resolveWorkspace(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("current directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return abs, nil
}

// userConfigDir is ~/.config/zero (or $XDG_CONFIG_HOME/zero).
func userConfigDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "zero")
}

// newLogger logs to stderr only: stdout belongs to the output. ZERO_LOG
// sets the level (debug, info, warn, error; default warn).
func newLogger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("ZERO_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
