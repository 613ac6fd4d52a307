package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zeroagent/zero/app"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

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
	common := app.AddCommonFlags(fs, true)
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
	if !app.IsTerminalIn(stdin) || !isTTY(stdout) {
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
	h, err := app.NewHost(ctx, ws, common.Overrides(), logger)
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
	if code := a.Preflight(common, stdin, stderr); code != 0 {
		return code
	}
	sess, resumed, err := openChatSession(ctx, h, ws, *resume, *cont)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		if errors.Is(err, app.ErrNoModel) || errors.Is(err, app.ErrNoKey) || errors.Is(err, profiles.ErrNoProfile) || errors.Is(err, server.ErrNotFound) || errors.Is(err, errAmbiguousID) {
			return 2
		}
		return 1
	}
	// Only plain colors are used, so the background is never asked for (a
	// terminal that does not answer would hold the start).
	width := 0
	if f, ok := stdout.(*os.File); ok {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	ui := newChatUI(ctx, h, ws, app.IsTerminal(stdout), width)
	// The signals are the chat's own: SIGINT, SIGTERM and SIGHUP leave as
	// the person would, cancelling the run going on, so that the deferred
	// h.close ends it and writes its end (the default for SIGHUP would kill
	// the process and leave a command running in the sandbox).
	p := tea.NewProgram(ui, tea.WithInput(stdin), tea.WithOutput(stdout), tea.WithoutSignalHandler())
	ui.send = p.Send
	// They stay caught until the process ends: one more during the cleanup
	// (bounded by closeGrace) does not cut it short.
	var signalled atomic.Int32 // the exit status of the first signal
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ran := make(chan struct{})
	go func() { // ends when the program has returned
		for {
			select {
			case <-ran:
				return
			case s := <-sigs:
				code := int32(signalStatus(s))
				if !signalled.CompareAndSwap(0, code) {
					p.Kill() // a second signal: leave now, h.close still runs
					continue
				}
				go p.Send(signalMsg{code: int(code)})
				// A terminal that is gone can hold the program's leaving:
				// the cleanup must not wait for it.
				go func() {
					select {
					case <-ran:
					case <-time.After(3 * time.Second):
						p.Kill()
					}
				}()
			}
		}
	}()
	ui.start(sess, resumed)
	_, err = p.Run()
	close(ran)
	ui.stop()
	if code := signalled.Load(); code != 0 {
		return int(code)
	}
	switch {
	case errors.Is(err, tea.ErrInterrupted):
		return 130
	case errors.Is(err, syscall.EIO): // the terminal hung up before its SIGHUP came
		return 129
	case err != nil:
		fmt.Fprintln(stderr, "zero chat:", err)
		return 1
	}
	return ui.code
}

// signalMsg says the chat got a signal: it leaves with code.
type signalMsg struct{ code int }

// signalStatus is the exit status of leaving on s: 128 + its number.
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// openChatSession returns the session the chat starts with: the one named
// by --session, the latest of the workspace with --continue (a new one when
// there is none), else a new one. resumed says whether it existed before.
// The latest session that cannot be opened (another zero process holds
// it) is an error, as for zero run --continue: the chat does not go on in a
// new session the person did not ask for.
func openChatSession(ctx context.Context, h *app.Host, ws, id string, latest bool) (sess *server.Session, resumed bool, err error) {
	switch {
	case id != "":
		if id, err = sessionByPrefix(workspaceSessions(h.Manager.List(), ws), id); err != nil {
			return nil, false, fmt.Errorf("--session: %w", err)
		}
		sess, err = h.Manager.Get(id)
		if err != nil {
			return nil, false, fmt.Errorf("--session %s: %w (zero chat lists the sessions with /sessions)", id, err)
		}
		return sess, true, nil
	case latest:
		if newest, ok := latestSession(h.Manager.List(), ws); ok {
			if sess, err = h.Manager.Get(newest.ID); err != nil {
				return nil, false, fmt.Errorf("--continue: %w", err)
			}
			return sess, true, nil
		}
	}
	sess, err = h.Manager.Create(ctx, server.SessionSpec{Roots: []string{ws}})
	return sess, false, err
}

// sessionByPrefix resolves an id or an id prefix among infos. An id that
// is none of them is returned as it is (another workspace's session, given
// whole, or one that does not exist: opening it says so); a prefix of
// several is an error that lists them, the newest first.
func sessionByPrefix(infos []server.Info, arg string) (string, error) {
	var found []server.Info
	for _, in := range infos {
		if in.ID == arg {
			return arg, nil
		}
		if strings.HasPrefix(in.ID, arg) {
			found = append(found, in)
		}
	}
	switch len(found) {
	case 0:
		return arg, nil
	case 1:
		return found[0].ID, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d sessions start with %q; give more of the id:", errAmbiguousID, len(found), visible(arg))
	slices.SortStableFunc(found, func(a, b server.Info) int { return b.Updated.Compare(a.Updated) })
	for _, in := range found {
		fmt.Fprintf(&b, "\n  %s  %s", in.ID, cmp.Or(visible(in.Title), "(no message yet)"))
	}
	return "", &ambiguousError{b.String()}
}

// errAmbiguousID: an id prefix names several sessions.
var errAmbiguousID = errors.New("ambiguous session id")

// ambiguousError lists the sessions an id prefix names; it is an
// errAmbiguousID.
type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string        { return e.msg }
func (e *ambiguousError) Is(target error) bool { return target == errAmbiguousID }

// latestSession is the most recently updated of the sessions of ws.
func latestSession(infos []server.Info, ws string) (server.Info, bool) {
	infos = workspaceSessions(infos, ws)
	if len(infos) == 0 {
		return server.Info{}, false
	}
	return infos[len(infos)-1], true
}

// workspaceSessions keeps the sessions whose main workspace folder is ws,
// least recently updated first.
func workspaceSessions(infos []server.Info, ws string) []server.Info {
	out := slices.DeleteFunc(slices.Clone(infos), func(in server.Info) bool {
		return len(in.Roots) == 0 || filepath.Clean(in.Roots[0]) != ws
	})
	slices.SortStableFunc(out, func(a, b server.Info) int {
		return cmp.Or(a.Updated.Compare(b.Updated), cmp.Compare(a.ID, b.ID))
	})
	return out
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

// isTTY reports whether w is a terminal, whatever NO_COLOR says.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
