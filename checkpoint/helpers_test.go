package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newStore opens a store in a fresh folder outside any workspace.
func newStore(t testing.TB, opt Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeFile writes rel under root, creating folders.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustNotExist(t testing.TB, root, rel string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		t.Errorf("%s exists, want it gone", rel)
	}
}

// treeListing describes every path under root (without following links): kind,
// permission bits, and a hash of a file's bytes or a link's target.
func treeListing(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode()&permBits)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			out[rel] = fmt.Sprintf("file %v %s", fi.Mode()&permBits, hex.EncodeToString(h[:8]))
		default:
			out[rel] = fmt.Sprintf("other %v", fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameListing reports the differences between two listings.
func sameListing(t testing.TB, want, got map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if got[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: want %q, got %q", k, v, got[k]))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unexpected %q", k, v))
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("tree differs:\n%s", strings.Join(diffs, "\n"))
	}
}

// covered returns the snapshot's entries by path: "file", "link", "dir" or
// "skip:<why>".
func covered(t testing.TB, s *Store, id string) map[string]string {
	t.Helper()
	es, err := s.loadManifest(id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		switch e.Kind {
		case kFile:
			out[e.Path] = "file"
		case kLink:
			out[e.Path] = "link"
		case kDir:
			out[e.Path] = "dir"
		default:
			out[e.Path] = fmt.Sprintf("skip:%d", e.Why)
		}
	}
	return out
}

func take(t testing.TB, s *Store, root string) Snapshot {
	t.Helper()
	snap, err := s.Take(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func restore(t testing.TB, s *Store, root, id string, keep func(string) bool) Result {
	t.Helper()
	res, err := s.Restore(context.Background(), root, id, keep)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func changes(t testing.TB, s *Store, root, id string) []Change {
	t.Helper()
	cs, err := s.Changes(context.Background(), root, id)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// backdate sets every mtime under root an hour back, so that the stat cache
// trusts them (files written just now are "racy").
func backdate(t testing.TB, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// countHashes counts the files read by Take/Changes/Restore while fn runs.
func countHashes(fn func()) (n int64, paths []string) {
	var count atomic.Int64
	ch := make(chan string, 1<<16)
	testHookHash = func(rel string) {
		count.Add(1)
		select {
		case ch <- rel:
		default:
		}
	}
	defer func() { testHookHash = nil }()
	fn()
	close(ch)
	for p := range ch {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return count.Load(), paths
}

func fmtChanges(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s\n", c.Op, c.Path)
	}
	return b.String()
}

func sha256Sum(content string) [32]byte { return sha256.Sum256([]byte(content)) }
