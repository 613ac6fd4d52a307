//go:build unix

package checkpoint

import "syscall"

// oNonblock keeps an open of a FIFO that replaced a file from hanging.
const oNonblock = syscall.O_NONBLOCK
