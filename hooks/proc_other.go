//go:build !unix

package hooks

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Without process groups only the script itself can be killed.
func setProcessGroup(*exec.Cmd) {}

func killGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	return p.Kill()
}

// isExecutable goes by extension where the file mode has no execute bits.
func isExecutable(fi fs.FileInfo) bool {
	if !fi.Mode().IsRegular() {
		return false
	}
	switch strings.ToLower(filepath.Ext(fi.Name())) {
	case ".exe", ".com", ".bat", ".cmd":
		return true
	}
	return false
}

func isTextBusy(error) bool { return false }
