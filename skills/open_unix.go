//go:build unix

package skills

import "syscall"

// openFlags makes opening a FIFO that replaced SKILL.md return at once instead of waiting for a
// writer; for a regular file it changes nothing.
const openFlags = syscall.O_NONBLOCK
