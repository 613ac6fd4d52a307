package loop

import "errors"

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
	ErrCancelled = errors.New("run cancelled")
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
