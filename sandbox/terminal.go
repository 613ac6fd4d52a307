package sandbox

import (
	"errors"
	"io"
	"syscall"
)

// terminal is what a backend provides for one shell: the byte stream of a
// pseudo-terminal in which bash runs interactively, plus process control.
// Everything else (the protocol, reading, waiting, cleaning) is in [Shell],
// identical for every backend.
//
// Read is called by one goroutine only; it must return an error once the
// shell has exited and its output is drained, and promptly after close.
// Write, foreground, kill, resetModes and close may be called concurrently
// with Read
// and with each other.
type terminal interface {
	io.Reader
	io.Writer
	// foreground returns the terminal's foreground process group, the job
	// the shell is running, and whether that group is the shell's own (it
	// runs a builtin such as read or a loop, or is between two jobs).
	foreground() (pgrp int, isShell bool, err error)
	// kill sends sig to process group pgrp. It refuses any signal but
	// SIGINT to the shell's own group: killing the shell is what close is
	// for.
	kill(pgrp int, sig syscall.Signal) error
	// resetModes restores the line-discipline settings the protocol relies
	// on (canonical input, no echo) in case a program left them changed. It
	// is called before each command; a backend that cannot do this cheaply
	// may do nothing.
	resetModes() error
	// close kills the shell and every process it started and releases the
	// terminal. It is idempotent and returns only when the backend's own
	// goroutines are done.
	close() error
}

// errShellGroup: the signal was not sent because it would kill the shell.
var errShellGroup = errors.New("only SIGINT may be sent to the shell's own process group")
