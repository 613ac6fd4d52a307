//go:build unix

package texteditor_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/tools/texteditor"
)

// fifoGuard is how long a call on a named pipe may take before the test
// calls it hung. It only catches the hang (open(2) of a pipe without a
// writer waits forever); a call that works returns at once.
const fifoGuard = 30 * time.Second

// teMkfifo makes a named pipe at path.
func teMkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// teReturns runs f and fails the test if it has not returned within
// fifoGuard. A call stuck in open(2) of fifo is then set free by opening
// the pipe's other end, so the test's goroutine does not stay behind.
func teReturns(t *testing.T, fifo string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(fifoGuard):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("the call on the named pipe %s did not return in %v: it blocks in open(2)", fifo, fifoGuard)
	}
}

// teIsFIFO fails the test unless path is still a named pipe.
func teIsFIFO(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a named pipe: %v, %v", path, fi, err)
	}
}

// PreviewChange, on the terminal chat's update path, must not open a named
// pipe the agent made where a file is to be written: it would block there
// past Ctrl-C. It says the change cannot be shown, promptly.
func TestPreviewChangeNamedPipe(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	fifo := filepath.Join(ws, "notes.md")
	teMkfifo(t, fifo)
	for _, tc := range []struct {
		method string
		args   map[string]any
	}{
		{"write", map[string]any{"path": "notes.md", "content": "# notes\n"}},
		{"patch", map[string]any{"path": "notes.md", "edits": []any{map[string]any{"from": 1, "to": 1, "content": "x"}}}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			var (
				d   loop.FileDiff
				msg string
				ok  bool
			)
			teReturns(t, fifo, func() { d, msg, ok = texteditor.PreviewChange([]string{ws}, tc.method, tc.args) })
			if want := fifo + " is not a regular file (a named pipe)"; ok || !strings.Contains(msg, want) {
				t.Errorf("PreviewChange = %+v, %q, %v; want not ok with %q", d, msg, ok, want)
			}
			teIsFIFO(t, fifo)
		})
	}
}

// text_editor:write and :patch onto a named pipe are refused, promptly and
// with a reason, and leave the pipe as it is; so is a read. The patch is
// tried both before any read and after a read of a regular file the pipe
// then replaced.
func TestTextEditorNamedPipe(t *testing.T) {
	t.Parallel()
	const notRegular = "is not a regular file (a named pipe)"
	patch := `{"path": "notes.md", "edits": [{"from": 1, "to": 1, "content": "X\n"}]}`
	for _, tc := range []struct {
		name, method, args string
		readFirst          bool // read a regular notes.md, then make it a pipe
		want               string
	}{
		{name: "write", method: "write", args: `{"path": "notes.md", "content": "# notes\n"}`, want: "cannot write "},
		{name: "write empty", method: "write", args: `{"path": "notes.md", "content": ""}`, want: "cannot write "},
		{name: "patch unread", method: "patch", args: patch, want: "cannot patch "},
		{name: "patch after read", method: "patch", args: patch, readFirst: true, want: "cannot patch "},
		{name: "read", method: "read", args: `{"path": "notes.md"}`, want: "cannot read "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			fifo := filepath.Join(ws, "notes.md")
			te, a := texteditor.New(ws), teAgent(t, ws)
			if tc.readFirst {
				teWriteFile(t, fifo, "one\n")
				if res := teCall(t, te, a, "read", `{"path": "notes.md"}`); res.IsError {
					t.Fatalf("read: %s", res.Text)
				}
				if err := os.Remove(fifo); err != nil {
					t.Fatal(err)
				}
			}
			teMkfifo(t, fifo)
			var res loop.ToolResult
			teReturns(t, fifo, func() { res = teCall(t, te, a, tc.method, tc.args) })
			if !res.IsError || !strings.Contains(res.Text, tc.want+fifo) || !strings.Contains(res.Text, notRegular) {
				t.Errorf("text_editor:%s = %+v; want an error with %q and %q", tc.method, res, tc.want+fifo, notRegular)
			}
			if len(res.Diffs) != 0 {
				t.Errorf("diffs of a refused call: %+v", res.Diffs)
			}
			teIsFIFO(t, fifo)
			if names := teDirNames(t, ws); len(names) != 1 {
				t.Errorf("the workspace holds %q; want only notes.md", names)
			}
		})
	}
}
