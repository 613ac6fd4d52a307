package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/zeroagent/zero/app"
	"github.com/zeroagent/zero/secrets"
)

// commonFlags are the flags every command that builds agents takes.
type commonFlags struct {
	fs        *flag.FlagSet
	Workspace *string
}

func addCommonFlags(fs *flag.FlagSet, withModel bool) *commonFlags {
	f := &commonFlags{fs: fs}
	f.Workspace = fs.String("workspace", "", "the directory the agent works in (default: the current directory)")
	fs.String("profile", "", "the agent profile (default: the configured one, agent0)")
	if withModel {
		fs.String("model", "", "the chat model (default: $ZERO_MODEL, then config.yaml)")
		fs.String("base-url", "", "the OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, then config.yaml, else OpenAI)")
		fs.String("utility-model", "", "the utility model (default: the chat model)")
		fs.String("tool-protocol", "", "how the chat model calls tools: auto (native tool calls where the endpoint takes them, else Agent Zero's JSON replies; the default), native, json")
		fs.String("sandbox", "", "where commands run: auto (docker when an engine answers, else local), docker, local")
		fs.String("image", "", "the container image of the docker sandbox (default kalilinux/kali-rolling)")
		fs.String("approval", "", "when to ask before a tool runs: sandbox (the default: before each command only where it would run unconfined, on the local backend without bubblewrap), ask (before every command, input and edit), auto (never)")
	}
	return f
}

// Overrides are the configuration keys set by flags the user gave.
func (f *commonFlags) overrides() map[string]string {
	keys := map[string]string{
		"model": "models.chat.model", "base-url": "models.chat.base_url", "utility-model": "models.utility.model",
		"tool-protocol": "models.chat.tool_protocol",
		"profile":       "profile", "sandbox": "sandbox.backend", "image": "sandbox.image", "approval": "approval",
	}
	set := map[string]string{}
	f.fs.Visit(func(fl *flag.Flag) {
		if key, ok := keys[fl.Name]; ok {
			set[key] = fl.Value.String()
		}
	})
	return set
}

// newApp builds the app of the workspace the flags name.
func newApp(f *commonFlags, stderr io.Writer) (*app.App, error) {
	ws, err := app.ResolveWorkspace(*f.Workspace)
	if err != nil {
		return nil, err
	}
	return app.NewAppAt(ws, nil, f.overrides(), newLogger(stderr), nil)
}

// explicit reports whether the user gave flag name a value on the command
// line.
func (f *commonFlags) explicit(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == name && fl.Value.String() != "" {
			set = true
		}
	})
	return set
}

// newLogger logs to stderr only: stdout belongs to the output. ZERO_LOG
// sets the level (debug, info, warn, error; default warn).
func newLogger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("ZERO_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return slog.New(secrets.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), app.LogSecrets.Load))
}

// serveFlags parses the flags of `zero acp|mcp|lsp`; extra adds the
// face's own. It returns nil when the command is over with code.
func serveFlags(ctx context.Context, name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (h *app.Host, code int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	if extra != nil {
		extra(fs)
	}
	if code, ok := parseNoArgs(fs, args, " (it speaks its protocol on stdin and stdout)"); !ok {
		return nil, code
	}
	ws, err := app.ResolveWorkspace(*common.Workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return nil, 2
	}
	h, err = app.NewHost(ctx, app.Options{Workspace: ws, Named: common.explicit("workspace"), Flags: common.overrides(), Logger: newLogger(stderr)})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return nil, 2
	}
	return h, 0
}

// parseNoArgs parses the flags of a command that takes no arguments;
// when it reports false the command is over with code (0 for -h, 2 for a
// bad flag or an argument, said on the flag set's output with hint).
func parseNoArgs(fs *flag.FlagSet, args []string, hint string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q%s\n", fs.Name(), fs.Arg(0), hint)
		return 2, false
	}
	return 0, true
}
