//go:build unix

package hooks

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the script's process group, which outlives the script itself while anything it
// started is still running.
func killGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func isExecutable(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func isTextBusy(err error) bool { return errors.Is(err, syscall.ETXTBSY) }
