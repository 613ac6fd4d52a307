package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestIsEscape(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("out/passwd")
	if !IsEscape(err) {
		t.Errorf("IsEscape(%v) = false for a link out of the root", err)
	}
	_, err = root.Open("../x")
	if !IsEscape(err) {
		t.Errorf("IsEscape(%v) = false for ..", err)
	}
	// A rename's error wraps it in an *os.LinkError.
	err = &os.LinkError{Op: "rename", Old: "a", New: "b", Err: fmt.Errorf("wrapped: %w", ErrEscapes)}
	if !IsEscape(err) {
		t.Errorf("IsEscape(%v) = false through a LinkError", err)
	}
	if _, err := root.Open("nosuch"); IsEscape(err) {
		t.Errorf("IsEscape(%v) = true for a missing file", err)
	}
	if IsEscape(nil) {
		t.Error("IsEscape(nil) = true")
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"/w", true}, {"/w/a", true}, {"/w/a/../b", true}, {"/wx", false}, {"/", false}, {"/w/..", false}, {"/w/../x", false}, {"/w/..x", true},
	} {
		if got := Within("/w", filepath.Clean(tc.p)); got != tc.want {
			t.Errorf("Within(/w, %s) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/real/secret/path", Err: fs.ErrNotExist}, "no such file"},
		{&fs.PathError{Op: "open", Path: "/real/secret/path", Err: fs.ErrPermission}, "permission denied"},
		{errors.New("disk on fire"), "disk on fire"},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
