//go:build !(linux || openbsd || dragonfly || solaris || illumos || darwin || freebsd || netbsd)

package checkpoint

import "io/fs"

// inoCtime: this platform gives neither; the stat cache uses size and mtime.
func inoCtime(fi fs.FileInfo) (uint64, int64) { return 0, 0 }
