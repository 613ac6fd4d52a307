package loop

import (
	"context"
	"errors"
)

var (
	// ErrBusy is returned by Session.Run while a run is already going on.
	ErrBusy = errors.New("a run is already in progress in this session")
	// ErrNotRunning is returned by Session.Intervene when no run is going on.
	ErrNotRunning = errors.New("no run is in progress in this session")
	// ErrIntervened is the cancellation cause of a stream or tool that was
	// interrupted by a user message. Tools check it with [Intervened] so that
	// they return their partial output without killing what they started.
	ErrIntervened = errors.New("interrupted by a user message")
	// ErrCancelled is the cancellation cause of a run the user cancelled.
	// Every cancellation cause is ErrCancelled for errors.Is, so a check
	// for a cancelled run need not know why (see [ErrDisconnected],
	// [ErrShutdown]).
	ErrCancelled = errors.New("run cancelled")
	// ErrDisconnected is the cancellation cause of a run whose client went
	// away (an editor closed its connection): nobody asked to stop it.
	ErrDisconnected error = &cancelCause{why: "the client disconnected"}
	// ErrShutdown is the cancellation cause of a run that Zero stopped
	// because it is shutting down.
	ErrShutdown error = &cancelCause{why: "Zero is shutting down"}
	// ErrMisformat ends a run after too many consecutive replies that hold no
	// valid tool request.
	ErrMisformat = errors.New("the model keeps sending misformatted replies")
	// ErrRepeat ends a run after too many consecutive identical tool requests.
	ErrRepeat = errors.New("the model keeps repeating the same tool request")
	// ErrMessageTooLarge refuses a user message that cannot fit in the
	// model's context window.
	ErrMessageTooLarge = errors.New("the message is too large for the model's context")
)

// RepairableError is an error the model may be able to fix: it goes back to
// the model as a warning and the loop continues (Agent Zero's
// RepairableException).
type RepairableError struct{ Err error }

func (e *RepairableError) Error() string { return e.Err.Error() }
func (e *RepairableError) Unwrap() error { return e.Err }

// Repairable marks err as repairable.
func Repairable(err error) error { return &RepairableError{Err: err} }

// cancelCause is a cancellation for a reason other than the user's asking:
// it is ErrCancelled for errors.Is, and says why.
type cancelCause struct{ why string }

func (c *cancelCause) Error() string        { return "run cancelled: " + c.why }
func (c *cancelCause) Is(target error) bool { return target == ErrCancelled }

// CancelReason says in a few words why a run was cancelled, from its
// cause: "cancelled by the user", "cancelled: the client disconnected",
// "cancelled: Zero is shutting down". A cause that is not a cancellation
// (a deadline, say) is named as it is.
func CancelReason(cause error) string {
	var c *cancelCause
	switch {
	case errors.As(cause, &c):
		return "cancelled: " + c.why
	case cause == nil, errors.Is(cause, ErrCancelled), errors.Is(cause, context.Canceled):
		return "cancelled by the user"
	}
	return "cancelled: " + cause.Error()
}

// cancelCauseOf is what a cancelled run reports: one of the causes above,
// ErrCancelled for any other.
func cancelCauseOf(cause error) error {
	var c *cancelCause
	if errors.As(cause, &c) {
		return c
	}
	return ErrCancelled
}

// shownError is an error that was already shown as an event (a failed
// tool's tool_result): the error policy acts on it without saying it again.
type shownError struct{ err error }

func (e *shownError) Error() string { return e.err.Error() }
func (e *shownError) Unwrap() error { return e.err }

// CancelledFor is the cause of a cancelled run from its run_ended Error
// (which is empty when the user cancelled it): ErrDisconnected, ErrShutdown
// or ErrCancelled.
func CancelledFor(reason string) error {
	for _, c := range []error{ErrDisconnected, ErrShutdown} {
		if reason == CancelReason(c) {
			return c
		}
	}
	return ErrCancelled
}
