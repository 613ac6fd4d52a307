package sandbox

import "errors"

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
