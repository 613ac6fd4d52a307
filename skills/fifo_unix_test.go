//go:build unix

package skills_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/zeroagent/zero/skills"
)

func TestDiscoverFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pipe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe", "SKILL.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, warns := skills.Discover(skills.Dir{Path: dir, Layer: "workspace"}) // must not block
	if !hasWarning(warns, "pipe/SKILL.md", skills.ErrNotRegular) {
		t.Errorf("warnings = %v, want ErrNotRegular for the FIFO", warns)
	}
}
