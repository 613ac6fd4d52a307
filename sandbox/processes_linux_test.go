package sandbox

import (
	"strings"
	"testing"
)

// A job left running in the background is named (a rewind cannot undo
// what it does later); an idle shell names nothing.
func TestProcessesNamesBackgroundJobs(t *testing.T) {
	t.Parallel()
	s := openShell(t, LocalOptions{})
	if got := s.Processes(); len(got) != 0 {
		t.Fatalf("idle shell: Processes = %q, want none", got)
	}
	// The shell's child has exec'd sleep before the command completes.
	run(t, s, `sleep 300 & p=$!; until [ "$(cat /proc/$p/comm)" = sleep ]; do :; done; echo started`)
	got := s.Processes()
	if len(got) != 1 || !strings.Contains(got[0], "sleep 300") {
		t.Fatalf("Processes = %q, want the sleep", got)
	}
	run(t, s, "kill %1; wait")
	if got := s.Processes(); len(got) != 0 {
		t.Fatalf("after kill: Processes = %q, want none", got)
	}
}
