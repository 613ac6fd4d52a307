//go:build !windows

package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// exitDrain is how long output is still read after the shell exited, in
// case a process it left behind (one that escaped into its own session)
// keeps the terminal open.
const exitDrain = 200 * time.Millisecond

// Local is the backend that runs bash on the host, in a pseudo-terminal,
// in [LocalOptions.Dir]. Without bubblewrap it does not isolate commands
// from the host; [Local.IsolationSummary] says what is in force.
type Local struct {
	opts      LocalOptions
	shell     string // resolved path of opts.Shell
	bwrap     string // resolved bwrap when isolation is on
	isolation string // IsolationNone or IsolationBubblewrap, as in force
	why       string // why auto isolation fell back to none
	// probed is closed once auto isolation's bwrap probe has set bwrap,
	// isolation and why (nil: they were set by NewLocal); read them after
	// settle only.
	probed     chan struct{}
	resolvConf string // bound back in when it lies in a hidden directory and the network is on
	log        *slog.Logger

	mu     sync.Mutex
	shells map[*Shell]struct{}
	closed bool
}

var _ Backend = (*Local)(nil)

// NewLocal checks opts and returns a local backend. Shells run
// `bash --noprofile --norc --noediting -i` in their own session with job
// control, so each command gets its own process group, with TERM=dumb,
// PAGER=cat, GIT_PAGER=cat, MANPAGER=cat, no history file, empty prompts,
// and the terminal not echoing input.
func NewLocal(opts LocalOptions) (*Local, error) {
	if opts.Dir == "" {
		return nil, errors.New("local sandbox: LocalOptions.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("local sandbox: dir %q: %w", opts.Dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("local sandbox: dir: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("local sandbox: dir %q is not a directory", dir)
	}
	opts.Dir = dir
	opts.Shell = cmp.Or(opts.Shell, "/bin/bash")
	shell, err := exec.LookPath(opts.Shell)
	if err != nil {
		return nil, fmt.Errorf("local sandbox: shell: %w: %v", ErrUnavailable, err)
	}
	opts.Env = slices.Clone(opts.Env)
	opts.BaseEnv = slices.Clone(opts.BaseEnv)
	if opts.Hide == nil {
		opts.Hide = userHidden()
	} else {
		opts.Hide = slices.Clone(opts.Hide)
	}
	for _, p := range opts.Hide {
		if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
			return nil, fmt.Errorf("local sandbox: hide %q: want an absolute path other than /", p)
		}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Local{opts: opts, shell: shell, log: logger, shells: make(map[*Shell]struct{}), isolation: IsolationNone, resolvConf: "/etc/resolv.conf"}
	switch opts.Isolation {
	case "", IsolationNone:
	case IsolationBubblewrap, IsolationAuto:
		bw, err := exec.LookPath("bwrap")
		if err == nil && opts.Isolation == IsolationAuto {
			// The probe (bwrap and a shell run once, some 15-30 ms) goes
			// on while the caller opens the rest; whatever asks how the
			// commands are confined, or starts a shell, waits for it.
			l.probed = make(chan struct{})
			go func() {
				defer close(l.probed)
				if err := l.probeBwrap(bw); err != nil {
					l.why = err.Error()
					return
				}
				l.bwrap, l.isolation = bw, IsolationBubblewrap
			}()
			break
		}
		if err == nil {
			err = l.probeBwrap(bw)
		}
		switch {
		case err == nil:
			l.bwrap, l.isolation = bw, IsolationBubblewrap
		case opts.Isolation == IsolationBubblewrap:
			return nil, fmt.Errorf("local sandbox: bubblewrap: %w: %v", ErrUnavailable, err)
		default:
			l.why = err.Error()
		}
	default:
		return nil, fmt.Errorf("local sandbox: isolation %q: want none, bubblewrap or auto", opts.Isolation)
	}
	return l, nil
}

// Isolation says which isolation is in force (IsolationNone or
// IsolationBubblewrap) and, for auto that fell back to none, why.
func (l *Local) Isolation() (mode, why string) {
	l.settle()
	return l.isolation, l.why
}

// settle waits for auto isolation's probe, if any.
func (l *Local) settle() {
	if l.probed != nil {
		<-l.probed
	}
}

// IsolationSummary describes for people, in one line, what confines the
// shells, e.g. "bubblewrap: workspace writable, rest read-only, private
// /tmp and PIDs, no network, 7 sensitive paths hidden". Paths are counted
// as they are now; each new shell looks again.
func (l *Local) IsolationSummary() string {
	l.settle()
	if l.isolation != IsolationBubblewrap {
		s := "none: commands run unconfined, as you, with your files, processes and network"
		if l.why != "" {
			s += " (" + l.why + ")"
		}
		return s
	}
	net := "no network"
	if l.opts.Network {
		net = "host network"
	}
	hidden := 0
	for _, m := range l.mountPlan() {
		if m.kind == hideDir || m.kind == hideFile {
			hidden++
		}
	}
	files := "workspace writable, rest read-only"
	if writableRoot(l.mountPlan()) {
		files = "the whole file system writable (the workspace is /)"
	}
	return fmt.Sprintf("bubblewrap: %s, private /tmp and PIDs, %s, %d sensitive paths hidden", files, net, hidden)
}

// probeBwrap checks that bwrap can build the sandbox here (it needs user
// namespaces, which some machines forbid).
//
// bwrap binds the whole mount table, so a mount that vanishes meanwhile (a
// Docker container's overlay being removed) fails it with "Can't bind
// mount ... Invalid argument": the probe, like a shell's start, is tried
// again a few times before bwrap is judged not to work.
func (l *Local) probeBwrap(bw string) error {
	var err error
	var out []byte
	for try := range bwrapTries {
		if try > 0 {
			time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		}
		out, err = exec.Command(bw, append(l.bwrapArgs(), "--", "/bin/sh", "-c", "exit 0")...).CombinedOutput()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("bwrap does not work here: %v: %s", err, strings.TrimSpace(string(out)))
}

// bwrapTries is how often bwrap is started before its failure counts.
const bwrapTries = 3

// errBwrapSetup: bwrap failed before it started the shell.
var errBwrapSetup = errors.New("bwrap could not set up the sandbox")

// Name returns "local".
func (l *Local) Name() string { return "local" }

// Workdir returns the absolute directory shells start in.
func (l *Local) Workdir() string { return l.opts.Dir }

// OpenShell starts a new bash and waits until it is ready for commands;
// ctx bounds only this start-up.
func (l *Local) OpenShell(ctx context.Context) (*Shell, error) {
	l.settle()
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("open local shell: %w", ErrClosed)
	}
	term, err := l.startTerminal()
	for try := 1; errors.Is(err, errBwrapSetup) && try < bwrapTries; try++ {
		time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		term, err = l.startTerminal()
	}
	if err != nil {
		return nil, fmt.Errorf("open local shell: %w: %v", ErrUnavailable, err)
	}
	log := l.log.With("backend", "local", "shell_pid", term.pid)
	s := newShell(term, shellConfig{maxOutput: l.opts.MaxOutput, grace: l.opts.InterruptGrace, logger: log})
	if err := s.handshake(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open local shell: %w", err)
	}
	s.onClose = l.forget
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		_ = s.Close()
		return nil, fmt.Errorf("open local shell: %w", ErrClosed)
	}
	l.shells[s] = struct{}{}
	l.mu.Unlock()
	log.Debug("shell opened", "dir", l.opts.Dir)
	return s, nil
}

// Close closes every shell the backend opened; later OpenShell calls fail
// with [ErrClosed].
func (l *Local) Close() error {
	l.settle() // the probe's bwrap is not left running
	l.mu.Lock()
	l.closed = true
	shells := make([]*Shell, 0, len(l.shells))
	for s := range l.shells {
		shells = append(shells, s)
	}
	l.mu.Unlock()
	return closeAll(shells)
}

func (l *Local) forget(s *Shell) {
	l.mu.Lock()
	delete(l.shells, s)
	l.mu.Unlock()
}

func (l *Local) startTerminal() (*localTerm, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	defer tty.Close()
	if err := pty.Setsize(master, &pty.Winsize{Rows: termRows, Cols: termCols}); err != nil {
		master.Close()
		return nil, fmt.Errorf("set pty size: %w", err)
	}
	// Echo off before bash starts, so not even the init script is echoed.
	if err := setProtocolModes(int(tty.Fd())); err != nil {
		master.Close()
		return nil, fmt.Errorf("set terminal modes: %w", err)
	}

	argv := []string{l.shell, "--noprofile", "--norc", "--noediting", "-i"}
	var infoR, infoW *os.File // bwrap reports the shell's pid here
	if l.bwrap != "" {
		if infoR, infoW, err = os.Pipe(); err != nil {
			master.Close()
			return nil, fmt.Errorf("bwrap info pipe: %w", err)
		}
		defer infoR.Close()
		argv = slices.Concat([]string{l.bwrap}, l.bwrapArgs(), []string{"--info-fd", "3", "--"}, argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = l.opts.Dir
	// PWD lets bash keep the logical path of Dir when it contains symlinks.
	base := l.opts.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	own := []string{"PWD=" + l.opts.Dir}
	if l.bwrap != "" {
		// The host's TMPDIR may be read-only or hidden in the sandbox;
		// its private /tmp is writable.
		own = append(own, "TMPDIR=/tmp")
	}
	cmd.Env = slices.Concat(base, shellEnv, own, l.opts.Env)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if infoW != nil {
		cmd.ExtraFiles = []*os.File{infoW} // fd 3
	}
	// A session of its own, with the pty as controlling terminal: bash
	// turns on job control, and Close can find everything by session id.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	if infoW != nil {
		infoW.Close()
	}
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	shellPid := cmd.Process.Pid
	if infoR != nil {
		// bwrap runs bash as its child, as PID 1 of a PID namespace of
		// its own (--as-pid-1). child-pid is bash's pid as the host sees
		// it, the numbering TIOCGPGRP, kill(2) and /proc use here: signals
		// and the idle check need it; the sweep needs the session
		// (bwrap's pid). When bash, the namespace's init, dies, the kernel
		// kills everything left in the namespace, also processes that
		// escaped into a session of their own.
		var info struct {
			ChildPid int `json:"child-pid"`
		}
		if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPid <= 0 {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			master.Close()
			return nil, fmt.Errorf("%w: it did not report the shell's pid: %v", errBwrapSetup, err)
		}
		shellPid = info.ChildPid
	}
	f, err := pollable(master)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	t := &localTerm{f: f, cmd: cmd, pid: shellPid, sid: cmd.Process.Pid, exited: make(chan struct{})}
	go t.waitShell()
	return t, nil
}

// pollable replaces the pty master by a non-blocking copy registered with
// Go's poller. creack/pty hands out a blocking *os.File; a Read blocked in
// read(2) on it would survive Close and leak the reader goroutine, and read
// deadlines would not work.
func pollable(master *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	master.Close()
	if err != nil {
		return nil, fmt.Errorf("dup pty: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pty non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// setProtocolModes makes the line discipline what the protocol expects:
// no echo, canonical input, signal characters on. It changes nothing (and
// makes no write) when the modes are already right.
func setProtocolModes(fd int) error {
	t, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return err
	}
	want := *t
	want.Lflag &^= unix.ECHO | unix.ECHONL
	want.Lflag |= unix.ICANON | unix.ISIG
	if want.Lflag == t.Lflag {
		return nil
	}
	return unix.IoctlSetTermios(fd, ioctlWriteTermios, &want)
}

// localTerm is the [terminal] of a local bash.
type localTerm struct {
	f       *os.File // pty master, pollable; never call f.Fd() (it makes f blocking)
	cmd     *exec.Cmd
	pid     int // bash, also its process group
	sid     int // the session: bash's pid, or bwrap's when bash runs under it
	exited  chan struct{}
	status  string // how bash ended; written before exited is closed
	closing atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// waitShell owns cmd.Wait. When bash ends (killed, or the model typed
// `exit`), what it left behind is killed too, and reading stops after a
// short drain even if an escaped process keeps the terminal open.
func (t *localTerm) waitShell() {
	defer close(t.exited)
	err := t.cmd.Wait()
	t.status = "exit status 0"
	if err != nil {
		t.status = err.Error()
	}
	sweepSession(t.sid)
	_ = t.f.SetReadDeadline(time.Now().Add(exitDrain))
}

// processes names what runs in the shell's session besides bash (and
// bubblewrap), nil when nothing does.
func (t *localTerm) processes() []string {
	select {
	case <-t.exited:
		return nil
	default:
	}
	return sessionProcesses(t.sid, t.sid, t.pid)
}

func (t *localTerm) Read(p []byte) (int, error) {
	n, err := t.f.Read(p)
	if err == nil || t.closing.Load() {
		return n, err
	}
	// EIO (no process has the terminal open any more) usually arrives just
	// before cmd.Wait returns; wait briefly to report how the shell ended.
	select {
	case <-t.exited:
		return n, fmt.Errorf("shell ended: %s", t.status)
	case <-time.After(time.Second):
		return n, err
	}
}

func (t *localTerm) Write(p []byte) (int, error) { return t.f.Write(p) }

// control runs fn on the master's descriptor without taking it out of the
// poller (which f.Fd would do).
func (t *localTerm) control(fn func(fd int) error) error {
	sc, err := t.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (t *localTerm) foreground() (int, bool, error) {
	select {
	case <-t.exited:
		return 0, false, fmt.Errorf("shell ended: %s", t.status)
	default:
	}
	var pgrp int
	err := t.control(func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("TIOCGPGRP: %w", err)
	}
	if pgrp <= 0 {
		return 0, false, fmt.Errorf("no foreground process group (%d)", pgrp)
	}
	return pgrp, pgrp == t.pid, nil
}

func (t *localTerm) kill(pgrp int, sig syscall.Signal) error {
	if pgrp == t.pid && sig != syscall.SIGINT {
		return errShellGroup
	}
	select {
	case <-t.exited:
		return fmt.Errorf("shell ended: %s", t.status)
	default:
	}
	if err := unix.Kill(-pgrp, sig); err != nil {
		return fmt.Errorf("kill -%s -%d: %w", sig, pgrp, err)
	}
	return nil
}

// resetModes works on the master: on Linux, termios requests on a pty
// master act on its slave, so no descriptor of the slave is kept open.
func (t *localTerm) resetModes() error { return t.control(setProtocolModes) }

func (t *localTerm) close() error {
	t.closeOnce.Do(func() {
		t.closing.Store(true)
		select {
		case <-t.exited:
			// bash is gone and waitShell already swept its session.
		default:
			// The shell first, so it cannot report on the jobs dying.
			pgrp, isShell, err := t.foreground()
			_ = unix.Kill(-t.pid, unix.SIGKILL)
			if err == nil && !isShell {
				_ = unix.Kill(-pgrp, unix.SIGKILL)
			}
			sweepSession(t.sid)
		}
		t.closeErr = t.f.Close()
		<-t.exited
	})
	return t.closeErr
}
