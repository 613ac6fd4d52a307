package checkpoint

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Skip names a path a snapshot does not cover, and why.
type Skip struct {
	Path string // slash-separated, relative to the root; a folder ends with "/"
	Why  string
}

// Snapshot describes one Take.
type Snapshot struct {
	ID      string
	Root    string // absolute
	Files   int    // regular files and symbolic links covered
	Bytes   int64  // the bytes of those files
	Copied  int64  // bytes newly written to the object store by this snapshot
	Skipped []Skip // at most 20: first what was skipped for size, limits, kind or errors, then what .gitignore ignores (a folder is named once, not its contents)
	// SkippedCount is the number of skipped paths not listed in Skipped.
	SkippedCount int
	Partial      bool // MaxFiles or MaxTotalBytes left files out
	Took         time.Duration
}

// Take snapshots the files under root. Unchanged files (same size, mtime,
// inode and ctime as in the root's previous snapshot) are not read again.
func (s *Store) Take(ctx context.Context, root string) (Snapshot, error) {
	start := time.Now()
	abs, err := absRoot(root)
	if err != nil {
		return Snapshot{}, err
	}
	unlockRoot, err := s.lockRoot(ctx, abs)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlockRoot()
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()

	r, err := os.OpenRoot(abs)
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint: %w", err)
	}
	defer r.Close()

	var prev []entry
	if ix, ok := s.readIndex(abs); ok {
		prev, _ = s.loadManifest(ix.Manifest) // no cache if it is gone or damaged
	}
	w := s.newWalker(ctx, modeTake, abs, prev)
	w.scanStart = time.Now().UnixNano()
	if err := w.run(r); err != nil {
		return Snapshot{}, err
	}
	if err := ctx.Err(); err != nil {
		return Snapshot{}, err
	}
	id, err := s.saveManifest(w.out)
	if err != nil {
		return Snapshot{}, err
	}
	if err := s.writeIndex(rootIndex{Root: abs, Manifest: id, Taken: time.Now().UTC()}); err != nil {
		return Snapshot{}, fmt.Errorf("checkpoint: write root index: %w", err)
	}
	snap := Snapshot{ID: id, Root: abs, Copied: w.copied, Partial: w.partial}
	for i := range w.out {
		switch e := &w.out[i]; e.Kind {
		case kFile:
			snap.Files++
			snap.Bytes += e.Size
		case kLink:
			snap.Files++
		}
	}
	snap.Skipped, snap.SkippedCount = w.skips.result()
	snap.Took = time.Since(start)
	return snap, nil
}

// Latest returns the id of the newest snapshot of root in this store.
func (s *Store) Latest(root string) (string, bool) {
	abs, err := absRoot(root)
	if err != nil {
		return "", false
	}
	ix, ok := s.readIndex(abs)
	return ix.Manifest, ok
}
