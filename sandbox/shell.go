package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultInterruptGrace is how long [Shell.Interrupt] waits after SIGINT
// before it sends SIGKILL.
const DefaultInterruptGrace = 500 * time.Millisecond

// startupTimeout bounds the protocol handshake of a new shell when the
// caller's ctx has no earlier deadline.
const startupTimeout = 10 * time.Second

const readBufferSize = 32 << 10

// shellConfig is what a backend passes to newShell; zero fields get defaults.
type shellConfig struct {
	maxOutput int
	grace     time.Duration
	logger    *slog.Logger
}

// Shell is one persistent interactive shell: cd, exported variables,
// functions and activated venvs persist between commands.
//
// One command runs at a time: [Shell.Start] sends it, [Shell.Wait] reads its
// output until it completes or a timeout rule fires, and may be called again
// to keep reading. All methods are safe for concurrent use; concurrent Waits
// are served one after the other. A Shell is obtained from a [Backend] and
// must be closed.
type Shell struct {
	term      terminal
	log       *slog.Logger
	maxOutput int
	grace     time.Duration

	writeMu    sync.Mutex    // one writer on the terminal at a time
	waitSem    chan struct{} // holds a token while a Wait runs
	closedCh   chan struct{} // closed by Close
	readerDone chan struct{} // closed when readLoop returns
	closeOnce  sync.Once
	closeErr   error
	onClose    func(*Shell) // the backend forgets the shell; set before the shell is handed out

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every state change (broadcast)
	closed   bool
	dead     error // why the shell cannot be used any more; set by readLoop
	running  bool  // a command was started and its sentinel has not arrived
	nonce    string
	seq      uint64 // commands started (the init handshake is 1)
	execSeq  uint64 // the last command bash has begun to execute (started mark)
	doneSeq  uint64 // the last command whose sentinel arrived
	reported bool   // the last completion was returned by a Wait (or superseded)
	lastExit int
	started  time.Time
	command  string // the last command started
	c        cleaner
	held     []byte // raw bytes that may be the start of a sentinel
	out      capBuf // cleaned output no Wait has returned yet
	after    capBuf // output that arrived after an unreported completion
	dataSeq  uint64 // incremented whenever output (not a sentinel) arrives
	lastData time.Time
	seenData uint64 // dataSeq already accounted for by a Wait or by Start
}

func newShell(term terminal, cfg shellConfig) *Shell {
	if cfg.maxOutput <= 0 {
		cfg.maxOutput = DefaultMaxOutput
	}
	if cfg.grace <= 0 {
		cfg.grace = DefaultInterruptGrace
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	s := &Shell{
		term:       term,
		log:        cfg.logger,
		maxOutput:  cfg.maxOutput,
		grace:      cfg.grace,
		waitSem:    make(chan struct{}, 1),
		closedCh:   make(chan struct{}),
		readerDone: make(chan struct{}),
		changed:    make(chan struct{}),
		reported:   true,
		out:        newCapBuf(cfg.maxOutput),
		after:      newCapBuf(cfg.maxOutput),
	}
	go s.readLoop()
	return s
}

// Processes names what still runs in the shell besides the shell itself,
// each as "pid command line": the command it waits for and the jobs left
// in the background (where the backend can see them: the local one on
// Linux). Elsewhere it names the command still running, if any.
func (s *Shell) Processes() []string {
	if p, ok := s.term.(interface{ processes() []string }); ok {
		if procs := p.processes(); procs != nil {
			return procs
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running && !s.closed && s.dead == nil {
		return []string{cut(s.command, 160)}
	}
	return nil
}

// cut is s on one line, at most n bytes.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// printed is what a shell that failed to start printed (bubblewrap says
// why it cannot set up the sandbox there; the terminal may have echoed the
// start of the init script too), for the error: the first 400 bytes, or ""
// when it printed nothing.
func (s *Shell) printed() string {
	s.mu.Lock()
	out := strings.TrimSpace(s.out.String())
	s.mu.Unlock()
	if out == "" {
		return ""
	}
	if len(out) > 400 {
		out = out[:400] + "…"
	}
	return fmt.Sprintf(" (it printed: %q)", out)
}

// handshake prepares the shell for the protocol and waits until it is ready.
// Whatever the terminal printed before (echo of the init script, warnings)
// is discarded.
func (s *Shell) handshake(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, startupTimeout)
	defer cancel()
	s.mu.Lock()
	s.seq++
	s.nonce = newNonce()
	s.running = true
	seq, nonce := s.seq, s.nonce
	s.mu.Unlock()

	if err := s.write(initScript(nonce)); err != nil {
		return fmt.Errorf("shell handshake: %w: %v", ErrUnavailable, err)
	}
	if _, err := s.awaitDone(hctx, seq, 0); err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("shell handshake: %w", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("shell handshake: %w: no answer within %v%s", ErrUnavailable, startupTimeout, s.printed())
		}
		return fmt.Errorf("shell handshake: %w%s", err, s.printed())
	}
	s.mu.Lock()
	discarded := s.out.take()
	s.out, s.after = s.after, newCapBuf(s.maxOutput)
	s.reported = true
	s.seenData = s.dataSeq
	s.mu.Unlock()
	s.log.Debug("shell ready", "discarded_bytes", len(discarded.String()))
	return nil
}

// Start sends command to the shell. command may span several lines and
// contain here-documents; it runs in the current shell (as if typed), with
// the terminal as its stdin. Start does not wait: call [Shell.Wait].
//
// It returns [ErrBusy] while the previous command is still running. If the
// previous command completed but no Wait reported it, its remaining output
// is kept and returned by the next Wait, before the new command's output.
func (s *Shell) Start(command string) error {
	if strings.IndexByte(command, 0) >= 0 {
		return fmt.Errorf("start: %w: it contains a NUL byte", ErrInvalidCommand)
	}
	s.mu.Lock()
	if err := s.usableLocked(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("start: %w", err)
	}
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("start: %w", ErrBusy)
	}
	if !s.reported {
		rest := s.after.take()
		s.out.appendBuf(&rest)
		s.reported = true
	}
	s.seq++
	s.nonce = newNonce()
	s.running = true
	s.started = time.Now()
	s.command = command
	s.seenData = s.dataSeq
	s.c.forgetLines()
	seq, line := s.seq, commandLine(s.nonce, command)
	s.mu.Unlock()

	if err := s.term.resetModes(); err != nil {
		s.log.Debug("reset terminal modes", "err", err)
	}
	s.log.Debug("command started", "seq", seq, "command_len", len(command))
	if err := s.write(line); err != nil {
		return fmt.Errorf("start: %w: %v", ErrUnavailable, err)
	}
	return nil
}

// Wait reads the running command's output until it completes, a rule of t
// fires, ctx is done, or the shell goes away.
//
// out, when not nil, is called on the caller's goroutine with each cleaned
// fragment as it arrives, for live streaming: whole lines as they complete,
// and a trailing unfinished line when Wait returns. The fragments add up to
// Result.Output, except that Result.Output is capped while out sees all the
// text (output that piles up faster than Wait drains it is capped in the
// same head-and-tail way, so memory stays bounded).
//
// When ctx is done, Wait returns at once with what it has, Reason
// Interrupted and ctx's error; the command keeps running (use
// [Shell.Interrupt] to stop it). After a timeout, calling Wait again
// continues reading the same command.
//
// When no command is running and the last completion was already reported,
// Wait returns immediately with Done true, the last exit code, any output
// that arrived since (e.g. from a background job), and [ErrNotRunning].
// When the shell is gone it returns Reason ShellEnded with [ErrClosed] or an
// error wrapping [ErrUnavailable] (the shell exited, e.g. the command was
// `exit`); Output then holds what was read before.
func (s *Shell) Wait(ctx context.Context, t Timeouts, out func(string)) (Result, error) {
	select {
	case s.waitSem <- struct{}{}:
	case <-ctx.Done():
		return Result{Reason: Interrupted}, ctx.Err()
	case <-s.closedCh:
		return Result{Reason: ShellEnded}, ErrClosed
	}
	defer func() { <-s.waitSem }()

	res := newCapBuf(s.maxOutput)
	emit := func(piece capBuf) {
		if piece.empty() {
			return
		}
		res.appendBuf(&piece)
		if out != nil {
			out(piece.String())
		}
	}
	// finish flushes the unfinished line into this Wait's output.
	finish := func(reason StopReason, err error) (Result, error) {
		s.mu.Lock()
		s.c.flushPartial()
		s.sink().write(s.c.take())
		piece := s.out.take()
		s.seenData = s.dataSeq
		s.mu.Unlock()
		emit(piece)
		return Result{Output: res.String(), Reason: reason}, err
	}

	begin := time.Now()
	s.mu.Lock()
	if s.closed || (s.reported && (s.dead != nil || !s.running)) {
		s.c.flushPartial()
		s.out.write(s.c.take())
		piece, exit := s.out.take(), s.lastExit
		err := s.dead
		if s.closed {
			err = ErrClosed
		}
		s.seenData = s.dataSeq
		s.mu.Unlock()
		emit(piece)
		if err != nil {
			return Result{Output: res.String(), Reason: ShellEnded}, err
		}
		return Result{Output: res.String(), Done: true, ExitCode: exit, Reason: Completed}, ErrNotRunning
	}
	seen := s.seenData
	s.mu.Unlock()

	var (
		gotOutput     bool
		lastOutput    = begin
		dialogChecked time.Time // lastOutput for which the dialog rule already looked
		timer         = time.NewTimer(time.Hour)
	)
	defer timer.Stop()
	for {
		s.mu.Lock()
		piece := s.out.take()
		if s.dataSeq != seen {
			seen = s.dataSeq
			gotOutput = true
			lastOutput = s.lastData
			if lastOutput.Before(begin) {
				lastOutput = begin
			}
		}
		done := !s.reported && !s.running
		exit, dead, closed, changed := s.lastExit, s.dead, s.closed, s.changed
		if done {
			s.reported = true
			s.out, s.after = s.after, newCapBuf(s.maxOutput)
			s.seenData = s.dataSeq
		}
		s.mu.Unlock()
		emit(piece)

		switch {
		case closed: // a completion now is only the shell reporting its jobs being killed
			return finish(ShellEnded, ErrClosed)
		case done:
			return Result{Output: res.String(), Done: true, ExitCode: exit, Reason: Completed}, nil
		case dead != nil:
			return finish(ShellEnded, dead)
		case ctx.Err() != nil:
			return finish(Interrupted, ctx.Err())
		}

		now := time.Now()
		var next time.Time
		due := func(at time.Time) bool {
			if !now.Before(at) {
				return true
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
			return false
		}
		if t.Max > 0 && due(begin.Add(t.Max)) {
			return finish(MaxTimeout, nil)
		}
		if !gotOutput {
			if t.FirstOutput > 0 && due(begin.Add(t.FirstOutput)) {
				return finish(FirstOutputTimeout, nil)
			}
		} else {
			if t.BetweenOutput > 0 && due(lastOutput.Add(t.BetweenOutput)) {
				return finish(BetweenOutputTimeout, nil)
			}
			if t.Dialog > 0 && !dialogChecked.Equal(lastOutput) && due(lastOutput.Add(t.Dialog)) {
				if s.dialogVisible() {
					return finish(Dialog, nil)
				}
				dialogChecked = lastOutput
			}
		}

		var fire <-chan time.Time
		if !next.IsZero() {
			timer.Reset(next.Sub(now))
			fire = timer.C
		}
		select {
		case <-changed:
		case <-fire:
		case <-ctx.Done():
		}
	}
}

func (s *Shell) dialogVisible() bool {
	s.mu.Lock()
	lines := s.c.lastLines()
	s.mu.Unlock()
	return looksLikeDialog(lines)
}

// Running reports whether a command has been started and has not finished.
func (s *Shell) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running && s.dead == nil && !s.closed
}

// Input types text and a newline into the terminal, for the running program
// to read: an answer to a prompt, a line for a REPL. It returns
// [ErrNotRunning] when no command runs, because text typed into the idle
// shell would run as an untracked command. The terminal is in canonical
// mode, so a single line should stay under 4096 bytes; control characters
// act as typed (e.g. "\x04" is end-of-file, "\x03" is ^C).
func (s *Shell) Input(text string) error {
	s.mu.Lock()
	err := s.usableLocked()
	running := s.running
	s.mu.Unlock()
	switch {
	case err != nil:
		return fmt.Errorf("input: %w", err)
	case !running:
		return fmt.Errorf("input: %w", ErrNotRunning)
	}
	if err := s.write(text + "\n"); err != nil {
		return fmt.Errorf("input: %w: %v", ErrUnavailable, err)
	}
	return nil
}

// Interrupt stops the running command and waits, bounded by ctx, until the
// shell is idle again; the shell itself survives. During the grace period
// the command's foreground job gets SIGINT, as with ^C (repeatedly, since a
// job that is still being forked or has not exec'd its program yet loses
// it); after the grace period, foreground jobs get SIGKILL, which also stops
// programs that ignore SIGINT. When the shell itself runs the command (a
// builtin such as read, or a loop of builtins), it gets SIGINT. The
// completion (exit status 130, 137, …) and the output are then returned by
// the next [Shell.Wait].
//
// A loop of shell builtins that ignores SIGINT (trap "" INT) cannot be
// stopped without killing the shell; Interrupt then returns ctx's error and
// the caller should Close the shell.
func (s *Shell) Interrupt(ctx context.Context) error {
	s.mu.Lock()
	err := s.usableLocked()
	running, seq := s.running, s.seq
	s.mu.Unlock()
	switch {
	case err != nil:
		return fmt.Errorf("interrupt: %w", err)
	case !running:
		return fmt.Errorf("interrupt: %w", ErrNotRunning)
	}
	// No signal before bash has read the whole command line: a SIGINT then
	// would be lost, or would cut a long command line apart.
	if _, err := s.await(ctx, 0, func() bool { return s.execSeq >= seq || s.doneSeq >= seq }); err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	var (
		// begin is when the first job got SIGINT, and firstINT when each
		// job did: a job's grace runs from its own first SIGINT, not from
		// before the signal's round trip (an exec on Docker, seconds on a
		// loaded machine), which would leave it no time to stop by itself;
		// and a loop's next short job gets SIGINT, not SIGKILL, which
		// would not end the loop.
		begin      time.Time
		shellSince time.Time // the shell has been in the foreground since then
		lastINT    = make(map[int]time.Time)
		firstINT   = make(map[int]time.Time)
		killed     = make(map[int]bool)
	)
	for first := true; ; first = false {
		pgrp, isShell, err := s.term.foreground()
		now := time.Now()
		switch {
		case err != nil:
			s.log.Debug("interrupt: no foreground group", "seq", seq, "err", err)
		case isShell:
			if shellSince.IsZero() {
				shellSince = now
			}
			// The shell runs a builtin, or is between two jobs, or has just
			// finished. A SIGINT that reaches it once it is idle again can
			// cut the next command line apart, so it gets one only when it
			// ran the command from the start, or has been in the
			// foreground for a whole grace period, or the command's jobs
			// have had SIGINT for two (a loop whose jobs ignore it, or end
			// before a signal reaches them), and then once per period.
			looping := !begin.IsZero() && now.Sub(begin) >= 2*s.grace
			if (first || looping || now.Sub(shellSince) >= s.grace) && now.Sub(lastINT[pgrp]) >= s.grace {
				if s.sendSignal(seq, pgrp, syscall.SIGINT) {
					lastINT[pgrp] = now
				}
			}
		case !firstINT[pgrp].IsZero() && now.Sub(firstINT[pgrp]) >= s.grace:
			shellSince = time.Time{}
			if !killed[pgrp] {
				killed[pgrp] = true
				s.sendSignal(seq, pgrp, syscall.SIGKILL)
			}
		default:
			shellSince = time.Time{}
			// A signal that missed (the job ended as it was sent) is
			// tried again at the next look, on the job then in front.
			if now.Sub(lastINT[pgrp]) >= interruptRepeat && s.sendSignal(seq, pgrp, syscall.SIGINT) {
				lastINT[pgrp] = now
				if firstINT[pgrp].IsZero() {
					firstINT[pgrp] = time.Now()
				}
				if begin.IsZero() {
					begin = firstINT[pgrp]
				}
			}
		}
		done, err := s.awaitDone(ctx, seq, interruptPoll)
		if err != nil {
			return fmt.Errorf("interrupt: %w", err)
		}
		if done {
			return nil
		}
	}
}

const (
	// interruptPoll is how often Interrupt looks at the foreground group.
	interruptPoll = 10 * time.Millisecond
	// interruptRepeat is how often a foreground job gets SIGINT again
	// during the grace period.
	interruptRepeat = 100 * time.Millisecond
)

// sendSignal signals pgrp unless command seq has completed meanwhile, and
// reports whether the signal was sent.
func (s *Shell) sendSignal(seq uint64, pgrp int, sig syscall.Signal) bool {
	s.mu.Lock()
	done := s.doneSeq >= seq
	s.mu.Unlock()
	if done {
		return false
	}
	if err := s.term.kill(pgrp, sig); err != nil {
		s.log.Debug("interrupt: signal not sent", "seq", seq, "pgrp", pgrp, "signal", sig.String(), "err", err)
		return false
	}
	s.log.Debug("interrupt: signal sent", "seq", seq, "pgrp", pgrp, "signal", sig.String())
	return true
}

// Close kills the shell and everything it started, and releases the
// terminal. A Wait in progress returns [ErrClosed]. Close is idempotent.
func (s *Shell) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.broadcastLocked()
		s.mu.Unlock()
		close(s.closedCh)
		s.closeErr = s.term.close()
		<-s.readerDone
		if s.onClose != nil {
			s.onClose(s)
		}
		s.log.Debug("shell closed")
	})
	return s.closeErr
}

// awaitDone waits until command seq has completed, for at most d (0: no
// limit). It reports false when d elapsed first.
func (s *Shell) awaitDone(ctx context.Context, seq uint64, d time.Duration) (bool, error) {
	return s.await(ctx, d, func() bool { return s.doneSeq >= seq })
}

// await waits until cond, evaluated under s.mu, holds.
func (s *Shell) await(ctx context.Context, d time.Duration, cond func() bool) (bool, error) {
	var expire <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expire = t.C
	}
	for {
		s.mu.Lock()
		ok := cond()
		err := s.usableLocked()
		changed := s.changed
		s.mu.Unlock()
		switch {
		case ok:
			return true, nil
		case err != nil:
			return false, err
		}
		select {
		case <-changed:
		case <-expire:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

func (s *Shell) write(text string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := io.WriteString(s.term, text)
	return err
}

func (s *Shell) usableLocked() error {
	switch {
	case s.closed:
		return ErrClosed
	case s.dead != nil:
		return s.dead
	}
	return nil
}

func (s *Shell) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// sink is where cleaned output goes: after a completion that no Wait has
// reported yet, later output must not be mixed into that command's result.
func (s *Shell) sink() *capBuf {
	if !s.reported && !s.running {
		return &s.after
	}
	return &s.out
}

// readLoop is the only reader of the terminal. It runs until the terminal
// fails (the shell exited, or Close closed it); Close waits for it.
func (s *Shell) readLoop() {
	defer close(s.readerDone)
	buf := make([]byte, readBufferSize)
	for {
		n, err := s.term.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.ingest(buf[:n], time.Now())
			s.broadcastLocked()
			s.mu.Unlock()
		}
		if err != nil {
			s.mu.Lock()
			s.feed(s.held, time.Now()) // an unfinished sentinel is just output now
			s.held = nil
			if s.closed {
				s.dead = ErrClosed
			} else {
				s.dead = fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			s.running = false
			s.broadcastLocked()
			s.mu.Unlock()
			s.log.Debug("shell reader stopped", "err", err)
			return
		}
	}
}

// ingest takes raw terminal bytes: it finds sentinels, also when one is split
// across reads (a possible sentinel start is held back until the next read
// decides), and feeds everything else to the cleaner.
func (s *Shell) ingest(p []byte, now time.Time) {
	data := p
	if len(s.held) > 0 {
		s.held = append(s.held, p...)
		data = s.held
	}
	for {
		i := bytes.Index(data, sentinelPrefixBytes)
		if i < 0 {
			keep := partialPrefixLen(data)
			s.feed(data[:len(data)-keep], now)
			s.held = append(s.held[:0], data[len(data)-keep:]...)
			return
		}
		s.feed(data[:i], now)
		body := data[i+len(sentinelPrefix):]
		j := bytes.IndexByte(body[:min(len(body), maxSentinelBody+1)], sentinelEnd)
		if j < 0 {
			if len(body) <= maxSentinelBody {
				s.held = append(s.held[:0], data[i:]...)
				return
			}
			// Too long to be ours: ordinary output (the cleaner drops the escape).
			s.feed(data[i:i+1], now)
			data = data[i+1:]
			continue
		}
		if !s.complete(body[:j]) {
			// Not a sentinel; a real one may start inside it, so move on by
			// one byte only.
			s.feed(data[i:i+1], now)
			data = data[i+1:]
			continue
		}
		data = body[j+1:]
	}
}

// complete handles a sentinel body. It returns false when the body is not a
// sentinel at all.
func (s *Shell) complete(body []byte) bool {
	nonce, status, started, ok := parseSentinel(body)
	if !ok {
		return false
	}
	if !s.running || nonce != s.nonce {
		// A late sentinel of an earlier command, never the current one's.
		s.log.Debug("stale sentinel ignored")
		return true
	}
	if started {
		s.execSeq = s.seq
		return true
	}
	s.c.endCommand()
	s.out.write(s.c.take())
	s.running = false
	s.reported = false
	s.lastExit = status
	s.doneSeq = s.seq
	s.log.Debug("command done", "seq", s.seq, "exit", status, "duration", time.Since(s.started))
	return true
}

func (s *Shell) feed(p []byte, now time.Time) {
	if len(p) == 0 {
		return
	}
	s.c.write(p)
	s.sink().write(s.c.take())
	s.dataSeq++
	s.lastData = now
}
