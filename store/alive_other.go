//go:build !unix

package store

import "os"

// alive reports whether process pid is this one: elsewhere than on Unix the
// store does not look for other processes, and takes them for gone.
func alive(pid int) bool {
	return pid == os.Getpid()
}
