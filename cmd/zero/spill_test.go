package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"
)

// The spill folder keeps at most its budget, the oldest files going first,
// and never the file just written.
func TestSpillBudget(t *testing.T) {
	ws := t.TempDir()
	var paths []string
	for i := range 5 {
		p, err := app.SpillInto(ws, filepath.Join(".zero", "output", "s1"), string(rune('a'+i))+".txt", strings.Repeat("x", 100))
		if err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	app.TrimSpill(ws, filepath.Join(".zero", "output", "s1"), "e.txt", 250)
	for i, p := range paths {
		_, err := os.Stat(p)
		if kept := err == nil; kept != (i >= 3) {
			t.Errorf("%s kept=%v; want the two newest kept", filepath.Base(p), kept)
		}
	}
	// A single result larger than the budget stays: its path is in history.
	big, err := app.Spill(ws, "s2", true, "big.txt", strings.Repeat("y", 1000))
	if err != nil {
		t.Fatal(err)
	}
	app.TrimSpill(ws, filepath.Join(".zero", "output", "s2"), "big.txt", 10)
	if _, err := os.Stat(big); err != nil {
		t.Fatalf("the file just written was removed: %v", err)
	}
}

// The agent can write the workspace: a spill folder it turned into a link
// to a folder of yours is neither written through nor emptied by a
// session's deletion.
func TestSpillNeverLeavesTheWorkspace(t *testing.T) {
	ws, yours := t.TempDir(), t.TempDir()
	precious := filepath.Join(yours, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".zero", "output"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(yours, filepath.Join(ws, ".zero", "output", "s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Spill(ws, "s1", true, "x.txt", "data"); err == nil {
		t.Error("spill wrote through a link out of the workspace")
	}
	app.TrimSpill(ws, filepath.Join(".zero", "output", "s1"), "", 0)
	app.RemoveSpill(ws, "s1")
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me" {
		t.Fatalf("a file outside the workspace was touched: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".zero", "output", "s1")); err == nil {
		t.Error("the link itself should be removed with the session")
	}
}

// Deleting a session removes its spilled output, in the workspace and in
// the temporary folder, and nothing of other sessions.
func TestRemoveSpill(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	a, err := app.Spill(ws, "s1", true, "a.txt", "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := app.Spill(ws, "s1", false, "b.txt", "b")
	if err != nil {
		t.Fatal(err)
	}
	other, err := app.Spill(ws, "s2", true, "c.txt", "c")
	if err != nil {
		t.Fatal(err)
	}
	app.RemoveSpill(ws, "s1")
	for _, p := range []string{a, b} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived its session", p)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another session's output went: %v", err)
	}
}

// A session id is a word, never a path: removing the output of a session
// named like a path removes nothing.
func TestSpillIDIsNotAPath(t *testing.T) {
	ws := t.TempDir()
	keep := filepath.Join(ws, "src")
	if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	app.RemoveSpill(ws, "../../src")
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("removeSpill of a path-like id removed a workspace folder: %v", err)
	}
	if _, err := app.Spill(ws, "../../src", true, "x.txt", "x"); err == nil {
		t.Fatal("spill accepted a path-like session id")
	}
}
