package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// haveObject reports whether the object h of size bytes is stored. An object
// of the wrong size is damaged and is written again.
func (s *Store) haveObject(h [32]byte, size int64) bool {
	fi, err := os.Lstat(s.objPath(h))
	return err == nil && fi.Mode().IsRegular() && fi.Size() == size
}

// putObject stores data under its hash h and returns the bytes written
// (0 if the object was already there).
func (s *Store) putObject(h [32]byte, data []byte) (int64, error) {
	if s.haveObject(h, int64(len(data))) {
		return 0, nil
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "o-*")
	if err != nil {
		return 0, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.placeObject(f.Name(), h)
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return int64(len(data)), nil
}

// placeObject renames the finished temporary file tmp to object h.
func (s *Store) placeObject(tmp string, h [32]byte) error {
	p := s.objPath(h)
	sub := filepath.Base(filepath.Dir(p))
	if _, ok := s.objDirs.Load(sub); !ok {
		if err := os.Mkdir(filepath.Dir(p), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		s.objDirs.Store(sub, struct{}{})
	}
	return os.Rename(tmp, p)
}

// ctxReader stops a long read when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	n   int
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.n++; c.n%16 == 0 {
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
	}
	return c.r.Read(p)
}

// streamObject copies at most limit+1 bytes of r into a temporary file while
// hashing them. It returns the hash and the bytes read; if store is false or
// more than limit bytes came, nothing is stored. Otherwise the bytes are
// stored as an object (copied: bytes newly written).
func (s *Store) streamObject(ctx context.Context, r io.Reader, limit int64, store bool) (h [32]byte, n, copied int64, err error) {
	hs := sha256.New()
	src := &ctxReader{ctx: ctx, r: io.LimitReader(r, limit+1)}
	if !store {
		n, err = io.Copy(hs, src)
		hs.Sum(h[:0])
		return h, n, 0, err
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "o-*")
	if err != nil {
		return h, 0, 0, err
	}
	defer func() {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n, err = io.Copy(io.MultiWriter(f, hs), src)
	if err != nil || n > limit {
		return h, n, 0, err
	}
	hs.Sum(h[:0])
	if s.haveObject(h, n) {
		return h, n, 0, nil
	}
	if err := f.Close(); err != nil {
		return h, n, 0, err
	}
	name := f.Name()
	f = nil
	if err := s.placeObject(name, h); err != nil {
		os.Remove(name)
		return h, n, 0, err
	}
	return h, n, n, nil
}

// checkObject reads object h in full and checks that it still hashes to its
// name and has the size the manifest recorded.
func (s *Store) checkObject(ctx context.Context, h [32]byte, size int64, forPath string) error {
	f, err := os.Open(s.objPath(h))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: object %s (the copy of %s) is missing: %w", s.objPath(h), forPath, ErrDamaged)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: object %s (the copy of %s): %w", s.objPath(h), forPath, err)
	}
	defer f.Close()
	hs := sha256.New()
	n, err := io.Copy(hs, &ctxReader{ctx: ctx, r: f})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("checkpoint: object %s (the copy of %s): %w", s.objPath(h), forPath, err)
	}
	var got [32]byte
	hs.Sum(got[:0])
	if got != h || n != size {
		return fmt.Errorf("checkpoint: object %s (the copy of %s) is corrupt: its %d bytes hash to %s: %w",
			s.objPath(h), forPath, n, hex.EncodeToString(got[:8]), ErrDamaged)
	}
	return nil
}
