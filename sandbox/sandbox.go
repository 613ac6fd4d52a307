// Package sandbox runs the agent's commands in persistent interactive shells.
//
// A [Backend] starts shells: [Local] runs bash on the host in a pseudo-terminal;
// [Docker] (docker exec with a TTY) provides the same [Shell] over a
// different byte stream. The shell protocol is the same for every backend:
// each command gets a fresh random nonce, is handed to bash as one quoted
// string that is eval'd in the current shell (so cd, exports, functions and
// activated venvs persist), and bash reports the end of the command with an
// invisible escape sequence carrying the nonce and $?. Completion is
// therefore exact; Agent Zero's timeouts (first output, between outputs,
// total, dialog) still bound how long [Shell.Wait] waits for commands that
// run long or wait for input.
package sandbox

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
)

// Backend starts shells. Implementations: [Local] and [Docker].
type Backend interface {
	// Name identifies the backend to the editor, e.g. "local".
	Name() string
	// Workdir is the directory new shells start in.
	Workdir() string
	// OpenShell starts a new persistent shell. ctx bounds only the start-up,
	// not the shell's life. Failures wrap [ErrUnavailable] (the shell could
	// not be started or did not answer), ctx's error, or [ErrClosed] after
	// Close.
	OpenShell(ctx context.Context) (*Shell, error)
	// Close closes every shell the backend opened.
	Close() error
}

// DefaultMaxOutput caps the output kept for one [Result] (and the output
// buffered between Waits) when the backend's options leave it zero.
const DefaultMaxOutput = 1 << 20

// Timeouts bound one [Shell.Wait] call. All durations are measured from the
// start of that call, as Agent Zero does for each read of a terminal, so a
// second Wait after a timeout starts fresh. A zero field disables its rule;
// the zero Timeouts waits until the command completes or ctx is done.
type Timeouts struct {
	// FirstOutput gives up when the command has produced no output at all
	// during this Wait (Agent Zero: 30 s; 90 s for its "output" runtime).
	FirstOutput time.Duration
	// BetweenOutput gives up after this much silence following some output
	// (15 s / 45 s).
	BetweenOutput time.Duration
	// Max bounds the whole Wait (180 s / 300 s).
	Max time.Duration
	// Dialog: after this much silence, if one of the last two output lines
	// looks like a question or prompt, Wait returns so the caller can answer
	// with [Shell.Input] (5 s).
	Dialog time.Duration
}

var (
	// DefaultTimeouts are Agent Zero's timeouts for running code.
	DefaultTimeouts = Timeouts{FirstOutput: 30 * time.Second, BetweenOutput: 15 * time.Second, Max: 180 * time.Second, Dialog: 5 * time.Second}
	// OutputTimeouts are Agent Zero's longer timeouts for its "output"
	// runtime, which keeps reading a command that is still running.
	OutputTimeouts = Timeouts{FirstOutput: 90 * time.Second, BetweenOutput: 45 * time.Second, Max: 300 * time.Second, Dialog: 5 * time.Second}
)

// StopReason says why [Shell.Wait] returned.
type StopReason int

const (
	// Completed: the command finished; Result.ExitCode is valid.
	Completed StopReason = iota
	// FirstOutputTimeout: no output during Timeouts.FirstOutput.
	FirstOutputTimeout
	// BetweenOutputTimeout: silence for Timeouts.BetweenOutput after output.
	BetweenOutputTimeout
	// MaxTimeout: Timeouts.Max elapsed.
	MaxTimeout
	// Dialog: the command seems to wait for an answer (see Timeouts.Dialog).
	Dialog
	// Interrupted: ctx was done; the command was left running.
	Interrupted
	// ShellEnded: the shell is gone (closed, or exited); the error says which.
	ShellEnded
)

var stopReasonNames = [...]string{
	Completed:            "completed",
	FirstOutputTimeout:   "first-output-timeout",
	BetweenOutputTimeout: "between-output-timeout",
	MaxTimeout:           "max-timeout",
	Dialog:               "dialog",
	Interrupted:          "interrupted",
	ShellEnded:           "shell-ended",
}

// String returns a short kebab-case name, e.g. "first-output-timeout".
func (r StopReason) String() string {
	if r >= 0 && int(r) < len(stopReasonNames) {
		return stopReasonNames[r]
	}
	return "StopReason(" + strconv.Itoa(int(r)) + ")"
}

// Result is what one [Shell.Wait] call read.
type Result struct {
	// Output is the cleaned output (see [CleanOutput]) that arrived during
	// this Wait, without the completion sentinel, capped to the backend's
	// MaxOutput by keeping its head and tail around a
	// "[... N bytes omitted ...]" marker.
	Output string
	// Done reports that the command finished.
	Done bool
	// ExitCode is the command's exit status ($?), valid when Done.
	ExitCode int
	// Reason says why Wait returned.
	Reason StopReason
}

// closeAll closes shells in parallel, so that closing a backend with many
// shells costs about as much as closing one.
func closeAll(shells []*Shell) error {
	errs := make([]error, len(shells))
	var wg sync.WaitGroup
	for i, s := range shells {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
