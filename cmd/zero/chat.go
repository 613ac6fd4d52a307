package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/zeroagent/zero/server/term"

	"github.com/zeroagent/zero/app"

	xterm "golang.org/x/term"

	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/server"
)

// chatCommand is `zero chat`, and `zero` alone on a terminal: a
// conversation in the terminal that goes on message after message. It runs
// its sessions through the same engine as the editor faces (a host and its
// session manager), so a session started here is one an editor can load,
// and the other way round.
//
// Keys: Enter sends (during a run: an intervention), Alt-Enter or Ctrl-J
// starts a new line, Up and Down recall earlier messages. Ctrl-C cancels
// the run going on, clears the input at an idle prompt, and at an empty
// idle prompt says that a second Ctrl-C leaves (any other key takes that
// back); pressed again while a run is being cancelled it leaves at once.
// Ctrl-D at an empty prompt leaves (cancelling a run going on). An approval
// question is answered with y, n or a, then Enter: no single key answers,
// and what is typed as it comes up stays in the message being written.
// A word @path of a message that names an image file of the workspace
// (@"a path with spaces" quoted) attaches the image; Tab completes it. A
// named image that cannot be read or is no picture keeps the message
// from going, and it comes back to the input with the reason.
//
// Exit status: 0 when the person left (Ctrl-D, Ctrl-C twice at an empty
// idle prompt, /exit), 130 when they left with a second Ctrl-C while a run was
// being cancelled (or on SIGINT from outside), 143 on SIGTERM, 129 when the
// terminal hung up (SIGHUP): a run going on is cancelled and the sessions
// closed as on any leaving. 2 for bad flags or a setup that cannot work (no
// model configured, no terminal), 1 when the terminal failed or the session
// to continue is open in another zero process.
func chatCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	resume := fs.String("session", "", "resume the session with this id (/sessions lists them)")
	cont := fs.Bool("continue", false, "resume the most recently updated session of this workspace")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: zero chat [flags]\n\nTalks with the agent in the terminal, message after message; /help at the prompt lists the commands.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zero chat: unexpected argument %q: type your messages at its prompt (zero run \"task\" runs one task)\n", fs.Arg(0))
		return 2
	}
	if *resume != "" && *cont {
		fmt.Fprintln(stderr, "zero chat: --session and --continue exclude each other")
		return 2
	}
	if !app.IsTerminalIn(stdin) || !term.IsTTY(stdout) {
		fmt.Fprintln(stderr, "zero chat: stdin and stdout must be a terminal; for scripts use zero run \"task\" (--json for events)")
		return 2
	}
	ws, err := app.ResolveWorkspace(*common.Workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	logger, closeLog := chatLogger()
	defer closeLog()
	h, err := app.NewHost(ctx, app.Options{Workspace: ws, Flags: common.overrides(), Logger: logger})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	defer h.Close(closeGrace)
	a, err := h.App([]string{ws})
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	// `zero` typed in the home directory must not hand all of it to the
	// agent unasked: the question comes before the terminal is taken.
	if code := a.Preflight(common.explicit("workspace"), stdin, stderr); code != 0 {
		return code
	}
	sess, resumed, err := term.ChatSession(ctx, h.Manager, ws, *resume, *cont)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		if errors.Is(err, app.ErrNoModel) || errors.Is(err, app.ErrNoKey) || errors.Is(err, profiles.ErrNoProfile) || errors.Is(err, server.ErrNotFound) || errors.Is(err, term.ErrAmbiguousID) {
			return 2
		}
		return 1
	}
	// Only plain colors are used, so the background is never asked for (a
	// terminal that does not answer would hold the start).
	width := 0
	if f, ok := stdout.(*os.File); ok {
		width, _, _ = xterm.GetSize(int(f.Fd()))
	}
	c := term.Chat{Manager: h.Manager, Catalog: h.Catalog, Host: h, Workspace: ws, Version: version,
		Persistent: h.Store != nil, Logger: logger, In: stdin, Out: stdout, Color: app.IsTerminal(stdout), Width: width}
	code, err := c.Run(ctx, sess, resumed)
	if err != nil {
		fmt.Fprintln(stderr, "zero chat:", err)
		return 1
	}
	return code
}

// chatLogger logs to a file in the user's state folder, since the terminal
// belongs to the conversation: $XDG_STATE_HOME/zero/chat.log, else
// ~/.local/state/zero/chat.log. ZERO_LOG sets the level (default warn).
// Without a writable folder nothing is logged; warnings still reach the
// conversation as warning events.
func chatLogger() (*slog.Logger, func()) {
	level := slog.LevelWarn
	if v := os.Getenv("ZERO_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	dir := app.StateDir()
	if dir == "" {
		return slog.New(slog.DiscardHandler), func() {}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return slog.New(slog.DiscardHandler), func() {}
	}
	path := filepath.Join(dir, "chat.log")
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fi, err := os.Stat(path); err == nil && fi.Size() > 8<<20 {
		flags |= os.O_TRUNC // a log nobody reads must not grow for ever
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return slog.New(slog.DiscardHandler), func() {}
	}
	return slog.New(secrets.NewHandler(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level}), app.LogSecrets.Load)), func() { f.Close() }
}
