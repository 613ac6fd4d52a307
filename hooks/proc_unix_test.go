//go:build unix

package hooks

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/proctest"
)

// waitGone fails the test unless process pid disappears (or is a zombie nobody reaps) within 5 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !proctest.Gone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("process %d still alive", pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readPID waits up to 5 s for a script to write its child's pid into path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		var pid int
		if err == nil {
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
