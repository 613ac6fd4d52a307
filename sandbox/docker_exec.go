package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/errdefs"
	"github.com/docker/docker/pkg/stdcopy"
)

// shellBoot starts the shell: it creates HOME, reads the provisioning's
// profile (the venv's variables, which bash inherits), announces the shell's pid
// (the exec's pid as the container sees it, which bash keeps through
// exec), then becomes an interactive bash without start-up files.
const shellBoot = `mkdir -p "$HOME" 2>/dev/null; [ -r /etc/zero/profile ] && . /etc/zero/profile; ` +
	`printf '` + pidMarker + `%s\n' "$$"; ` +
	`exec bash --noprofile --norc --noediting -i`

const pidMarker = "zero-shell-pid:"

// homeFor is HOME for a user: root's own, else a writable folder the boot
// script creates.
func homeFor(user string) string {
	if user == "root" || user == "0" || strings.HasPrefix(user, "0:") || strings.HasPrefix(user, "root:") {
		return "/root"
	}
	return dockerHome
}

func (d *Docker) startTerminal(ctx context.Context, id, user string) (*dockerTerm, error) {
	// The tag comes last: DockerOptions.Env cannot override it.
	env := slices.Concat([]string{"HOME=" + homeFor(user)}, shellEnv, []string{"PWD=" + d.opts.Workspace}, d.opts.Env, d.tag())
	ex, err := d.api.ContainerExecCreate(ctx, id, container.ExecOptions{
		User:         user,
		Tty:          true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		Env:          env,
		WorkingDir:   d.opts.Workspace,
		Cmd:          []string{"/bin/sh", "-c", shellBoot},
	})
	if err != nil {
		return nil, d.engineErr("create shell exec", err)
	}
	resp, err := d.api.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{Tty: true})
	if err != nil {
		return nil, d.engineErr("start shell exec", err)
	}
	t := &dockerTerm{d: d, user: user, containerID: id, execID: ex.ID, resp: resp}
	if err := d.api.ContainerExecResize(ctx, ex.ID, container.ResizeOptions{Height: termRows, Width: termCols}); err != nil {
		d.log.Debug("resize shell terminal", "err", err)
	}
	if err := t.readPid(ctx); err != nil {
		resp.Close()
		return nil, fmt.Errorf("%w: shell did not start: %v", ErrUnavailable, err)
	}
	return t, nil
}

// dockerTerm is the [terminal] of a bash in a PTY exec.
type dockerTerm struct {
	d           *Docker
	user        string // the shell's user, for its helper execs too
	containerID string
	execID      string
	resp        types.HijackedResponse
	pid         int         // bash, as the container sees it; also its session and group
	noSweep     atomic.Bool // Docker.Close kills everything at once: close skips the sweep

	closeOnce sync.Once
	closeMu   sync.Mutex // guards closing
	closing   bool
}

// readPid reads the pid announcement that precedes everything else; what
// follows stays buffered in resp.Reader for the Shell.
func (t *dockerTerm) readPid(ctx context.Context) error {
	deadline := time.Now().Add(startupTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = t.resp.Conn.SetReadDeadline(deadline)
	defer t.resp.Conn.SetReadDeadline(time.Time{})
	for range 20 {
		line, err := t.resp.Reader.ReadString('\n')
		if i := strings.Index(line, pidMarker); i >= 0 {
			pid, perr := strconv.Atoi(strings.TrimSpace(line[i+len(pidMarker):]))
			if perr != nil || pid <= 0 {
				return fmt.Errorf("bad pid announcement %q", line)
			}
			t.pid = pid
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the shell's pid: %w (output: %q)", err, line)
		}
	}
	return errors.New("the shell did not announce its pid")
}

func (t *dockerTerm) isClosing() bool {
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	return t.closing
}

func (t *dockerTerm) Read(p []byte) (int, error) {
	n, err := t.resp.Reader.Read(p)
	if err == nil || t.isClosing() {
		return n, err
	}
	return n, t.ended(err)
}

// ended explains why the shell's stream ended: the container went away,
// or the shell exited. A killed container may still be reported running
// for a moment after its processes died, so a shell that died of a signal
// is looked at again for up to endedSettle.
func (t *dockerTerm) ended(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	deadline := time.Now().Add(endedSettle)
	for {
		info, ierr := t.d.api.ContainerInspect(ctx, t.containerID)
		switch {
		case errdefs.IsNotFound(ierr):
			return fmt.Errorf("the sandbox container %s was removed", t.d.name)
		case ierr == nil && info.State != nil && !info.State.Running:
			return fmt.Errorf("the sandbox container %s stopped (%s, exit code %d)", t.d.name, info.State.Status, info.State.ExitCode)
		}
		ex, xerr := t.d.api.ContainerExecInspect(ctx, t.execID)
		switch {
		case xerr == nil && !ex.Running && ex.ExitCode < 128:
			return fmt.Errorf("shell ended: exit status %d", ex.ExitCode)
		case time.Now().After(deadline):
			if xerr == nil && !ex.Running {
				return fmt.Errorf("shell ended: exit status %d", ex.ExitCode)
			}
			return fmt.Errorf("shell stream ended: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endedSettle bounds how long [dockerTerm.ended] waits for the engine to
// notice a dead container.
const endedSettle = time.Second

func (t *dockerTerm) Write(p []byte) (int, error) { return t.resp.Conn.Write(p) }

func (t *dockerTerm) foreground() (int, bool, error) {
	out, code, err := t.helper("cat /proc/" + strconv.Itoa(t.pid) + "/stat")
	if err != nil {
		return 0, false, err
	}
	if code != 0 {
		return 0, false, errors.New("shell ended")
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid ...
	i := strings.LastIndexByte(out, ')')
	if i < 0 {
		return 0, false, fmt.Errorf("unexpected stat line %q", out)
	}
	f := strings.Fields(out[i+1:])
	if len(f) < 6 {
		return 0, false, fmt.Errorf("unexpected stat line %q", out)
	}
	pgrp, err := strconv.Atoi(f[5])
	if err != nil || pgrp <= 0 {
		return 0, false, fmt.Errorf("no foreground process group (%s)", f[5])
	}
	return pgrp, pgrp == t.pid, nil
}

func (t *dockerTerm) kill(pgrp int, sig syscall.Signal) error {
	if pgrp == t.pid && sig != syscall.SIGINT {
		return errShellGroup
	}
	_, code, err := t.helper(fmt.Sprintf("kill -n %d -- -%d", int(sig), pgrp))
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("kill -%d -%d: exit status %d", int(sig), pgrp, code)
	}
	return nil
}

// resetModes does nothing: restoring the modes would cost an exec per
// command. The init script turned echo off; a program that turns it back
// on and exits without restoring it makes later commands echo.
func (t *dockerTerm) resetModes() error { return nil }

// sweepScript SIGKILLs every process of the session given as $1 (the
// shell's), three times for processes forked meanwhile, with bash alone, so
// that it works in images without procps.
const sweepScript = `for _ in 1 2 3; do for f in /proc/[0-9]*/stat; do ` +
	`read -r l < "$f" 2>/dev/null || continue; set -- $l; p=$1; l=${l##*) }; set -- $l; ` +
	`[ "$4" = "$0" ] && [ "$1" != Z ] && kill -9 "$p" 2>/dev/null; done; done; true`

func (t *dockerTerm) close() error {
	t.closeOnce.Do(func() {
		t.closeMu.Lock()
		t.closing = true
		t.closeMu.Unlock()
		if !t.noSweep.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
			defer cancel()
			if _, _, err := t.run(ctx, []string{"bash", "-c", sweepScript, strconv.Itoa(t.pid)}); err != nil {
				t.d.log.Debug("sweeping the shell's processes", "err", err)
			}
		}
		t.resp.Close()
	})
	return nil
}

// helper runs script with bash in the container as the shell's user and
// returns its stdout and exit status.
func (t *dockerTerm) helper(script string) (string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	return t.run(ctx, []string{"bash", "-c", script})
}

// run executes argv in the shell's container as the shell's user, tagged
// as this backend's.
func (t *dockerTerm) run(ctx context.Context, argv []string) (string, int, error) {
	return t.d.exec(ctx, t.containerID, t.user, t.d.tag(), argv)
}

// tag is the environment that marks an exec, and what it starts, as this
// backend instance's.
func (d *Docker) tag() []string { return []string{"ZERO_INSTANCE=" + d.instance} }

// exec runs argv in the target container (a name or ID) as user without
// a terminal, with env added to the container's environment, and collects
// its stdout; stderr is discarded.
func (d *Docker) exec(ctx context.Context, target, user string, env, argv []string) (string, int, error) {
	return d.execUntil(ctx, target, user, env, argv, "")
}

// errSeen stops reading an exec's output at the text execUntil waits for.
var errSeen = errors.New("seen")

// untilWriter collects output and fails with errSeen once it holds until.
type untilWriter struct {
	strings.Builder
	until string
}

func (w *untilWriter) Write(p []byte) (int, error) {
	n, _ := w.Builder.Write(p)
	if w.until != "" && strings.Contains(w.String(), w.until) {
		return n, errSeen
	}
	return n, nil
}

// execUntil is exec that, when until is not empty, returns as soon as
// stdout holds until, with exit status 0, instead of at the end of the
// exec; when the output ends without it, that is an error.
func (d *Docker) execUntil(ctx context.Context, target, user string, env, argv []string, until string) (string, int, error) {
	ex, err := d.api.ContainerExecCreate(ctx, target, container.ExecOptions{
		User:         user,
		Env:          env,
		AttachStdout: true,
		AttachStderr: true,
		Cmd:          argv,
	})
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	resp, err := d.api.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	defer resp.Close()
	stdout := untilWriter{until: until}
	switch _, err := stdcopy.StdCopy(&stdout, io.Discard, resp.Reader); {
	case errors.Is(err, errSeen):
		return stdout.String(), 0, nil
	case err != nil:
		return "", 0, fmt.Errorf("exec %s: reading output: %w", argv[0], err)
	case until != "":
		return "", 0, fmt.Errorf("exec %s: ended before it was done", argv[0])
	}
	info, err := d.api.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		return "", 0, fmt.Errorf("exec %s: %w", argv[0], err)
	}
	return stdout.String(), info.ExitCode, nil
}
