package sandbox

import (
	"errors"
	"strings"
)

var (
	// ErrUnavailable means the sandbox infrastructure is broken: the shell
	// died (for example the model typed `exit`), could not be started, or the
	// backend is gone. Callers open a new shell.
	ErrUnavailable = errors.New("sandbox unavailable")
	// ErrBusy is returned by [Shell.Start] while the previous command is
	// still running in the shell.
	ErrBusy = errors.New("a command is still running in this shell")
	// ErrNotRunning is returned when an operation needs a running command
	// and there is none.
	ErrNotRunning = errors.New("no command is running in this shell")
	// ErrClosed is returned after [Shell.Close] or [Backend.Close].
	ErrClosed = errors.New("shell closed")
	// ErrInvalidCommand is returned by [Shell.Start] for a command bash
	// cannot represent (it contains a NUL byte).
	ErrInvalidCommand = errors.New("invalid command")
)

// PullError means the engine answered but could not pull the image: the
// machine is offline, the registry refuses, or there is no such image. It
// matches [ErrUnavailable].
type PullError struct {
	Image string
	Err   error // the engine's answer
}

// Error is "cannot pull image IMAGE: <the engine's reason>", on one line.
func (e *PullError) Error() string {
	return "cannot pull image " + e.Image + ": " + strings.Join(strings.Fields(e.Err.Error()), " ")
}

// Unwrap makes the error match [ErrUnavailable] and the engine's error.
func (e *PullError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }
