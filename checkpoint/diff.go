package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// Change is one path that differs. Op is "added" (exists now, not in the
// snapshot), "modified" or "deleted" (in the snapshot, not now). A folder's
// path ends with "/"; a path whose kind changed between folder and not
// folder shows as the old form deleted and the new form added.
type Change struct {
	Path string
	Op   string
}

// Ops of a Change.
const (
	Added    = "added"
	Modified = "modified"
	Deleted  = "deleted"
)

// item is one change, with what Restore does about it.
type item struct {
	show string
	op   string
	m    *entry // the snapshot's entry (write it back), or nil
	d    *entry // the disk's entry (remove it: op added), or nil
	mode bool   // only the permission bits differ
	kept bool
}

// plan is what separates the disk (D) from a snapshot (M).
type plan struct {
	items     []*item // in cmpPath order of their entries
	skipFails []Skip  // skipped at the snapshot, changed since
	// blocked: disk folders holding something left alone, and why (the
	// why of the first such thing found; 0 for "kept").
	blocked map[string]uint8
}

func (p *plan) block(child string, why uint8) {
	for dir := path.Dir(child); dir != "."; dir = path.Dir(dir) {
		if old, ok := p.blocked[dir]; ok && (old != 0 || why == 0) {
			return // its ancestors are marked already
		}
		p.blocked[dir] = why
	}
}

// skipChanged tells whether a path skipped at the snapshot (m) is not as it
// was (d, nil if gone).
func skipChanged(m, d *entry) bool {
	if d == nil || m.Mode.Type() != d.Mode.Type() {
		return true
	}
	if m.isDir() || m.Why == whySpecial {
		return false
	}
	return !statSame(m, d)
}

func skipFailText(why uint8) string {
	switch why {
	case whyBig:
		return "changed since the snapshot, which did not copy it: too large to have been copied"
	case whyLimit:
		return "changed since the snapshot, which did not copy it: over the snapshot's limits"
	case whySpecial:
		return "gone since the snapshot: not a regular file, so never copied"
	case whyUnreadable:
		return "changed since the snapshot, which could not read it"
	case whyChanging:
		return "changed since the snapshot, which could not copy it as it was changing"
	}
	return "not covered by the snapshot"
}

// diff compares a snapshot M with the disk D (both in cmpPath order).
func diff(M, D []entry) *plan {
	p := &plan{blocked: map[string]uint8{}}
	i, j := 0, 0
	skipUnder := "" // snapshot entries under this folder cannot be compared
	for i < len(M) || j < len(D) {
		c := 0
		switch {
		case i == len(M):
			c = 1
		case j == len(D):
			c = -1
		default:
			c = cmpPath(M[i].Path, D[j].Path)
		}
		switch {
		case c < 0:
			m := &M[i]
			i++
			if skipUnder != "" && strings.HasPrefix(m.Path, skipUnder) {
				continue
			}
			if m.covered() {
				p.items = append(p.items, &item{show: m.show(), op: Deleted, m: m})
			} else if m.Why != whyIgnored && m.Why != whyProtected {
				p.skipFails = append(p.skipFails, Skip{Path: m.show(), Why: skipFailText(m.Why)})
			}
		case c > 0:
			d := &D[j]
			j++
			if d.covered() {
				p.items = append(p.items, &item{show: d.show(), op: Added, d: d})
			} else {
				p.block(d.Path, d.Why)
			}
		default:
			m, d := &M[i], &D[j]
			i++
			j++
			p.both(m, d, &skipUnder)
		}
	}
	return p
}

func (p *plan) both(m, d *entry, skipUnder *string) {
	if !m.covered() {
		if m.Why != whyIgnored && skipChanged(m, d) {
			p.skipFails = append(p.skipFails, Skip{Path: m.show(), Why: skipFailText(m.Why)})
		}
		p.block(d.Path, d.Why)
		return
	}
	if !d.covered() {
		switch {
		case d.Why == whyProtected || d.Why == whyUnreadable && d.isDir():
			// Excluded now, or a folder we cannot read: leave it and
			// what the snapshot had under it.
			if d.Why == whyUnreadable {
				p.skipFails = append(p.skipFails, Skip{Path: m.show(), Why: "could not be read now"})
			}
			if d.isDir() {
				*skipUnder = d.Path + "/"
			}
			p.block(d.Path, d.Why)
		case m.Kind == kDir:
			// A FIFO or the like stands where a folder was.
			p.items = append(p.items, &item{show: m.show(), op: Deleted, m: m})
		default:
			p.items = append(p.items, &item{show: m.show(), op: Modified, m: m})
		}
		return
	}
	if m.Kind != d.Kind {
		if m.Kind == kDir || d.Kind == kDir {
			p.items = append(p.items, &item{show: m.show(), op: Deleted, m: m}, &item{show: d.show(), op: Added, d: d})
		} else {
			p.items = append(p.items, &item{show: m.show(), op: Modified, m: m})
		}
		return
	}
	same := true
	switch m.Kind {
	case kFile:
		same = d.hashed && d.Hash == m.Hash && d.Size == m.Size
	case kLink:
		same = d.Target == m.Target
	}
	switch {
	case !same:
		p.items = append(p.items, &item{show: m.show(), op: Modified, m: m})
	case m.Kind != kLink && m.Mode&permBits != d.Mode&permBits:
		p.items = append(p.items, &item{show: m.show(), op: Modified, m: m, mode: true})
	}
}

func (p *plan) changes() []Change {
	out := make([]Change, 0, len(p.items))
	for _, it := range p.items {
		out = append(out, Change{Path: it.show, Op: it.op})
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// compareDisk loads snapshot id and walks root to compare with it.
func (s *Store) compareDisk(ctx context.Context, root *os.Root, abs, id string) (*plan, error) {
	M, err := s.loadManifest(id)
	if err != nil {
		return nil, err
	}
	w := s.newWalker(ctx, modeCompare, abs, M)
	if err := w.run(root); err != nil {
		return nil, err
	}
	return diff(M, w.out), nil
}

// Changes lists what differs between the disk now and snapshot id, for the
// paths the snapshot covers (and the paths created since that are not
// ignored), sorted by path.
func (s *Store) Changes(ctx context.Context, root, id string) ([]Change, error) {
	abs, err := absRoot(root)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	defer r.Close()
	p, err := s.compareDisk(ctx, r, abs, id)
	if err != nil {
		return nil, err
	}
	return p.changes(), nil
}

// Between lists what changed from snapshot a to snapshot b (added: in b, not
// in a), without reading the disk. Paths that either snapshot skipped are
// left out.
func (s *Store) Between(a, b string) ([]Change, error) {
	unlock, err := s.lock(context.Background(), false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	A, err := s.loadManifest(a)
	if err != nil {
		return nil, err
	}
	B, err := s.loadManifest(b)
	if err != nil {
		return nil, err
	}
	// Compare only what both cover: a path either skipped is left out.
	skipped := map[string]bool{}
	for _, es := range [][]entry{A, B} {
		for i := range es {
			if !es[i].covered() {
				skipped[es[i].Path] = true
			}
		}
	}
	cov := func(es []entry) []entry {
		out := make([]entry, 0, len(es))
		for _, e := range es {
			if e.covered() && !skipped[e.Path] {
				out = append(out, e)
			}
		}
		return out
	}
	return diff(cov(A), cov(B)).changes(), nil
}
