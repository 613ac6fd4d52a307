package server

import (
	"path/filepath"
	"testing"
)

// The file system's root and a folder holding the home are not
// snapshotted (every file of the user's before each run); a workspace is.
func TestTooBroad(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	for root, broad := range map[string]bool{"/": true, home: true, filepath.Dir(home): true, filepath.Join(home, "code", "app"): false, t.TempDir(): false} {
		if got := tooBroad(root) != ""; got != broad {
			t.Errorf("tooBroad(%q) = %q, want broad %v", root, tooBroad(root), broad)
		}
	}
}
