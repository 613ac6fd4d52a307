package hooks

import (
	"io/fs"
	"os/exec"
)

// ConfineProcess makes cmd the leader of a process group of its own that is
// killed whole when cmd's context ends, so that what a script started does
// not outlive it (the same as extension scripts get).
func ConfineProcess(cmd *exec.Cmd) {
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
}

// IsExecutable reports whether fi is a file this platform runs as a
// program (on Windows: by its extension).
func IsExecutable(fi fs.FileInfo) bool { return isExecutable(fi) }
