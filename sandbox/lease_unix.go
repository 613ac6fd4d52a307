//go:build !windows

package sandbox

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// privateToMe reports whether fi (a directory) is this user's and closed
// to others.
func privateToMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().Perm()&0o077 == 0 && int(st.Uid) == os.Getuid()
}

// lock takes an exclusive lock on f without waiting.
func lock(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := sc.Control(func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
		return err
	}
	return lerr
}

// fileOwner is the uid and gid that own fi.
func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
