package texteditor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PreviewChange shows what a write or patch would leave, reading the file
// only inside the workspace: a path or a symlink that leads out shows
// nothing of what is there.
func TestChat21PreviewChange(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	one := 2
	for _, tc := range []struct {
		name, method string
		args         map[string]any
		old          *string // nil: a new file
		new, msg     string  // msg: not ok, with this in the reason
	}{
		{name: "write existing", method: "write", args: map[string]any{"path": "a.txt", "content": "ONE\n"}, old: ptr("one\ntwo\n"), new: "ONE\n"},
		{name: "write new", method: "write", args: map[string]any{"path": "sub/b.txt", "content": "x\n"}, new: "x\n"},
		{name: "patch", method: "patch", args: map[string]any{"path": "a.txt", "edits": []any{map[string]any{"from": one, "to": one, "content": "TWO"}}}, old: ptr("one\ntwo\n"), new: "one\nTWO\n"},
		{name: "patch out of range", method: "patch", args: map[string]any{"path": "a.txt", "edits": []any{map[string]any{"from": 9, "to": 9, "content": "x"}}}, msg: "the file has 2 lines"},
		{name: "outside", method: "write", args: map[string]any{"path": filepath.Join(outside, "secret"), "content": "x"}, msg: "outside the workspace"},
		{name: "symlink out", method: "patch", args: map[string]any{"path": "link.txt", "edits": []any{map[string]any{"from": 1, "to": 1, "content": "x"}}}, msg: "outside the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, msg, ok := PreviewChange([]string{ws}, tc.method, tc.args)
			if tc.msg != "" {
				if ok || !strings.Contains(msg, tc.msg) || strings.Contains(d.NewText+msg, "SECRET") {
					t.Errorf("= %+v, %q, %v; want not ok with %q", d, msg, ok, tc.msg)
				}
				return
			}
			if !ok || d.NewText != tc.new || (d.OldText == nil) != (tc.old == nil) || (tc.old != nil && *d.OldText != *tc.old) {
				t.Errorf("= %+v, %q, %v; want old %v new %q", d, msg, ok, tc.old, tc.new)
			}
		})
	}
	if _, _, ok := PreviewChange([]string{ws}, "read", map[string]any{"path": "a.txt"}); ok {
		t.Error("a read previews a change")
	}
}

func ptr(s string) *string { return &s }
