package main

import (
	"cmp"
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
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/server"
)

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	jsonOut := fs.Bool("json", false, "print one JSON event per line instead of the live view")
	trustCode := fs.Bool("trust", false, "trust the workspace's code (extensions, tools) as it is now without asking, listing it on stderr (zero trust shows each file and asks)")
	cont := fs.Bool("continue", false, "continue the last session of this workspace (zero sessions lists them)")
	sessionID := fs.String("session", "", "continue the stored session with this id, or a prefix of it that names one session (zero sessions lists them)")
	helpOutput(fs, args, stdout)
	fs.Usage = func() {
		printUsage(fs, "  zero run [flags] MESSAGE",
			"Runs one task in the workspace and shows it live: the agent's thoughts, its commands and their output,\n"+
				"and its answer. Exits 0 when the agent answered, 1 when the run failed, 130 when cancelled (Ctrl-C).\n"+
				"Flags may stand before or after the message; after -- everything is the message.",
			"  zero run \"list the Go files here and count their lines\"\n"+
				"  zero run --sandbox local --continue \"now add a test for it\"\n"+
				"  zero run --json \"what does main.go do?\" | jq -c 'select(.type == \"response\")'")
	}
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	message := strings.TrimSpace(strings.Join(words, " "))
	if message == "" {
		fmt.Fprintln(stderr, "zero run: no message: say what the agent should do, e.g. zero run \"list the Go files here\"")
		return 2
	}
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	if code := a.preflight(common, stdin, stderr); code != 0 {
		return code
	}
	interactive := isTerminalIn(stdin)
	if a.cfg.Approval == "ask" && !interactive {
		// Running without asking when the user asked to be asked would be
		// worse than not running.
		fmt.Fprintf(stderr, "zero: approval \"ask\" (%s): zero run asks on the terminal, and stdin is not one; use an editor (zero acp, mcp or lsp) or --approval auto\n", a.cfg.Origin("approval"))
		return 2
	}
	if *trustCode {
		if st, err := a.trustState(); err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			return 1
		} else if !st.Runs() && !st.Manifest.Empty() {
			printManifest(stderr, st)
			if _, err := a.trustDigest(st.Manifest.Digest); err != nil {
				fmt.Fprintln(stderr, "zero:", err)
				return 1
			}
			fmt.Fprintf(stderr, "zero: trusted this workspace's code (%s)\n", short(st.Manifest.Digest))
		}
	}
	if err := a.openSandbox(ctx); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}

	if *cont && *sessionID != "" {
		fmt.Fprintln(stderr, "zero run: --continue and --session both choose a session; give one")
		return 2
	}
	var (
		show func(server.Event)
		view *renderer // nil with --json
		// evErrors are the errors already said (by the --json events, or
		// on stderr as they came): they are not said again at the end.
		evErrors []string
		errMu    sync.Mutex
	)
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		show = func(e server.Event) {
			if e.Type == loop.EventError || e.Error != "" {
				errMu.Lock()
				evErrors = append(evErrors, cmp.Or(e.Text, e.Error), e.Error)
				errMu.Unlock()
			}
			if err := enc.Encode(e); err != nil {
				a.logger.Warn("write event", "err", err)
			}
		}
	} else {
		view = newRenderer(stdout, isTerminal(stdout))
		if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			view.live = true
			view.width = func() int { w, _, _ := term.GetSize(int(f.Fd())); return w }
		}
		show = view.event
		if !sameFile(stdout, stderr) {
			// The run's errors go where errors go, once: on stderr when the
			// live view goes elsewhere (a pipe, a file), in the view when
			// both are one terminal.
			show = func(e server.Event) {
				if e.Type == loop.EventError && e.Agent == 0 {
					// The model's or the endpoint's words: shown, never
					// let act on the terminal.
					fmt.Fprintln(stderr, "zero:", visible(e.Text))
					errMu.Lock()
					evErrors = append(evErrors, e.Text)
					errMu.Unlock()
					return
				}
				view.event(e)
			}
		}
	}
	h := newHostWith(ctx, a) // closes a
	defer h.close(closeGrace)
	sess, since, err := runSession(ctx, h, *cont, *sessionID)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		if errors.Is(err, errNoModel) || errors.Is(err, errNoKey) || errors.Is(err, profiles.ErrNoProfile) || errors.Is(err, server.ErrNotFound) || errors.Is(err, server.ErrAmbiguous) {
			return 2
		}
		return 1
	}
	// The live view follows the session's log, as the editor faces do, and
	// asks the approvals the broker holds once it has shown what they are
	// about.
	ended := make(chan struct{})
	asker := newTermAsker(h.manager.Approvals(), sess.Spec().Roots, stdin, stderr, interactive, ended)
	pctx, stopPump := context.WithCancel(ctx)
	defer stopPump()
	p := newPump(sess.Follow(since), func(e server.Event) {
		show(e)
		asker.ask(pctx, e)
	})
	go p.run(pctx) // ends with stopPump

	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sctx.Done()
		stop()        // a second Ctrl-C kills the process at once
		sess.Cancel() // the first ends the run cleanly, killing what it started
	}()
	res, err := sess.Prompt(context.WithoutCancel(ctx), message)
	stop()
	close(ended)
	if err == nil {
		err = res.Err
	}
	p.waitFor(ctx, sess.Cursor())
	stopPump()
	// A session none of whose runs reached the model is not kept (see
	// server.Manager.Unreached): there is nothing to go on with.
	if !*jsonOut && isTTY(stderr) && !h.manager.Unreached(sess.ID()) {
		defer fmt.Fprintf(stderr, "zero: session %s (zero run --continue goes on with it)\n", sess.ID())
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, loop.ErrCancelled):
		if !*jsonOut {
			fmt.Fprintln(stderr, "zero: cancelled")
		}
		return 130
	default:
		// Said once: the --json events, stderr as it came, or the live view
		// on the terminal already said the error.
		errMu.Lock()
		shown := slices.Contains(evErrors, err.Error())
		errMu.Unlock()
		if !shown && !(view != nil && view.lastError == visible(err.Error())) {
			fmt.Fprintln(stderr, "zero:", visible(err.Error()))
		}
		return 1
	}
}

// runSession is the session zero run works in: a new one, the last one of
// the workspace (--continue), or the one named (--session); since is the
// cursor of what the terminal has not shown yet (the warnings of building
// it, and of loading it, included).
func runSession(ctx context.Context, h *host, cont bool, id string) (s *server.Session, since int64, err error) {
	list := h.manager.List()
	if cont {
		last, ok := latestSession(list, h.ws)
		if !ok {
			return nil, 0, fmt.Errorf("no session to continue in %s (zero sessions --all lists every workspace's)", h.ws)
		}
		id = last.ID
	}
	if id == "" {
		s, err = h.manager.Create(ctx, server.SessionSpec{Roots: []string{h.ws}})
		return s, 0, err
	}
	if id, err = h.manager.Resolve(id); err != nil {
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
	s, err = h.manager.Get(id)
	if errors.Is(err, server.ErrNotFound) {
		return nil, 0, fmt.Errorf("no session %q (zero sessions lists them): %w", id, err)
	}
	return s, since, err
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

// parseInterspersed parses flags wherever they stand, so that
// `zero run "task" --json` works as people type it; after "--" everything
// is message.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if args = fs.Args(); len(args) == 0 {
			return append(words, tail...), nil
		}
		words, args = append(words, args[0]), args[1:]
	}
}

// agentEnviron is the environment the agent's shells and extension scripts
// get: Zero's own secrets are not theirs to see. That is the model
// configuration (the API key above all), the MCP token, and every variable
// a key is read from (secret: the api_key_env names of the configuration
// and of the profiles).
func agentEnviron(environ []string, secret ...string) []string {
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "OPENAI_API_KEY", k == "OPENAI_BASE_URL", k == "OPENAI_ORG_ID", k == "OPENAI_PROJECT_ID",
			k == "ZERO_MODEL", k == "ZERO_MCP_TOKEN", slices.Contains(secret, k):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// userConfigDir is $XDG_CONFIG_HOME/zero, else ~/.config/zero, on every
// system (macOS included), where the README and Agent Zero users look.
func userConfigDir() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "zero")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "zero")
}

// newLogger logs to stderr only: stdout belongs to the output. ZERO_LOG
// sets the level (debug, info, warn, error; default warn).
func newLogger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("ZERO_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return slog.New(secrets.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), logSecrets.Load))
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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

// isTerminalIn reports whether r is a terminal a person can answer on
// (/dev/null is a character device, but nobody types there).
func isTerminalIn(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}
