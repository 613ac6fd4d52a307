//go:build unix

package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A realistic run: snapshot, then the agent edits a file, creates one in a
// new folder, deletes another, makes a script executable and replaces a
// folder with a link to a folder outside the workspace; Restore puts the
// tree back byte for byte and leaves the outside folder alone.
func TestRealisticRun(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, root, "src/main.go", "package main\n\nfunc main() {}\n")
	writeFile(t, root, "src/util/strings.go", "package util\n")
	writeFile(t, root, "README.md", "# project\n")
	writeFile(t, root, "scripts/build.sh", "#!/bin/sh\necho build\n")
	writeFile(t, root, "lib/a.go", "package lib // a\n")
	writeFile(t, root, "lib/deep/b.go", "package deep\n")
	writeFile(t, root, ".gitignore", "node_modules/\n*.log\n")
	writeFile(t, root, "node_modules/left-pad/index.js", "module.exports = 1\n")
	writeFile(t, root, "debug.log", "old log\n")
	writeFile(t, root, ".git/HEAD", "ref: refs/heads/main\n")
	writeFile(t, root, ".git/config", "[core]\n")
	if err := os.Symlink("src/main.go", filepath.Join(root, "main-link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, outside, "secret.txt", "outside\n")
	before := treeListing(t, root)
	outsideBefore := treeListing(t, outside)

	s := newStore(t, Options{})
	snap := take(t, s, root)
	if snap.Files != 8 || snap.Partial {
		t.Errorf("snapshot: %d files, partial %v; want 8, false", snap.Files, snap.Partial)
	}
	if !slices.Contains(snap.Skipped, Skip{Path: "node_modules/", Why: "ignored by .gitignore"}) {
		t.Errorf("Skipped = %v, want node_modules/ named", snap.Skipped)
	}

	// The agent's run.
	writeFile(t, root, "src/main.go", "package main\n\nfunc main() { panic(1) }\n")
	writeFile(t, root, "newpkg/new.go", "package newpkg\n")
	if err := os.Remove(filepath.Join(root, "README.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "scripts/build.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}

	got := fmtChanges(changes(t, s, root, snap.ID))
	want := `deleted README.md
added lib
deleted lib/
deleted lib/a.go
deleted lib/deep/
deleted lib/deep/b.go
added newpkg/
added newpkg/new.go
modified scripts/build.sh
modified src/main.go
`
	if got != want {
		t.Errorf("Changes:\n%s\nwant:\n%s", got, want)
	}

	res := restore(t, s, root, snap.ID, nil)
	sameListing(t, before, treeListing(t, root))
	sameListing(t, outsideBefore, treeListing(t, outside))
	if want := []string{"README.md", "lib/", "lib/a.go", "lib/deep/", "lib/deep/b.go", "scripts/build.sh", "src/main.go"}; !slices.Equal(res.Restored, want) {
		t.Errorf("Restored = %q, want %q", res.Restored, want)
	}
	if want := []string{"lib", "newpkg/", "newpkg/new.go"}; !slices.Equal(res.Deleted, want) {
		t.Errorf("Deleted = %q, want %q", res.Deleted, want)
	}
	if len(res.Failed) != 0 || len(res.Kept) != 0 {
		t.Errorf("Failed %v, Kept %v; want none", res.Failed, res.Kept)
	}
	if cs := changes(t, s, root, snap.ID); len(cs) != 0 {
		t.Errorf("Changes after Restore: %v", cs)
	}
}

// Restoring onto a workspace that already matches the snapshot rewrites
// nothing, even files whose stat changed (touched, but same bytes).
func TestRestoreNoop(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.txt", "a")
	writeFile(t, root, "d/b.txt", "b")
	writeFile(t, root, "d/e/c.txt", "c")
	backdate(t, root)
	s := newStore(t, Options{})
	snap := take(t, s, root)
	// Touch one file: its stat no longer matches, its bytes do.
	newer := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(root, "d/b.txt"), newer, newer)

	stat := func() map[string]string {
		out := map[string]string{}
		for _, rel := range []string{"a.txt", "d/b.txt", "d/e/c.txt", "d", "d/e"} {
			fi, err := os.Lstat(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			ino, ctime := inoCtime(fi)
			out[rel] = fmt.Sprint(fi.ModTime().UnixNano(), ino, ctime)
		}
		return out
	}
	st := stat() // a rewrite would show: a restored file is a new inode
	res := restore(t, s, root, snap.ID, nil)
	if len(res.Restored)+len(res.Deleted)+len(res.Kept)+len(res.Failed) != 0 {
		t.Errorf("Restore of an unchanged tree did %+v", res)
	}
	after := stat()
	for k, v := range st {
		if after[k] != v {
			t.Errorf("%s was touched: %s -> %s", k, v, after[k])
		}
	}
}

func TestGitignore(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n/only-at-root.txt\n")
	writeFile(t, root, ".git/info/exclude", "from-info-exclude\n")
	writeFile(t, root, "sub/.gitignore", "secret.txt\n")
	for _, f := range []string{
		"a.log", "keep.log", "build/out.bin", "build/deep/x.o", "sub/build", "only-at-root.txt",
		"sub/only-at-root.txt", "sub/secret.txt", "sub/deeper/secret.txt", "secret.txt", "from-info-exclude",
		"sub/from-info-exclude", "main.go",
	} {
		writeFile(t, root, f, f)
	}
	// A FIFO inside the ignored folder: walking into it would name it.
	if err := syscall.Mkfifo(filepath.Join(root, "build/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		listed []string
	)
	testHookDir = func(rel string) {
		mu.Lock()
		listed = append(listed, rel)
		mu.Unlock()
	}
	defer func() { testHookDir = nil }()

	s := newStore(t, Options{})
	snap := take(t, s, root)
	cov := covered(t, s, snap.ID)
	for _, p := range []string{"keep.log", "sub/build", "sub/only-at-root.txt", "secret.txt", "main.go", ".gitignore", "sub/.gitignore"} {
		if cov[p] != "file" {
			t.Errorf("%s: %q, want covered file", p, cov[p])
		}
	}
	for _, p := range []string{"a.log", "build", "only-at-root.txt", "sub/secret.txt", "sub/deeper/secret.txt", "from-info-exclude", "sub/from-info-exclude"} {
		if cov[p] != "skip:1" {
			t.Errorf("%s: %q, want ignored", p, cov[p])
		}
	}
	for p := range cov {
		if strings.HasPrefix(p, "build/") || strings.HasPrefix(p, ".git") && p != ".gitignore" {
			t.Errorf("%s recorded", p)
		}
	}
	if slices.Contains(listed, "build") || slices.ContainsFunc(listed, func(s string) bool { return strings.HasPrefix(s, ".git") }) {
		t.Errorf("walked into an ignored folder or .git: %q", listed)
	}
	if !slices.Contains(snap.Skipped, Skip{Path: "build/", Why: "ignored by .gitignore"}) {
		t.Errorf("Skipped = %v", snap.Skipped)
	}
	for _, sk := range snap.Skipped {
		if strings.HasPrefix(sk.Path, "build/") && sk.Path != "build/" {
			t.Errorf("contents of an ignored folder named: %v", sk)
		}
	}

	// Ignored paths are neither restored nor deleted.
	writeFile(t, root, "a.log", "changed")
	writeFile(t, root, "new.log", "new")
	writeFile(t, root, "build/new.o", "new")
	os.Remove(filepath.Join(root, "sub/secret.txt"))
	writeFile(t, root, "keep.log", "changed")
	res := restore(t, s, root, snap.ID, nil)
	if got := readFile(t, root, "a.log"); got != "changed" {
		t.Errorf("ignored a.log restored: %q", got)
	}
	readFile(t, root, "new.log")
	readFile(t, root, "build/new.o")
	mustNotExist(t, root, "sub/secret.txt")
	if got := readFile(t, root, "keep.log"); got != "keep.log" {
		t.Errorf("keep.log (negated) not restored: %q", got)
	}
	if !slices.Equal(res.Restored, []string{"keep.log"}) || len(res.Deleted) != 0 {
		t.Errorf("Restore: %+v", res)
	}
}

// A folder ignored at the snapshot stays untouched even when the agent
// un-ignores it: Restore must not take its contents for new files.
func TestIgnoredAtSnapshotNotDeletedWhenUnignored(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".gitignore", "node_modules/\n.env\n")
	writeFile(t, root, "node_modules/x/index.js", "x")
	writeFile(t, root, ".env", "SECRET=1")
	writeFile(t, root, "main.go", "package main")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	writeFile(t, root, ".gitignore", "")
	var (
		mu     sync.Mutex
		listed []string
	)
	testHookDir = func(rel string) {
		mu.Lock()
		listed = append(listed, rel)
		mu.Unlock()
	}
	res := restore(t, s, root, snap.ID, nil)
	testHookDir = nil
	if slices.ContainsFunc(listed, func(p string) bool { return strings.HasPrefix(p, "node_modules") }) {
		t.Errorf("Restore listed the folder ignored at the snapshot: %q", listed)
	}
	readFile(t, root, "node_modules/x/index.js")
	readFile(t, root, ".env")
	if got := readFile(t, root, ".gitignore"); got != "node_modules/\n.env\n" {
		t.Errorf(".gitignore = %q", got)
	}
	if len(res.Deleted) != 0 {
		t.Errorf("Deleted %v", res.Deleted)
	}
}

// A covered file the agent then ignores is still restored.
func TestCoveredThenIgnoredIsRestored(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "src/a.go", "a")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	writeFile(t, root, ".gitignore", "src/\n")
	writeFile(t, root, "src/a.go", "changed")
	writeFile(t, root, "src/new.go", "new, ignored now")
	res := restore(t, s, root, snap.ID, nil)
	if got := readFile(t, root, "src/a.go"); got != "a" {
		t.Errorf("src/a.go = %q", got)
	}
	mustNotExist(t, root, ".gitignore")
	readFile(t, root, "src/new.go") // created since and ignored now: left alone
	if !slices.Equal(res.Restored, []string{"src/a.go"}) || !slices.Equal(res.Deleted, []string{".gitignore"}) {
		t.Errorf("Restore: %+v", res)
	}
}

func TestCreatedSince(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".gitignore", "*.log\n")
	writeFile(t, root, "keep.txt", "k")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	writeFile(t, root, "x.log", "ignored, new")
	writeFile(t, root, "mixed/a.log", "ignored")
	writeFile(t, root, "mixed/b.txt", "covered")
	writeFile(t, root, "mixed/sub/c.txt", "covered")
	writeFile(t, root, "clean/d/e.txt", "covered")
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := restore(t, s, root, snap.ID, nil)
	readFile(t, root, "x.log")
	readFile(t, root, "mixed/a.log")
	mustNotExist(t, root, "mixed/b.txt")
	mustNotExist(t, root, "mixed/sub")
	mustNotExist(t, root, "clean")
	mustNotExist(t, root, "empty")
	if want := []string{"clean/", "clean/d/", "clean/d/e.txt", "empty/", "mixed/b.txt", "mixed/sub/", "mixed/sub/c.txt"}; !slices.Equal(res.Deleted, want) {
		t.Errorf("Deleted = %q, want %q", res.Deleted, want)
	}
	if len(res.Failed) != 1 || res.Failed[0].Path != "mixed/" || !strings.Contains(res.Failed[0].Why, "ignores") {
		t.Errorf("Failed = %v, want mixed/ named", res.Failed)
	}
}

// .git, file or folder, at any depth, is never walked, copied, deleted or
// restored.
func TestGitNeverTouched(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".git/HEAD", "ref: main")
	writeFile(t, root, "sub/.git", "gitdir: ../.git/modules/sub")
	writeFile(t, root, "sub/a.go", "a")
	writeFile(t, root, "vendor/x/.git/HEAD", "ref: x")
	writeFile(t, root, "vendor/x/x.go", "x")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	for p := range covered(t, s, snap.ID) {
		if strings.Contains("/"+p+"/", "/.git/") {
			t.Errorf("%s recorded", p)
		}
	}
	writeFile(t, root, ".git/HEAD", "ref: other")
	writeFile(t, root, ".git/new", "n")
	os.Remove(filepath.Join(root, "sub/.git"))
	os.RemoveAll(filepath.Join(root, "vendor/x/.git"))
	writeFile(t, root, "cloned/.git/HEAD", "ref: y")
	writeFile(t, root, "cloned/y.go", "y")
	res := restore(t, s, root, snap.ID, nil)
	if got := readFile(t, root, ".git/HEAD"); got != "ref: other" {
		t.Errorf(".git/HEAD restored: %q", got)
	}
	readFile(t, root, ".git/new")
	mustNotExist(t, root, "sub/.git")
	mustNotExist(t, root, "vendor/x/.git")
	readFile(t, root, "cloned/.git/HEAD")
	mustNotExist(t, root, "cloned/y.go")
	if len(res.Failed) != 1 || res.Failed[0].Path != "cloned/" {
		t.Errorf("Failed = %v, want cloned/ (holds a .git)", res.Failed)
	}
}

func TestSymlinksRecordedNotFollowed(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, outside, "big/data.txt", "outside")
	writeFile(t, root, "a.txt", "a")
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink("a.txt", filepath.Join(root, "rel"))
	os.Symlink("nowhere", filepath.Join(root, "dangling"))
	s := newStore(t, Options{})
	snap := take(t, s, root)
	cov := covered(t, s, snap.ID)
	if cov["out"] != "link" || cov["rel"] != "link" || cov["dangling"] != "link" || len(cov) != 4 {
		t.Errorf("covered = %v", cov)
	}
	if snap.Files != 4 {
		t.Errorf("Files = %d", snap.Files)
	}
	before := treeListing(t, root)
	os.Remove(filepath.Join(root, "rel"))
	os.Remove(filepath.Join(root, "dangling"))
	os.Symlink("elsewhere", filepath.Join(root, "dangling"))
	os.Remove(filepath.Join(root, "out"))
	writeFile(t, root, "out", "now a file")
	restore(t, s, root, snap.ID, nil)
	sameListing(t, before, treeListing(t, root))
	if got := readFile(t, outside, "big/data.txt"); got != "outside" {
		t.Errorf("outside changed: %q", got)
	}
}

// An attack: links inside the workspace that point outside stand where the
// snapshot had a folder and a file. Restore removes the links and writes
// nothing through them.
func TestRestoreDoesNotWriteThroughLinks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, root, "conf/settings.json", "{}")
	writeFile(t, root, "conf/deep/x.txt", "x")
	writeFile(t, root, "passwd", "mine")
	writeFile(t, outside, "settings.json", "outside settings")
	writeFile(t, outside, "passwd", "outside passwd")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	before := treeListing(t, root)
	outsideBefore := treeListing(t, outside)

	os.RemoveAll(filepath.Join(root, "conf"))
	os.Symlink(outside, filepath.Join(root, "conf"))
	os.Remove(filepath.Join(root, "passwd"))
	os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(root, "passwd"))

	restore(t, s, root, snap.ID, nil)
	sameListing(t, before, treeListing(t, root))
	sameListing(t, outsideBefore, treeListing(t, outside))

	// A link to outside, created since, is removed (as a link): what it
	// points to stays.
	os.Symlink(outside, filepath.Join(root, "escape"))
	res := restore(t, s, root, snap.ID, nil)
	if !slices.Equal(res.Deleted, []string{"escape"}) {
		t.Errorf("Deleted = %v", res.Deleted)
	}
	sameListing(t, outsideBefore, treeListing(t, outside))
}

func TestSpecialFilesSkipped(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.txt", "a")
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Options{})
	snap, err := s.Take(t.Context(), root) // a FIFO opened blocking would hang (go test's -timeout)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(snap.Skipped, Skip{Path: "pipe", Why: "not a regular file"}) {
		t.Errorf("Skipped = %v", snap.Skipped)
	}
	if cs := changes(t, s, root, snap.ID); len(cs) != 0 {
		t.Errorf("Changes = %v", cs)
	}
	writeFile(t, root, "a.txt", "b")
	res := restore(t, s, root, snap.ID, nil)
	if fi, err := os.Lstat(filepath.Join(root, "pipe")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("pipe touched: %v %v", fi, err)
	}
	if !slices.Equal(res.Restored, []string{"a.txt"}) {
		t.Errorf("Restored = %v", res.Restored)
	}
}

// A file swapped for a FIFO between the listing and the open is not read
// (the open would block without O_NONBLOCK) and is reported as changing.
func TestFileSwappedForFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o644)
	fi, _ := os.Lstat(p)
	ino, _ := inoCtime(fi)
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &dirRef{root: r}
	d.refs.Store(1)
	defer d.release()
	s := newStore(t, Options{})
	w := s.newWalker(context.Background(), modeTake, dir, nil)
	j := &hashJob{dir: d, name: "f", path: "f", ino: ino, size: 1, store: true}
	done := make(chan struct{})
	go func() {
		w.hash(j, new(bytes.Buffer))
		close(done)
	}()
	<-done // a FIFO opened blocking would hang here (go test's -timeout reports it)
	if j.why != whyChanging {
		t.Errorf("why = %d, want whyChanging", j.why)
	}
}

// An ignore file the agent made a FIFO, or grew past 4 MiB, is not read:
// a snapshot neither waits on it nor holds it whole.
func TestHostileIgnoreFiles(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "kept.txt", "k")
	writeFile(t, root, "sub/.gitignore", strings.Repeat("#", maxIgnoreBytes+1)+"\n*.txt\n")
	writeFile(t, root, "sub/a.txt", "a")
	if err := syscall.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, ".git", "info", "exclude"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Options{})
	snap := take(t, s, root) // would hang on either FIFO
	if snap.Files < 3 {      // kept.txt, sub/a.txt (not ignored) and sub/.gitignore
		t.Errorf("files = %d, skipped %v", snap.Files, snap.Skipped)
	}
}

func TestLargeFileSkippedAndNotRestored(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "small.txt", "s")
	writeFile(t, root, "big.bin", strings.Repeat("x", 2048))
	writeFile(t, root, "big2.bin", strings.Repeat("y", 2048))
	s := newStore(t, Options{MaxFileBytes: 1024})
	snap := take(t, s, root)
	if !slices.Contains(snap.Skipped, Skip{Path: "big.bin", Why: "larger than 1 KiB"}) {
		t.Errorf("Skipped = %v", snap.Skipped)
	}
	if snap.Partial {
		t.Error("Partial set for a file over MaxFileBytes")
	}
	// Unchanged: neither deleted nor restored nor failed.
	writeFile(t, root, "small.txt", "changed")
	res := restore(t, s, root, snap.ID, nil)
	if len(res.Failed) != 0 || len(res.Deleted) != 0 {
		t.Errorf("Restore: %+v", res)
	}
	// Changed since: named in Failed, left as it is.
	writeFile(t, root, "big.bin", strings.Repeat("z", 4096))
	os.Remove(filepath.Join(root, "big2.bin"))
	res = restore(t, s, root, snap.ID, nil)
	if len(res.Failed) != 2 || res.Failed[0].Path != "big.bin" || !strings.Contains(res.Failed[0].Why, "too large to have been copied") || res.Failed[1].Path != "big2.bin" {
		t.Errorf("Failed = %v", res.Failed)
	}
	if got := readFile(t, root, "big.bin"); got != strings.Repeat("z", 4096) {
		t.Error("big.bin touched")
	}
	if cs := changes(t, s, root, snap.ID); len(cs) != 0 {
		t.Errorf("Changes lists uncovered paths: %v", cs)
	}
}

func TestLimits(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		root := t.TempDir()
		for _, f := range []string{"a", "b", "c", "d/e", "d/f", "g"} {
			writeFile(t, root, f, f)
		}
		s := newStore(t, Options{MaxFiles: 3})
		snap := take(t, s, root)
		if !snap.Partial || snap.Files != 3 {
			t.Errorf("Partial %v, Files %d", snap.Partial, snap.Files)
		}
		if len(snap.Skipped) != 2 || snap.Skipped[0].Path != "d/" || !strings.Contains(snap.Skipped[0].Why, "limit of 3") {
			t.Errorf("Skipped = %v", snap.Skipped)
		}
		writeFile(t, root, "a", "changed")
		res := restore(t, s, root, snap.ID, nil)
		readFile(t, root, "d/e")
		readFile(t, root, "g")
		if !slices.Equal(res.Restored, []string{"a"}) || len(res.Deleted) != 0 {
			t.Errorf("Restore: %+v", res)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		root := t.TempDir()
		writeFile(t, root, "a", strings.Repeat("a", 600))
		writeFile(t, root, "b", strings.Repeat("b", 600))
		writeFile(t, root, "c", strings.Repeat("c", 300))
		s := newStore(t, Options{MaxTotalBytes: 1000})
		snap := take(t, s, root)
		if !snap.Partial || snap.Bytes != 900 || len(snap.Skipped) != 1 || snap.Skipped[0].Path != "b" || snap.Skipped[0].Why != "over the snapshot limit of 1000 bytes" {
			t.Errorf("snapshot: %+v", snap)
		}
		os.Remove(filepath.Join(root, "b"))
		res := restore(t, s, root, snap.ID, nil)
		if len(res.Failed) != 1 || res.Failed[0].Path != "b" {
			t.Errorf("Failed = %v", res.Failed)
		}
	})
	t.Run("shown", func(t *testing.T) {
		root := t.TempDir()
		for i := range 30 {
			writeFile(t, root, string(rune('a'+i%26))+strings.Repeat("x", i/26)+".tmp", "t")
		}
		writeFile(t, root, "zz.big", strings.Repeat("b", 100))
		writeFile(t, root, ".gitignore", "*.tmp\n")
		s := newStore(t, Options{MaxFileBytes: 10})
		snap := take(t, s, root)
		if len(snap.Skipped) != 20 || snap.SkippedCount != 11 || snap.Skipped[0].Path != "zz.big" {
			t.Errorf("Skipped %d %v, count %d", len(snap.Skipped), snap.Skipped[:1], snap.SkippedCount)
		}
	})
}

func TestChangesAndBetween(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.txt", "a")
	writeFile(t, root, "b.txt", "b")
	writeFile(t, root, "dir/c.txt", "c")
	writeFile(t, root, "x/y", "y")
	s := newStore(t, Options{})
	s1 := take(t, s, root)

	writeFile(t, root, "a.txt", "A")
	os.Remove(filepath.Join(root, "b.txt"))
	writeFile(t, root, "new/n.txt", "n")
	os.Chmod(filepath.Join(root, "dir/c.txt"), 0o600)
	os.RemoveAll(filepath.Join(root, "x"))
	writeFile(t, root, "x", "now a file")
	want := `modified a.txt
deleted b.txt
modified dir/c.txt
added new/
added new/n.txt
added x
deleted x/
deleted x/y
`
	if got := fmtChanges(changes(t, s, root, s1.ID)); got != want {
		t.Errorf("Changes:\n%s\nwant:\n%s", got, want)
	}
	s2 := take(t, s, root)
	cs, err := s.Between(s1.ID, s2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmtChanges(cs); got != want {
		t.Errorf("Between:\n%s\nwant:\n%s", got, want)
	}
	if cs, _ := s.Between(s2.ID, s2.ID); len(cs) != 0 {
		t.Errorf("Between(s, s) = %v", cs)
	}
	back, _ := s.Between(s2.ID, s1.ID)
	if len(back) != 8 || back[0] != (Change{"a.txt", Modified}) || back[1] != (Change{"b.txt", Added}) {
		t.Errorf("Between reversed = %v", back)
	}
	if _, err := s.Between(s1.ID, "0123456789abcdef0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Between with an unknown id: %v", err)
	}
	if _, err := s.Changes(context.Background(), root, "../../etc/passwd"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Changes with a bad id: %v", err)
	}
}

func TestKeep(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "src/main.go", "main")
	writeFile(t, root, "src/util.go", "util")
	writeFile(t, root, "doc.md", "doc")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	writeFile(t, root, "src/main.go", "edited")
	writeFile(t, root, "src/util.go", "edited")
	writeFile(t, root, "notes.txt", "mine")
	writeFile(t, root, "keepdir/a/b.txt", "keep")
	writeFile(t, root, "gone/c.txt", "remove")
	os.Remove(filepath.Join(root, "doc.md"))

	var asked []string
	keep := func(p string) bool {
		asked = append(asked, p)
		return p == "notes.txt" || p == "src/main.go" || p == "keepdir/" || p == "doc.md"
	}
	res := restore(t, s, root, snap.ID, keep)
	if want := []string{"doc.md", "gone/", "gone/c.txt", "keepdir/", "notes.txt", "src/main.go", "src/util.go"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if want := []string{"doc.md", "keepdir/", "notes.txt", "src/main.go"}; !slices.Equal(res.Kept, want) {
		t.Errorf("Kept = %q", res.Kept)
	}
	if readFile(t, root, "src/main.go") != "edited" || readFile(t, root, "notes.txt") != "mine" || readFile(t, root, "keepdir/a/b.txt") != "keep" {
		t.Error("a kept path was touched")
	}
	mustNotExist(t, root, "doc.md")
	if readFile(t, root, "src/util.go") != "util" {
		t.Error("src/util.go not restored")
	}
	mustNotExist(t, root, "gone")
	if len(res.Failed) != 0 {
		t.Errorf("Failed = %v", res.Failed)
	}
}

func TestKindChanges(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "f2d", "file")
	writeFile(t, root, "d2f/x", "x")
	writeFile(t, root, "f2l", "file")
	os.Symlink("f2d", filepath.Join(root, "l2f"))
	os.Mkdir(filepath.Join(root, "emptydir"), 0o750)
	os.Chmod(filepath.Join(root, "emptydir"), 0o750)
	s := newStore(t, Options{})
	snap := take(t, s, root)
	before := treeListing(t, root)

	os.Remove(filepath.Join(root, "f2d"))
	writeFile(t, root, "f2d/inner", "now a folder")
	os.RemoveAll(filepath.Join(root, "d2f"))
	writeFile(t, root, "d2f", "now a file")
	os.Remove(filepath.Join(root, "f2l"))
	os.Symlink("/etc/passwd", filepath.Join(root, "f2l"))
	os.Remove(filepath.Join(root, "l2f"))
	writeFile(t, root, "l2f", "now a file")
	os.Remove(filepath.Join(root, "emptydir"))
	restore(t, s, root, snap.ID, nil)
	sameListing(t, before, treeListing(t, root))
}

func TestExclude(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, ".zero")
	writeFile(t, root, "a.txt", "a")
	writeFile(t, root, ".zero/sessions.db", "db")
	s, err := Open(filepath.Join(root, ".cache/checkpoints"), Options{Exclude: []string{data}})
	if err != nil {
		t.Fatal(err)
	}
	snap := take(t, s, root)
	for p := range covered(t, s, snap.ID) {
		if strings.HasPrefix(p, ".zero") || strings.HasPrefix(p, ".cache/checkpoints") {
			t.Errorf("%s recorded", p)
		}
	}
	writeFile(t, root, ".zero/new.db", "new")
	writeFile(t, root, ".zero/sessions.db", "changed")
	res := restore(t, s, root, snap.ID, nil)
	readFile(t, root, ".zero/new.db")
	if readFile(t, root, ".zero/sessions.db") != "changed" {
		t.Error("excluded file restored")
	}
	if _, err := os.Stat(filepath.Join(root, ".cache/checkpoints/manifests", snap.ID)); err != nil {
		t.Errorf("store damaged by Restore: %v", err)
	}
	// .cache is covered (it holds only the excluded store), so it is a
	// folder created... at the snapshot already: nothing is deleted.
	if len(res.Deleted) != 0 || len(res.Failed) != 0 {
		t.Errorf("Restore: %+v", res)
	}
}

func TestStatCache(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		writeFile(t, root, filepath.Join("d", string(rune('a'+i%26))+string(rune('a'+i/26))), strings.Repeat("x", i))
	}
	backdate(t, root)
	s := newStore(t, Options{})
	var first, again Snapshot
	n, _ := countHashes(func() { first = take(t, s, root) })
	if n != 50 || first.Copied == 0 {
		t.Errorf("first Take read %d files, copied %d", n, first.Copied)
	}
	n, _ = countHashes(func() { again = take(t, s, root) })
	if n != 0 || again.ID != first.ID || again.Copied != 0 {
		t.Errorf("unchanged Take read %d files, id %s vs %s, copied %d", n, again.ID, first.ID, again.Copied)
	}
	// One file changed: only it is read; and, its mtime being recent, it
	// is read again next time (racy), until it is 2 s old.
	writeFile(t, root, "d/aa", "changed")
	n, paths := countHashes(func() { take(t, s, root) })
	if n != 1 || paths[0] != "d/aa" {
		t.Errorf("read %v", paths)
	}
	n, _ = countHashes(func() { take(t, s, root) })
	if n != 1 {
		t.Errorf("a racy file was not read again: %d reads", n)
	}
	backdate(t, root) // ctime changes: read once more, then trusted
	countHashes(func() { take(t, s, root) })
	n, _ = countHashes(func() { take(t, s, root) })
	if n != 0 {
		t.Errorf("%d reads with a warm cache", n)
	}
	// Same size, same mtime, new bytes: the ctime gives it away.
	fi, _ := os.Stat(filepath.Join(root, "d/ab"))
	os.WriteFile(filepath.Join(root, "d/ab"), []byte(strings.Repeat("y", int(fi.Size()))), 0o644)
	os.Chtimes(filepath.Join(root, "d/ab"), fi.ModTime(), fi.ModTime())
	snap := take(t, s, root)
	cs, _ := s.Between(again.ID, snap.ID)
	if len(cs) != 2 || cs[1] != (Change{"d/ab", Modified}) {
		t.Errorf("Between = %v", cs)
	}
}

func TestDamage(t *testing.T) {
	setup := func(t *testing.T) (*Store, string, Snapshot) {
		root := t.TempDir()
		writeFile(t, root, "a.txt", "aaa")
		writeFile(t, root, "b.txt", "bbb")
		s := newStore(t, Options{})
		snap := take(t, s, root)
		writeFile(t, root, "a.txt", "edited")
		os.Remove(filepath.Join(root, "b.txt"))
		writeFile(t, root, "c.txt", "new")
		return s, root, snap
	}
	unchanged := func(t *testing.T, root string) {
		if readFile(t, root, "a.txt") != "edited" || readFile(t, root, "c.txt") != "new" {
			t.Error("workspace touched")
		}
		mustNotExist(t, root, "b.txt")
	}
	objOf := func(s *Store, content string) string {
		return s.objPath(sha256Sum(content))
	}
	t.Run("missing object", func(t *testing.T) {
		s, root, snap := setup(t)
		os.Remove(objOf(s, "bbb"))
		_, err := s.Restore(context.Background(), root, snap.ID, nil)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "b.txt") {
			t.Errorf("err = %v", err)
		}
		unchanged(t, root)
	})
	t.Run("corrupt object", func(t *testing.T) {
		s, root, snap := setup(t)
		os.WriteFile(objOf(s, "aaa"), []byte("aab"), 0o600)
		_, err := s.Restore(context.Background(), root, snap.ID, nil)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), objOf(s, "aaa")) {
			t.Errorf("err = %v", err)
		}
		unchanged(t, root)
	})
	t.Run("corrupt manifest", func(t *testing.T) {
		s, root, snap := setup(t)
		p := s.manifestPath(snap.ID)
		b, _ := os.ReadFile(p)
		b[len(b)/2] ^= 0xff
		os.WriteFile(p, b, 0o600)
		_, err := s.Restore(context.Background(), root, snap.ID, nil)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), snap.ID) {
			t.Errorf("err = %v", err)
		}
		unchanged(t, root)
		// Take does not trust it as a cache either.
		if _, err := s.Take(context.Background(), root); err != nil {
			t.Errorf("Take with a damaged cache: %v", err)
		}
	})
	t.Run("missing manifest", func(t *testing.T) {
		s, root, snap := setup(t)
		os.Remove(s.manifestPath(snap.ID))
		_, err := s.Restore(context.Background(), root, snap.ID, nil)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), snap.ID) {
			t.Errorf("err = %v", err)
		}
		unchanged(t, root)
	})
}

func TestCancel(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		writeFile(t, root, filepath.Join(string(rune('a'+i%20)), string(rune('a'+i/20))), "x")
	}
	s := newStore(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Take(ctx, root); !errors.Is(err, context.Canceled) {
		t.Errorf("Take: %v", err)
	}
	// Cancelled during the walk: stops at the next folder.
	ctx, cancel = context.WithCancel(context.Background())
	var dirs atomic.Int32
	testHookDir = func(string) {
		if dirs.Add(1) == 3 {
			cancel()
		}
	}
	_, err := s.Take(ctx, root)
	testHookDir = nil
	// Listings already under way may finish.
	if !errors.Is(err, context.Canceled) || dirs.Load() > int32(3+runtime.GOMAXPROCS(0)) {
		t.Errorf("Take: %v after %d folders", err, dirs.Load())
	}
	if _, ok := s.Latest(root); ok {
		t.Error("a cancelled Take recorded a snapshot")
	}

	snap := take(t, s, root)
	writeFile(t, root, "a/a", "changed")
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := s.Restore(ctx, root, snap.ID, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Restore: %v", err)
	}
	if readFile(t, root, "a/a") != "changed" {
		t.Error("a cancelled Restore wrote")
	}
	if _, err := s.Changes(ctx, root, snap.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("Changes: %v", err)
	}
}

func TestConcurrentTakes(t *testing.T) {
	root := t.TempDir()
	for i := range 200 {
		writeFile(t, root, filepath.Join(string(rune('a'+i%10)), string(rune('a'+i/10))), strings.Repeat("z", i))
	}
	backdate(t, root)
	dir := filepath.Join(t.TempDir(), "store")
	// Two stores on one folder stand for two processes.
	s1, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make(chan string, 8)
	errs := make(chan error, 8)
	for i := range 8 {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		go func() {
			snap, err := s.Take(context.Background(), root)
			ids <- snap.ID
			errs <- err
		}()
	}
	var first string
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		id := <-ids
		if first == "" {
			first = id
		} else if id != first {
			t.Errorf("ids differ: %s %s", first, id)
		}
	}
	// Concurrent Changes, Between, Take and Prune on one store.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			if _, _, _, err := s2.Prune([]string{first}); err != nil {
				t.Error(err)
			}
		}
	}()
	for range 5 {
		if cs, err := s1.Changes(context.Background(), root, first); err != nil || len(cs) != 0 {
			t.Errorf("Changes: %v %v", cs, err)
		}
		take(t, s1, root)
	}
	<-done
	writeFile(t, root, "a/a", "changed")
	restore(t, s2, root, first, nil)
	if readFile(t, root, "a/a") != "" {
		t.Error("not restored")
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("left in tmp: %v", tmp)
	}
}

func TestPrune(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "same.txt", "same")
	writeFile(t, root, "v.txt", "v1")
	s := newStore(t, Options{})
	a := take(t, s, root)
	writeFile(t, root, "v.txt", "v2")
	b := take(t, s, root)
	writeFile(t, root, "v.txt", "v3")
	c := take(t, s, root) // the root's newest: kept
	m, o, freed, err := s.Prune([]string{a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if m != 1 || o != 1 || freed <= 0 {
		t.Errorf("Prune: %d manifests, %d objects, %d bytes", m, o, freed)
	}
	if _, err := os.Stat(s.objPath(sha256Sum("v2"))); err == nil {
		t.Error("b's object kept")
	}
	for _, v := range []string{"same", "v1", "v3"} {
		if _, err := os.Stat(s.objPath(sha256Sum(v))); err != nil {
			t.Errorf("object of %q pruned", v)
		}
	}
	if _, err := s.Changes(context.Background(), root, b.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("pruned snapshot: %v", err)
	}
	restore(t, s, root, a.ID, nil)
	if readFile(t, root, "v.txt") != "v1" {
		t.Error("a not restored")
	}
	restore(t, s, root, c.ID, nil)
	m, o, _, err = s.Prune(nil)
	if err != nil || m != 1 || o != 1 {
		t.Errorf("Prune(nil): %d %d %v", m, o, err)
	}
	if readFile(t, root, "v.txt") != "v3" {
		t.Error("c not restored")
	}
	// A damaged kept manifest stops the prune before it deletes anything.
	os.WriteFile(s.manifestPath(c.ID), []byte("junk"), 0o600)
	if _, _, _, err := s.Prune(nil); !errors.Is(err, ErrDamaged) {
		t.Errorf("Prune with a damaged manifest: %v", err)
	}
	if _, err := os.Stat(s.objPath(sha256Sum("v3"))); err != nil {
		t.Error("object deleted despite the error")
	}
}

func TestStoreModes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a", "a")
	s := newStore(t, Options{})
	take(t, s, root)
	filepath.WalkDir(s.Dir(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
}

func TestEmptyRootAndErrors(t *testing.T) {
	s := newStore(t, Options{})
	root := t.TempDir()
	snap := take(t, s, root)
	if snap.Files != 0 || snap.ID == "" {
		t.Errorf("%+v", snap)
	}
	writeFile(t, root, "x", "x")
	res := restore(t, s, root, snap.ID, nil)
	if !slices.Equal(res.Deleted, []string{"x"}) {
		t.Errorf("%+v", res)
	}
	if _, err := s.Take(context.Background(), filepath.Join(root, "missing")); err == nil {
		t.Error("Take of a missing root")
	}
}

// A path that cannot be written is named in Failed; the rest is restored.
// The folder is made immutable (chattr +i), which stops even root.
func TestRestoreFailureNamed(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".gitignore", "cache/\n")
	writeFile(t, root, "locked", "old")
	writeFile(t, root, "free.txt", "old")
	s := newStore(t, Options{})
	snap := take(t, s, root)
	// The agent turned the file into a folder that now holds what the
	// user ignores: it cannot go without losing that, so the file cannot
	// come back, and the restore says so instead of failing as a whole.
	if err := os.Remove(filepath.Join(root, "locked")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "locked/cache/big.bin", "ignored")
	writeFile(t, root, "free.txt", "new")
	res := restore(t, s, root, snap.ID, nil)
	if len(res.Failed) == 0 || !slices.ContainsFunc(res.Failed, func(f Skip) bool { return strings.HasPrefix(f.Path, "locked") }) {
		t.Errorf("Failed = %v, want locked named", res.Failed)
	}
	if readFile(t, root, "locked/cache/big.bin") != "ignored" {
		t.Error("the ignored file under the folder was lost")
	}
	if !slices.Contains(res.Restored, "free.txt") || readFile(t, root, "free.txt") != "old" {
		t.Errorf("Restored = %v", res.Restored)
	}
}
