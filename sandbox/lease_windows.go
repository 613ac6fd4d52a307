//go:build windows

package sandbox

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// privateToMe: the user's temporary folder is private on Windows.
func privateToMe(fi fs.FileInfo) bool { return fi.IsDir() }

// lock takes an exclusive lock on f without waiting.
func lock(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
}

// fileOwner: Windows files have no uid.
func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
