//go:build unix

package texteditor

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The reads of the text editor open without blocking, so a named pipe that
// takes a file's name after the checks by name is refused rather than
// waited on: diskOld (a write's old text, the write preview) and
// readDisk (read, patch, the patch preview).
func TestTextReadsNamedPipeWithoutBlocking(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	fifo := filepath.Join(ws, "notes.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	done := make(chan struct{})
	var (
		old       *string
		known     bool
		kind, msg string
	)
	go func() {
		defer close(done)
		old, known, kind = diskOld(root, "notes.md")
		_, _, msg = readDisk(&path{root: root, rel: "notes.md"})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // catches the hang only
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("reading a named pipe blocked in open(2)")
	}
	if old != nil || known || kind != "a named pipe" {
		t.Errorf("diskOld = %v, %v, %q; want nil, false, \"a named pipe\"", old, known, kind)
	}
	if want := notRegularMessage("it", "a named pipe"); msg != want {
		t.Errorf("readDisk message %q; want %q", msg, want)
	}
}
