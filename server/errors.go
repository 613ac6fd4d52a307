package server

import "errors"

var (
	// ErrNotFound is returned for a session or approval id that is not known.
	ErrNotFound = errors.New("not found")
	// ErrClosed is returned by a session that was closed.
	ErrClosed = errors.New("session closed")
	// ErrSessionID is returned by Manager.Create when Options.NewSession built
	// a loop session whose id is not the one in the spec, or when the spec's
	// id is already in use.
	ErrSessionID = errors.New("bad session id")
	// ErrUnsupported is returned by Session.Configure when the manager
	// cannot build setups (Options.Setup is nil), and by Session.SetMode
	// for plan mode when it has no approval broker.
	ErrUnsupported = errors.New("not supported")
	// ErrHeld is returned for a stored session another live zero process
	// has open: it can be loaded once that process closes it or exits.
	ErrHeld = errors.New("open in another zero process")
	// ErrInvalid is returned for a value the session does not know (a
	// mode).
	ErrInvalid = errors.New("invalid")
)
