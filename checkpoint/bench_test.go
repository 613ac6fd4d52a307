//go:build unix

package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The 100k tree is made once per process (it takes a while) and shared.
var (
	tree100kOnce sync.Once
	tree100kDir  string
	tree100kErr  error
	benchDirs    []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func benchTemp(b *testing.B) string {
	d, err := os.MkdirTemp("", "checkpoint-bench-")
	if err != nil {
		b.Fatal(err)
	}
	benchDirs = append(benchDirs, d)
	return d
}

// makeTree writes dirs folders of files files each, 1–4 KiB of random bytes
// apiece, with mtimes an hour old (as in a workspace not just written).
func makeTree(root string, dirs, files int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096)
	old := time.Now().Add(-time.Hour)
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("pkg%04d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for f := range files {
			n := 1024 + rng.IntN(3072)
			for i := range n {
				buf[i] = byte(rng.Uint32())
			}
			p := filepath.Join(dir, fmt.Sprintf("file%03d.go", f))
			if err := os.WriteFile(p, buf[:n], 0o644); err != nil {
				return err
			}
			if err := os.Chtimes(p, old, old); err != nil {
				return err
			}
		}
	}
	return nil
}

func tree100k(b *testing.B) string {
	tree100kOnce.Do(func() {
		d, err := os.MkdirTemp("", "checkpoint-bench-100k-")
		if err != nil {
			tree100kErr = err
			return
		}
		benchDirs = append(benchDirs, d)
		tree100kDir = d
		tree100kErr = makeTree(d, 1000, 100)
	})
	if tree100kErr != nil {
		b.Fatal(tree100kErr)
	}
	return tree100kDir
}

// storeSize reports the objects' and manifests' bytes and their disk usage.
func reportStoreSize(b *testing.B, s *Store) {
	var size, blocks int64
	filepath.WalkDir(s.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		size += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			blocks += int64(st.Blocks) * 512
		}
		return nil
	})
	b.ReportMetric(float64(size)/(1<<20), "store-MiB")
	b.ReportMetric(float64(blocks)/(1<<20), "store-disk-MiB")
}

func benchTake(b *testing.B, s *Store, root string) Snapshot {
	snap, err := s.Take(context.Background(), root)
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

func BenchmarkTake100kFiles(b *testing.B) {
	root := tree100k(b)
	b.Run("first", func(b *testing.B) {
		var s *Store
		for b.Loop() {
			b.StopTimer()
			if s != nil {
				os.RemoveAll(s.Dir())
			}
			var err error
			s, err = Open(filepath.Join(benchTemp(b), "store"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			snap := benchTake(b, s, root)
			if snap.Files != 100_000 {
				b.Fatalf("%d files", snap.Files)
			}
		}
		reportStoreSize(b, s)
	})
	s, err := Open(filepath.Join(benchTemp(b), "store"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchTake(b, s, root)
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			if snap := benchTake(b, s, root); snap.Copied != 0 {
				b.Fatalf("copied %d", snap.Copied)
			}
		}
		reportStoreSize(b, s)
	})
	b.Run("onechanged", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			p := filepath.Join(root, "pkg0500", "file050.go")
			if err := os.WriteFile(p, []byte(fmt.Sprintf("package x // %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			benchTake(b, s, root)
		}
		reportStoreSize(b, s)
	})
}

func BenchmarkTake2GBIgnored(b *testing.B) {
	root := benchTemp(b)
	if err := makeTree(filepath.Join(root, "src"), 20, 100); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"build/app.bin", "build/cache/objects.pack"} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Truncate(p, 1<<30); err != nil { // sparse: cheap to make
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		var s *Store
		for b.Loop() {
			b.StopTimer()
			if s != nil {
				os.RemoveAll(s.Dir())
			}
			var err error
			s, err = Open(filepath.Join(benchTemp(b), "store"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			snap := benchTake(b, s, root)
			if snap.Files != 2001 || len(snap.Skipped) != 1 {
				b.Fatalf("%+v", snap)
			}
		}
		reportStoreSize(b, s)
	})
	s, err := Open(filepath.Join(benchTemp(b), "store"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchTake(b, s, root)
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			benchTake(b, s, root)
		}
		reportStoreSize(b, s)
	})
}

func BenchmarkRestoreOneFile(b *testing.B) {
	root := tree100k(b)
	s, err := Open(filepath.Join(benchTemp(b), "store"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(root, "pkg0250", "file025.go")
	orig, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	snap := benchTake(b, s, root)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := os.WriteFile(p, []byte(fmt.Sprintf("edited %d", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := s.Restore(context.Background(), root, snap.ID, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Restored) != 1 {
			b.Fatalf("%+v", res)
		}
	}
	if got, _ := os.ReadFile(p); string(got) != string(orig) {
		b.Fatal("not restored")
	}
}
