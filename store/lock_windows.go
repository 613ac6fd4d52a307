//go:build windows

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

const lockable = true

var errLocked = errors.New("locked")

// lockExclusive takes an exclusive lock on f without waiting.
func lockExclusive(f *os.File) error {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	return err
}
