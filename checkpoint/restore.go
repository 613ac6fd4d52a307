package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Result tells what Restore did. Paths are as in Change.
type Result struct {
	Restored []string // written back: modified or deleted since the snapshot
	Deleted  []string // created since the snapshot, removed
	Kept     []string // paths keep said to leave alone
	Failed   []Skip   // could not be restored or removed, and why
}

// Restore puts the files under root back as they were at snapshot id:
// what was modified or deleted since is written back, what was created
// since is removed. Paths .gitignore ignores now, or ignored or skipped at
// the snapshot, are left alone; so are paths for which keep (if not nil)
// returns true — keep is asked about each changed path (as Changes shows
// it; a folder kept keeps all under it).
//
// Every object needed is checked before the workspace is touched: a missing
// or damaged copy or manifest is an error and nothing is written.
func (s *Store) Restore(ctx context.Context, root, id string, keep func(path string) bool) (Result, error) {
	var res Result
	abs, err := absRoot(root)
	if err != nil {
		return res, err
	}
	unlockRoot, err := s.lockRoot(ctx, abs)
	if err != nil {
		return res, err
	}
	defer unlockRoot()
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return res, err
	}
	defer unlock()
	r, err := os.OpenRoot(abs)
	if err != nil {
		return res, fmt.Errorf("checkpoint: %w", err)
	}
	defer r.Close()

	p, err := s.compareDisk(ctx, r, abs, id)
	if err != nil {
		return res, err
	}

	// Ask keep, parents before children ("a/" sorts before "a/b").
	asked := slices.Clone(p.items)
	slices.SortStableFunc(asked, func(a, b *item) int { return strings.Compare(a.show, b.show) })
	keptDirs := map[string]bool{}  // shown paths of kept folders
	keptPaths := map[string]bool{} // raw paths kept (in any form)
	for _, it := range asked {
		if underKept(it.show, keptDirs) {
			it.kept = true
		} else if keep != nil && keep(it.show) {
			it.kept = true
			res.Kept = append(res.Kept, it.show)
			if strings.HasSuffix(it.show, "/") {
				keptDirs[it.show] = true
			}
		}
		if it.kept {
			keptPaths[strings.TrimSuffix(it.show, "/")] = true
			if it.d != nil {
				p.block(it.d.Path, 0)
			}
		}
	}

	// Check every copy needed before touching anything.
	checked := map[[32]byte]bool{}
	for _, it := range p.items {
		if it.kept || it.m == nil || it.m.Kind != kFile || it.mode || checked[it.m.Hash] {
			continue
		}
		if err := s.checkObject(ctx, it.m.Hash, it.m.Size, it.m.Path); err != nil {
			return Result{}, err
		}
		checked[it.m.Hash] = true
	}
	res.Failed = append(res.Failed, p.skipFails...)

	rs := &restorer{ctx: ctx, s: s, r: r, p: p, keptPaths: keptPaths, res: &res, failedDirs: map[string]bool{}}
	if err := rs.run(); err != nil {
		return res, err
	}
	slices.Sort(res.Restored)
	slices.Sort(res.Deleted)
	slices.Sort(res.Kept)
	slices.SortFunc(res.Failed, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

func underKept(show string, keptDirs map[string]bool) bool {
	if len(keptDirs) == 0 {
		return false
	}
	for i := 0; i < len(show)-1; i++ {
		if show[i] == '/' && keptDirs[show[:i+1]] {
			return true
		}
	}
	return false
}

type restorer struct {
	ctx        context.Context
	s          *Store
	r          *os.Root
	p          *plan
	keptPaths  map[string]bool
	res        *Result
	failedDirs map[string]bool // snapshot folders that could not be put back
	dirModes   []*entry        // folders whose mode is set last
}

func (rs *restorer) fail(show string, why string) {
	rs.res.Failed = append(rs.res.Failed, Skip{Path: show, Why: why})
}

func blockedText(why uint8) string {
	switch why {
	case whyIgnored:
		return "not removed: it holds files .gitignore ignores"
	case whyProtected:
		return "not removed: it holds a .git folder or an excluded path"
	case whyFailed:
		return "not removed: something in it could not be removed"
	}
	return "not removed: it holds files the snapshot did not cover"
}

// whyFailed marks a folder blocked by a failed removal inside it.
const whyFailed uint8 = 100

func (rs *restorer) run() error {
	// 1. Remove what was created since, children before their folder.
	for k := len(rs.p.items) - 1; k >= 0; k-- {
		it := rs.p.items[k]
		if it.op != Added || it.kept {
			continue
		}
		if err := rs.ctx.Err(); err != nil {
			return err
		}
		if it.d.Kind == kDir {
			if why, ok := rs.p.blocked[it.d.Path]; ok {
				if why != 0 {
					rs.fail(it.show, blockedText(why))
				}
				rs.p.block(it.d.Path, why)
				continue
			}
		}
		if err := rs.r.Remove(it.d.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			rs.fail(it.show, "not removed: "+errText(err))
			rs.p.block(it.d.Path, whyFailed)
			continue
		}
		rs.res.Deleted = append(rs.res.Deleted, it.show)
	}
	// 2. Write back what was modified or deleted, folders before their contents.
	for _, it := range rs.p.items {
		if it.m == nil || it.kept {
			continue
		}
		if err := rs.ctx.Err(); err != nil {
			return err
		}
		m := it.m
		if rs.underFailed(m.Path) {
			rs.fail(it.show, "not restored: its folder could not be restored")
			if m.Kind == kDir {
				rs.failedDirs[m.Path] = true
			}
			continue
		}
		if rs.keptPaths[m.Path] {
			// What stands there now was kept.
			if m.Kind == kDir {
				rs.failedDirs[m.Path] = true
			}
			continue
		}
		if err := rs.put(it); err != nil {
			if errors.Is(err, rs.ctx.Err()) && rs.ctx.Err() != nil {
				return err
			}
			rs.fail(it.show, "not restored: "+err.Error())
			if m.Kind == kDir {
				rs.failedDirs[m.Path] = true
			}
			continue
		}
		rs.res.Restored = append(rs.res.Restored, it.show)
	}
	// 3. Folder modes last, deepest first, so a read-only folder is filled first.
	for k := len(rs.dirModes) - 1; k >= 0; k-- {
		m := rs.dirModes[k]
		if err := rs.r.Chmod(m.Path, m.Mode&permBits); err != nil {
			rs.fail(m.show(), "mode not restored: "+errText(err))
		}
	}
	return nil
}

func (rs *restorer) underFailed(p string) bool {
	if len(rs.failedDirs) == 0 {
		return false
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if rs.failedDirs[dir] {
			return true
		}
	}
	return false
}

// put writes the snapshot's entry it.m back, removing first whatever of
// another kind stands in its place.
func (rs *restorer) put(it *item) error {
	m := it.m
	fi, err := rs.r.Lstat(m.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errors.New(errText(err))
	}
	if exists && fi.IsDir() && m.Kind != kDir {
		// A folder stands where a file or link was: it had to be emptied
		// and removed in step 1.
		if why, ok := rs.p.blocked[m.Path]; ok && why != 0 {
			return errors.New("a folder stands in its place; " + blockedText(why))
		}
		if err := rs.r.Remove(m.Path); err != nil {
			return errors.New("a folder stands in its place: " + errText(err))
		}
	}
	switch m.Kind {
	case kDir:
		if exists && !fi.IsDir() {
			// A link (perhaps to a folder elsewhere), a file or a FIFO:
			// remove the thing itself, never what it points to.
			if err := rs.r.Remove(m.Path); err != nil {
				return errors.New(errText(err))
			}
			exists = false
		}
		if !exists {
			if err := rs.r.Mkdir(m.Path, 0o700); err != nil {
				return errors.New(errText(err))
			}
		}
		rs.dirModes = append(rs.dirModes, m)
		return nil
	case kLink:
		tmp := tempName(m.Path)
		if err := rs.r.Symlink(m.Target, tmp); err != nil {
			return errors.New(errText(err))
		}
		if err := rs.r.Rename(tmp, m.Path); err != nil {
			rs.r.Remove(tmp)
			return errors.New(errText(err))
		}
		return nil
	}
	// kFile
	if it.mode && exists && fi.Mode().IsRegular() {
		if err := rs.r.Chmod(m.Path, m.Mode&permBits); err != nil {
			return errors.New(errText(err))
		}
		return nil
	}
	return rs.writeFile(m)
}

// writeFile copies the object of m to a temporary file in m's folder, sets
// its mode and renames it into place (replacing a file or link there).
func (rs *restorer) writeFile(m *entry) error {
	src, err := os.Open(rs.s.objPath(m.Hash))
	if err != nil {
		return fmt.Errorf("object %s: %w", hex.EncodeToString(m.Hash[:]), err)
	}
	defer src.Close()
	tmp := tempName(m.Path)
	f, err := rs.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return errors.New(errText(err))
	}
	hs := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, hs), &ctxReader{ctx: rs.ctx, r: src})
	if err == nil {
		err = f.Chmod(m.Mode & permBits)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var got [32]byte
		if hs.Sum(got[:0]); got != m.Hash || n != m.Size {
			err = fmt.Errorf("object %s changed while being restored: %w", rs.s.objPath(m.Hash), ErrDamaged)
		}
	}
	if err == nil {
		err = rs.r.Rename(tmp, m.Path)
	}
	if err != nil {
		rs.r.Remove(tmp)
		if cerr := rs.ctx.Err(); cerr != nil {
			return cerr
		}
		return errors.New(errText(err))
	}
	return nil
}

// tempName is a fresh name beside p.
func tempName(p string) string {
	var b [8]byte
	rand.Read(b[:])
	dir, base := path.Split(p)
	if len(base) > 100 {
		base = base[:100]
	}
	return dir + "." + base + ".zero-restore-" + hex.EncodeToString(b[:])
}
