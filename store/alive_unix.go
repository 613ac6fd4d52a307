//go:build unix

package store

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// alive reports whether process pid exists (and, on Linux, is not a zombie:
// a killed orphan may stay one for long where nobody reaps it).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false // ESRCH: no such process
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// Gone since signal 0 if /proc works; else (not Linux) trust
		// signal 0.
		_, perr := os.Stat("/proc/self/stat")
		return !errors.Is(err, os.ErrNotExist) || perr != nil
	}
	i := bytes.LastIndexByte(stat, ')') // the name may hold any byte
	return !(i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X'))
}
