package term

import (
	"cmp"
	"context"
	"errors"
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

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
)

// Host is what the terminal faces ask of the assembly besides its session
// manager.
type Host interface {
	// Defaults are the profile, chat model and sandbox a session of ws
	// starts with.
	Defaults(ws string) (profile, model, sandbox string)
	// ReviewTrust writes what a question to trust ws's code with digest
	// shows; false when the code is no longer that digest's.
	ReviewTrust(w io.Writer, ws, digest string) bool
}

// Chat is the terminal's conversation face (zero chat): message after
// message in one session, through the session manager as the editor faces
// go, with approvals, the workspace's trust and the MCP servers' questions
// asked at its prompt.
type Chat struct {
	Manager   *server.Manager
	Catalog   server.Catalog
	Host      Host
	Workspace string
	Version   string
	// Persistent says the sessions are stored: one left stays loadable.
	Persistent bool
	Logger     *slog.Logger
	In         io.Reader
	Out        io.Writer
	Color      bool
	Width      int // the terminal's columns; 0 when unknown
}

// Run holds the conversation in sess until the person leaves, and returns
// the exit status (see chatCommand); an error is the terminal's.
func (c Chat) Run(ctx context.Context, sess *server.Session, resumed bool) (int, error) {
	ui := newChatUI(ctx, c)
	// The signals are the chat's own: SIGINT, SIGTERM and SIGHUP leave as
	// the person would, cancelling the run going on, so that the deferred
	// h.close ends it and writes its end (the default for SIGHUP would kill
	// the process and leave a command running in the sandbox).
	p := tea.NewProgram(ui, tea.WithInput(c.In), tea.WithOutput(c.Out), tea.WithoutSignalHandler())
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
	_, err := p.Run()
	close(ran)
	ui.stop()
	if code := signalled.Load(); code != 0 {
		return int(code), nil
	}
	switch {
	case errors.Is(err, tea.ErrInterrupted):
		return 130, nil
	case errors.Is(err, syscall.EIO): // the terminal hung up before its SIGHUP came
		return 129, nil
	case err != nil:
		return 1, err
	}
	return ui.code, nil
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

// SessionByPrefix resolves an id or an id prefix among infos. An id that
// is none of them is returned as it is (another workspace's session, given
// whole, or one that does not exist: opening it says so); a prefix of
// several is an error that lists them, the newest first.
func SessionByPrefix(infos []server.Info, arg string) (string, error) {
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
	fmt.Fprintf(&b, "%v: %d sessions start with %q; give more of the id:", ErrAmbiguousID, len(found), termsafe.Visible(arg))
	slices.SortStableFunc(found, func(a, b server.Info) int { return b.Updated.Compare(a.Updated) })
	for _, in := range found {
		fmt.Fprintf(&b, "\n  %s  %s", in.ID, cmp.Or(termsafe.Visible(in.Title), "(no message yet)"))
	}
	return "", &ambiguousError{b.String()}
}

// ErrAmbiguousID: an id prefix names several sessions.
var ErrAmbiguousID = errors.New("ambiguous session id")

// ambiguousError lists the sessions an id prefix names; it is an
// errAmbiguousID.
type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string { return e.msg }

func (e *ambiguousError) Is(target error) bool { return target == ErrAmbiguousID }

// LatestSession is the most recently updated of the sessions of ws.
func LatestSession(infos []server.Info, ws string) (server.Info, bool) {
	infos = WorkspaceSessions(infos, ws)
	if len(infos) == 0 {
		return server.Info{}, false
	}
	return infos[len(infos)-1], true
}

// WorkspaceSessions keeps the sessions whose main workspace folder is ws,
// least recently updated first.
func WorkspaceSessions(infos []server.Info, ws string) []server.Info {
	out := slices.DeleteFunc(slices.Clone(infos), func(in server.Info) bool {
		return len(in.Roots) == 0 || filepath.Clean(in.Roots[0]) != ws
	})
	slices.SortStableFunc(out, func(a, b server.Info) int {
		return cmp.Or(a.Updated.Compare(b.Updated), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// IsTTY reports whether w is a terminal, whatever NO_COLOR says.
func IsTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ChatSession returns the session the chat of ws starts with: the one named
// by --session, the latest of the workspace with --continue (a new one when
// there is none), else a new one. resumed says whether it existed before.
// The latest session that cannot be opened (another zero process holds
// it) is an error, as for zero run --continue: the chat does not go on in a
// new session the person did not ask for.
func ChatSession(ctx context.Context, m *server.Manager, ws, id string, latest bool) (sess *server.Session, resumed bool, err error) {
	switch {
	case id != "":
		if id, err = SessionByPrefix(WorkspaceSessions(m.List(), ws), id); err != nil {
			return nil, false, fmt.Errorf("--session: %w", err)
		}
		sess, err = m.Get(id)
		if err != nil {
			return nil, false, fmt.Errorf("--session %s: %w (zero chat lists the sessions with /sessions)", id, err)
		}
		return sess, true, nil
	case latest:
		if newest, ok := LatestSession(m.List(), ws); ok {
			if sess, err = m.Get(newest.ID); err != nil {
				return nil, false, fmt.Errorf("--continue: %w", err)
			}
			return sess, true, nil
		}
	}
	sess, err = m.Create(ctx, server.SessionSpec{Roots: []string{ws}})
	return sess, false, err
}
