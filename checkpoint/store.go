package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxFileBytes  = 16 << 20
	DefaultMaxTotalBytes = 1 << 30
	DefaultMaxFiles      = 250_000
)

// Options bound what one snapshot copies.
type Options struct {
	// MaxFileBytes: a bigger file is not copied; it is named in
	// Snapshot.Skipped ("larger than 16 MiB") and recorded as skipped.
	// Zero or less means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxTotalBytes bounds the bytes of the files one snapshot covers; files
	// beyond it are skipped and named, and Snapshot.Partial is set.
	// Zero or less means DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// MaxFiles bounds the entries (files, links and folders) one snapshot
	// covers; beyond it entries are skipped and named, and Partial is set.
	// Zero or less means DefaultMaxFiles.
	MaxFiles int
	// Exclude lists absolute paths that are never walked, copied, deleted or
	// restored (Zero's own data folder, if it lies inside a root). The store's
	// own folder is always excluded.
	Exclude []string
}

// Errors that Take, Changes, Restore, Between and Prune wrap.
var (
	// ErrNotFound: no snapshot with that id is in the store.
	ErrNotFound = errors.New("snapshot not found")
	// ErrDamaged: a manifest or an object in the store is missing or its
	// bytes no longer match its name.
	ErrDamaged = errors.New("checkpoint store damaged")
)

// Store is a checkpoint store in one folder. It is safe for concurrent use,
// and several processes may use the same folder at once.
type Store struct {
	dir     string
	opt     Options
	exclude []string // cleaned absolute paths (Options.Exclude and dir)

	mu       sync.Mutex
	rootLock map[string]chan struct{} // one Take or Restore per root at a time
	objDirs  sync.Map                 // "ab" -> struct{}: objects/ab exists

	lk storeLock
}

// Open opens the store in dir, creating it (mode 0700) if needed.
func Open(dir string, opt Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.MaxTotalBytes <= 0 {
		opt.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = DefaultMaxFiles
	}
	s := &Store{dir: abs, opt: opt, rootLock: map[string]chan struct{}{}}
	for _, sub := range []string{"", "objects", "manifests", "roots", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
	}
	s.exclude = append(s.exclude, abs)
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		s.exclude = append(s.exclude, real)
	}
	for _, e := range opt.Exclude {
		if e == "" {
			continue
		}
		e, err := filepath.Abs(e)
		if err != nil {
			continue
		}
		s.exclude = append(s.exclude, e)
		if real, err := filepath.EvalSymlinks(e); err == nil && real != e {
			s.exclude = append(s.exclude, real)
		}
	}
	s.opt.Exclude = append([]string(nil), opt.Exclude...)
	return s, nil
}

// Dir returns the store's folder.
func (s *Store) Dir() string { return s.dir }

// absRoot cleans root into an absolute path.
func absRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("checkpoint: empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return abs, nil
}

// excludedIn returns the excluded paths that lie strictly inside root, as
// slash-separated paths relative to it.
func (s *Store) excludedIn(root string) map[string]bool {
	roots := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		roots = append(roots, real)
	}
	out := map[string]bool{}
	for _, r := range roots {
		for _, e := range s.exclude {
			rel, err := filepath.Rel(r, e)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
				continue
			}
			out[filepath.ToSlash(rel)] = true
		}
	}
	return out
}

// lockRoot serialises Take and Restore of one root inside this process.
func (s *Store) lockRoot(ctx context.Context, root string) (func(), error) {
	s.mu.Lock()
	ch, ok := s.rootLock[root]
	if !ok {
		ch = make(chan struct{}, 1)
		s.rootLock[root] = ch
	}
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Store) objPath(h [32]byte) string {
	x := hex.EncodeToString(h[:])
	return filepath.Join(s.dir, "objects", x[:2], x[2:])
}

func (s *Store) manifestPath(id string) string {
	return filepath.Join(s.dir, "manifests", id)
}

func rootKey(root string) string {
	h := sha256.Sum256([]byte(root))
	return hex.EncodeToString(h[:])
}

func (s *Store) indexPath(root string) string {
	return filepath.Join(s.dir, "roots", rootKey(root))
}

// rootIndex is the content of roots/<key>.
type rootIndex struct {
	Root     string    `json:"root"`
	Manifest string    `json:"manifest"`
	Taken    time.Time `json:"taken"`
}

func (s *Store) readIndex(root string) (rootIndex, bool) {
	b, err := os.ReadFile(s.indexPath(root))
	if err != nil {
		return rootIndex{}, false
	}
	var ix rootIndex
	if json.Unmarshal(b, &ix) != nil || !validID(ix.Manifest) {
		return rootIndex{}, false
	}
	return ix, true
}

func (s *Store) writeIndex(ix rootIndex) error {
	b, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	return s.writeAtomic(s.indexPath(ix.Root), b)
}

// writeAtomic writes b to a temporary file in tmp/ and renames it to p.
func (s *Store) writeAtomic(p string, b []byte) error {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "w-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// humanBytes formats a limit such as 16 MiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
