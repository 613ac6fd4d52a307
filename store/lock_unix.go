//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

const lockable = true

var errLocked = errors.New("locked")

// lockExclusive takes an exclusive lock on f without waiting.
func lockExclusive(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}
