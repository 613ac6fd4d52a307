// Package proctest helps tests check that processes they caused are gone.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HangGuard bounds what a test waits for that should never hang (a child
// process, a run of the agent): long enough never to fire on a loaded
// machine, so it decides nothing, short enough to name the test that hung
// before go test's own timeout ends the whole package.
const HangGuard = 8 * time.Minute

// Gone reports whether process pid no longer runs: it does not exist, or
// it is a zombie (a killed orphan stays one until init reaps it, which a
// container's init may never do).
func Gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// WaitGone polls until pid is gone or d has passed, and reports whether it
// is gone.
func WaitGone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if Gone(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// ReadPID polls until the file at path holds a pid, for at most d.
func ReadPID(path string, d time.Duration) (int, bool) {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid, true
		}
		if time.Now().After(deadline) {
			return 0, false
		}
	}
}

// FindByArg polls until a process whose command line has an argument equal
// to arg runs, for at most d, and returns its pid as this process sees it.
// Commands in a sandbox with its own PID namespace report other pids, so
// tests give them a unique argument (sleep 300.<random>) and look it up.
func FindByArg(arg string, d time.Duration) (int, bool) {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			for _, a := range bytes.Split(cmdline, []byte{0}) {
				if string(a) == arg && !Gone(pid) {
					return pid, true
				}
			}
		}
		if time.Now().After(deadline) {
			return 0, false
		}
	}
}

// Buffer collects what a process or a logger writes, from any goroutine,
// while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
