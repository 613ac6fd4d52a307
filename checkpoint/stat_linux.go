//go:build linux || openbsd || dragonfly || solaris || illumos

package checkpoint

import (
	"io/fs"
	"syscall"
)

// inoCtime returns the inode number and the ctime in ns of fi.
func inoCtime(fi fs.FileInfo) (uint64, int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec)
}
