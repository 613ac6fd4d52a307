//go:build !unix && !windows

package store

import (
	"errors"
	"os"
)

// No file locks here: a session's row and its pid's liveness decide.
const lockable = false

var errLocked = errors.New("locked")

func lockExclusive(*os.File) error { return nil }
