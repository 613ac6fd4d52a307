package app

import "golang.org/x/sys/unix"

// Harden makes this process non-dumpable: its /proc/<pid>/environ, mem and
// fds then belong to root, so a command the agent runs as the same user
// without a PID namespace (the local backend without bubblewrap) cannot
// read Zero's API key from its environment, nor attach a debugger to it.
// Commands it starts are dumpable again once they exec.
func Harden() {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
