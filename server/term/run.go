package term

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
	"golang.org/x/term"
)

// Run is the terminal's one-task face (zero run): it sends one message to
// a session, shows the run live (or as JSON lines) as it follows the
// session's log, asks the approvals the broker holds on the terminal, and
// returns the exit status.
type Run struct {
	Manager *server.Manager
	Session *server.Session
	// Since is the cursor of what the terminal has not shown yet.
	Since int64
	// JSON prints one event per line instead of the live view.
	JSON bool
	// Interactive says In is a terminal a person answers approvals on.
	Interactive bool
	// Color styles the live view.
	Color    bool
	In       io.Reader
	Out, Err io.Writer
	Logger   *slog.Logger
}

// Prompt runs message and returns the exit status: 0 when the agent
// answered, 1 when the run failed, 130 when it was cancelled.
func (r Run) Prompt(ctx context.Context, message string) int {
	return r.PromptInput(ctx, loop.Input{Text: message})
}

// PromptInput is Prompt for a message with images (zero run --attach,
// made by server.Attach).
func (r Run) PromptInput(ctx context.Context, in loop.Input) int {
	var (
		show func(server.Event)
		view *renderer // nil with --json
		// evErrors are the errors already said (by the --json events, or
		// on r.Err as they came): they are not said again at the end.
		evErrors []string
		errMu    sync.Mutex
	)
	if r.JSON {
		enc := json.NewEncoder(r.Out)
		enc.SetEscapeHTML(false)
		show = func(e server.Event) {
			if e.Type == loop.EventError || e.Error != "" {
				errMu.Lock()
				evErrors = append(evErrors, cmp.Or(e.Text, e.Error), e.Error)
				errMu.Unlock()
			}
			if err := enc.Encode(e); err != nil {
				r.Logger.Warn("write event", "err", err)
			}
		}
	} else {
		view = newRenderer(r.Out, r.Color)
		if f, ok := r.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			view.live = true
			view.width = func() int { w, _, _ := term.GetSize(int(f.Fd())); return w }
		}
		show = view.event
		if !sameFile(r.Out, r.Err) {
			// The run's errors go where errors go, once: on r.Err when the
			// live view goes elsewhere (a pipe, a file), in the view when
			// both are one terminal.
			show = func(e server.Event) {
				if e.Type == loop.EventError && e.Agent == 0 {
					// The model's or the endpoint's words: shown, never
					// let act on the terminal.
					fmt.Fprintln(r.Err, "zero:", termsafe.Visible(e.Text))
					errMu.Lock()
					evErrors = append(evErrors, e.Text)
					errMu.Unlock()
					return
				}
				view.event(e)
			}
		}
	}
	// The live view follows the session's log, as the editor faces do, and
	// asks the approvals the broker holds once it has shown what they are
	// about.
	ended := make(chan struct{})
	asker := newTermAsker(r.Manager.Approvals(), r.Session.Spec().Roots, r.In, r.Err, r.Interactive, ended)
	asker.questions = r.Manager.Questions()
	if r.JSON {
		asker.noQuestions = "zero run --json asks no questions"
	}
	pctx, stopPump := context.WithCancel(ctx)
	defer stopPump()
	// The run's output ends with its run_ended: what the session does after
	// it (the usage of a memorization the run left going) is stored, not
	// shown, so that run_ended is the last line of --json.
	// (A run_ended before this run's run_started closes a run an earlier
	// process left, when the session loaded.)
	started, over := false, false
	p := newPump(r.Session.Follow(r.Since), func(e server.Event) {
		if over {
			return
		}
		started = started || e.Type == loop.EventRunStarted
		over = started && e.Type == loop.EventRunEnded
		show(e)
		asker.ask(pctx, e)
	})
	go p.run(pctx) // ends with stopPump

	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sctx.Done()
		stop()             // a second Ctrl-C kills the process at once
		r.Session.Cancel() // the first ends the run cleanly, killing what it started
	}()
	res, err := r.Session.PromptInput(context.WithoutCancel(ctx), in)
	stop()
	close(ended)
	if err == nil {
		err = res.Err
	}
	p.waitFor(ctx, r.Session.Cursor())
	stopPump()
	// A session none of whose runs reached the model is not kept (see
	// server.Manager.Unreached): there is nothing to go on with.
	if !r.JSON && IsTTY(r.Err) && !r.Manager.Unreached(r.Session.ID()) {
		defer fmt.Fprintf(r.Err, "zero: session %s (zero run --continue goes on with it)\n", r.Session.ID())
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, loop.ErrCancelled):
		if !r.JSON {
			fmt.Fprintln(r.Err, "zero: cancelled")
		}
		return 130
	default:
		// Said once: the --json events, r.Err as it came, or the live view
		// on the terminal already said the error.
		errMu.Lock()
		shown := slices.Contains(evErrors, err.Error())
		errMu.Unlock()
		if !shown && !(view != nil && view.lastError == termsafe.Visible(err.Error())) {
			fmt.Fprintln(r.Err, "zero:", termsafe.Visible(err.Error()))
		}
		return 1
	}
}

// pump shows a session's events as they come and tells how far it got.
type pump struct {
	f    *server.Follower
	show func(server.Event)

	mu    sync.Mutex
	upto  int64
	moved chan struct{} // closed and replaced when upto grows
	done  bool
}

func newPump(f *server.Follower, show func(server.Event)) *pump {
	return &pump{f: f, show: show, upto: f.Cursor(), moved: make(chan struct{})}
}

func (p *pump) run(ctx context.Context) {
	defer func() {
		p.mu.Lock()
		p.done = true
		close(p.moved)
		p.mu.Unlock()
	}()
	for {
		b, err := p.f.Next(ctx)
		for _, e := range b.Events {
			p.show(e)
		}
		p.mu.Lock()
		p.upto = p.f.Cursor()
		close(p.moved)
		p.moved = make(chan struct{})
		p.mu.Unlock()
		if err != nil || b.Closed {
			return
		}
	}
}

// waitFor waits until the events up to seq were shown (or ctx ends, or
// the pump stopped).
func (p *pump) waitFor(ctx context.Context, seq int64) {
	for {
		p.mu.Lock()
		upto, ch, done := p.upto, p.moved, p.done
		p.mu.Unlock()
		if upto >= seq || done {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// sameFile reports whether two outputs write to the same file (one
// terminal, or one pipe or file given as both).
func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return a == b
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// RunSession is the session zero run works in, in ws: a new one, the last
// one of the workspace (--continue), or the one named (--session); since is the
// cursor of what the terminal has not shown yet (the warnings of building
// it, and of loading it, included).
func RunSession(ctx context.Context, m *server.Manager, ws string, cont bool, id string) (s *server.Session, since int64, err error) {
	list := m.List()
	if cont {
		last, ok := LatestSession(list, ws)
		if !ok {
			return nil, 0, fmt.Errorf("no session to continue in %s (zero sessions --all lists every workspace's)", ws)
		}
		id = last.ID
	}
	if id == "" {
		s, err = m.Create(ctx, server.SessionSpec{Roots: []string{ws}})
		return s, 0, err
	}
	if id, err = m.Resolve(id); err != nil {
		if errors.Is(err, server.ErrNotFound) {
			err = fmt.Errorf("%w (zero sessions --all lists them)", err)
		}
		return nil, 0, err
	}
	for _, in := range list {
		if in.ID == id {
			since = in.LastSeq
		}
	}
	s, err = m.Get(id)
	if errors.Is(err, server.ErrNotFound) {
		return nil, 0, fmt.Errorf("no session %q (zero sessions lists them): %w", id, err)
	}
	return s, since, err
}
