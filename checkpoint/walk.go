package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

const (
	smallFile      = 1 << 20 // files up to this size are hashed in memory
	maxIgnoreBytes = 4 << 20 // a bigger .gitignore is not read
	racyWindow     = 2e9     // ns: an mtime this close to the scan is not trusted
	maxSkipsShown  = 20
)

type walkMode int

const (
	modeTake    walkMode = iota // record a snapshot, copy new content
	modeCompare                 // walk the disk to compare with a snapshot
)

// dirRef is an open folder shared by the walker and the hash jobs of the
// files in it; the last user closes it.
type dirRef struct {
	root *os.Root
	refs atomic.Int32
}

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		d.root.Close()
	}
}

// Test hooks: called for each folder listed and each file read, from
// several goroutines at once.
var (
	testHookDir  func(rel string)
	testHookHash func(rel string)
)

type hashJob struct {
	dir   *dirRef
	name  string
	path  string
	idx   int // in walker.out
	ino   uint64
	size  int64
	store bool

	hash    [32]byte
	n       int64
	copied  int64
	why     uint8 // 0, or whyBig, whyChanging, whyUnreadable
	err     error // why it could not be read
	storeEr error // the store could not be written: fatal
}

// walker walks a workspace through an os.Root, one open folder at a time,
// and hashes files with a pool of workers.
type walker struct {
	ctx  context.Context
	s    *Store
	mode walkMode
	excl map[string]bool

	// ref is the previous snapshot (modeTake: the stat cache) or the snapshot
	// compared with (modeCompare), in cmpPath order; the walk visits paths in
	// the same order, so a cursor finds them.
	ref []entry
	ri  int

	scanStart int64 // ns

	out   []entry
	jobs  []*hashJob
	jobCh chan *hashJob
	// listSem bounds the folders being listed at once.
	listSem chan struct{}
	wg      sync.WaitGroup

	parts []string

	// modeTake
	count   int
	total   int64
	partial bool
	skips   skipList
	copied  int64
}

func (s *Store) newWalker(ctx context.Context, mode walkMode, root string, ref []entry) *walker {
	return &walker{ctx: ctx, s: s, mode: mode, excl: s.excludedIn(root), ref: ref, out: make([]entry, 0, len(ref)+len(ref)/8+64)}
}

// lookup returns the ref entry at p. Calls must come in cmpPath order.
func (w *walker) lookup(p string) *entry {
	for w.ri < len(w.ref) && cmpPath(w.ref[w.ri].Path, p) < 0 {
		w.ri++
	}
	if w.ri < len(w.ref) && w.ref[w.ri].Path == p {
		return &w.ref[w.ri]
	}
	return nil
}

// skippedAtRef tells whether, comparing, the snapshot skipped folder p
// (then it is not entered, so not listed ahead either).
func (w *walker) skippedAtRef(p string) bool {
	if w.mode != modeCompare {
		return false
	}
	i, ok := slices.BinarySearchFunc(w.ref[w.ri:], p, func(e entry, p string) int { return cmpPath(e.Path, p) })
	return ok && w.ref[w.ri+i].Kind == kSkip
}

// run walks root. The entries are left in w.out in cmpPath order.
func (w *walker) run(root *os.Root) error {
	top, des, err := listDir(root, ".", "")
	if err != nil {
		return fmt.Errorf("checkpoint: read %s: %w", root.Name(), err)
	}
	w.jobCh = make(chan *hashJob, 256)
	w.listSem = make(chan struct{}, runtime.GOMAXPROCS(0))
	for range runtime.GOMAXPROCS(0) {
		w.wg.Go(w.work)
	}
	var patterns []gitignore.Pattern
	if fi, err := root.Lstat(".git"); err == nil && fi.IsDir() {
		if data, ok := readIgnore(root, ".git/info/exclude"); ok {
			patterns = parseIgnore(data, nil)
		}
	}
	d := &dirRef{root: top}
	d.refs.Store(1)
	err = w.walkDir(d, des, "", 0, patterns)
	d.release()
	close(w.jobCh)
	w.wg.Wait()
	if err != nil {
		if cerr := w.ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("checkpoint: read %s: %w", root.Name(), err)
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	return w.finish()
}

// listDir opens the folder name of parent and lists it, sorted by name.
// The entries are stat'ed with fstatat on the folder (os.File.ReadDir of a
// file opened in a Root does so).
func listDir(parent *os.Root, name, rel string) (*os.Root, []fs.DirEntry, error) {
	if testHookDir != nil {
		testHookDir(rel)
	}
	sub, err := parent.OpenRoot(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := sub.Open(".")
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return sub, des, nil
}

// listing is a folder being listed ahead of the walk, so that the
// system calls of several folders run at once while the walk itself (which
// needs the order) stays on one goroutine.
type listing struct {
	done chan struct{}
	root *os.Root
	des  []fs.DirEntry
	err  error
}

const listAhead = 16 // folders listed ahead, per level of the walk

func (w *walker) startList(parent *dirRef, name, rel string) *listing {
	ls := &listing{done: make(chan struct{})}
	parent.refs.Add(1)
	go func() {
		defer close(ls.done)
		defer parent.release()
		w.listSem <- struct{}{}
		defer func() { <-w.listSem }()
		if err := w.ctx.Err(); err != nil {
			ls.err = err
			return
		}
		ls.root, ls.des, ls.err = listDir(parent.root, name, rel)
	}()
	return ls
}

// discard waits for a listing not used and closes its folder.
func (ls *listing) discard() {
	<-ls.done
	if ls.root != nil {
		ls.root.Close()
	}
}

// readIgnore reads an ignore file through r: a regular file of at most
// maxIgnoreBytes, opened without blocking (a FIFO put in its place is not
// waited on) and checked once open, and read no further than the bound.
func readIgnore(r *os.Root, name string) ([]byte, bool) {
	if fi, err := r.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, false // a link is not followed, as Git does not
	}
	f, err := r.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreBytes {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
	if err != nil || len(data) > maxIgnoreBytes {
		return nil, false
	}
	return data, true
}

// parseIgnore parses a .gitignore (or info/exclude) of the folder domain.
func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var ps []gitignore.Pattern
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// walkDir walks the folder d (rel, at depth; its entries des) with the
// ignore patterns of its parents. It returns an error only if ctx is done.
func (w *walker) walkDir(d *dirRef, des []fs.DirEntry, rel string, depth int, patterns []gitignore.Pattern) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	for _, de := range des {
		if de.Name() != ".gitignore" {
			continue
		}
		if data, ok := readIgnore(d.root, ".gitignore"); ok {
			if ps := parseIgnore(data, w.parts[:depth]); len(ps) > 0 {
				patterns = append(patterns[:len(patterns):len(patterns)], ps...)
			}
		}
		break
	}
	var m gitignore.Matcher
	if len(patterns) > 0 {
		m = gitignore.NewMatcher(patterns)
	}
	// Which entries are ignored, and which folders to list ahead.
	ignored := make([]bool, len(des))
	var ahead []int
	for i, de := range des {
		name := de.Name()
		if m != nil {
			w.parts = append(w.parts[:depth], name)
			ignored[i] = m.Match(w.parts[:depth+1], de.IsDir())
		}
		if de.IsDir() && !ignored[i] && name != ".git" && !w.excl[join(rel, name)] && !w.skippedAtRef(join(rel, name)) {
			ahead = append(ahead, i)
		}
	}
	lists := map[int]*listing{}
	next := 0 // in ahead: the next folder to start listing
	startMore := func() {
		for ; next < len(ahead) && len(lists) < listAhead; next++ {
			name := des[ahead[next]].Name()
			lists[ahead[next]] = w.startList(d, name, join(rel, name))
		}
	}
	defer func() {
		for _, ls := range lists {
			ls.discard()
		}
	}()
	startMore()
	for i, de := range des {
		if i&63 == 63 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		ls := lists[i]
		if ls != nil {
			delete(lists, i)
			startMore()
		}
		name := de.Name()
		p := join(rel, name)
		info, err := de.Info()
		if err != nil {
			if ls != nil {
				ls.discard()
			}
			continue // gone since the listing
		}
		mode := info.Mode()
		ref := w.lookup(p)
		if name == ".git" || w.excl[p] {
			if ls != nil {
				ls.discard()
			}
			if w.mode == modeCompare {
				w.out = append(w.out, entry{Path: p, Kind: kSkip, Why: whyProtected, Mode: mode})
			}
			continue
		}
		e := entry{Path: p, Mode: mode, Size: info.Size(), Mtime: info.ModTime().UnixNano()}
		e.Ino, e.Ctime = inoCtime(info)
		if ls != nil && !mode.IsDir() {
			ls.discard() // no longer a folder
			ls = nil
		}
		ignored := ignored[i]
		if w.mode == modeTake {
			if ignored {
				w.skip(e, whyIgnored, "ignored by .gitignore")
				continue
			}
		} else {
			if ref != nil && ref.Kind == kSkip {
				// Skipped at the snapshot: left alone, compared by its stat.
				if ls != nil {
					ls.discard()
				}
				e.Kind, e.Why = kSkip, ref.Why
				w.out = append(w.out, e)
				continue
			}
			if ignored && (ref == nil || !ref.covered()) {
				e.Kind, e.Why = kSkip, whyIgnored
				w.out = append(w.out, e)
				continue
			}
		}
		switch {
		case mode.IsDir():
			if err := w.dir(d, ls, e, name, depth, patterns); err != nil {
				return err
			}
		case mode&fs.ModeSymlink != 0:
			w.link(d, e, name)
		case mode.IsRegular():
			w.file(d, e, name, ref)
		default:
			w.skip(e, whySpecial, "not a regular file")
		}
	}
	return nil
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// skip records e as not covered.
func (w *walker) skip(e entry, why uint8, text string) {
	e.Kind, e.Why = kSkip, why
	switch why {
	case whyBig, whyLimit, whyUnreadable, whyChanging:
		// Keep the stat: Restore tells whether it changed since.
		if e.isDir() {
			e.Size, e.Mtime, e.Ctime, e.Ino = 0, 0, 0, 0
		}
	default:
		// Its stat is nobody's business: an ignored build folder changes
		// all the time, and must not make an unchanged snapshot new.
		e.Size, e.Mtime, e.Ctime, e.Ino = 0, 0, 0, 0
	}
	if why == whyLimit {
		w.partial = true
	}
	w.out = append(w.out, e)
	if w.mode == modeTake {
		w.skips.add(Skip{Path: e.show(), Why: text}, why == whyIgnored)
	}
}

func (w *walker) limitText(size int64) (string, bool) {
	if w.count >= w.s.opt.MaxFiles {
		return fmt.Sprintf("over the snapshot limit of %d files and folders", w.s.opt.MaxFiles), true
	}
	if w.total+size > w.s.opt.MaxTotalBytes {
		return fmt.Sprintf("over the snapshot limit of %s", humanBytes(w.s.opt.MaxTotalBytes)), true
	}
	return "", false
}

func (w *walker) dir(d *dirRef, ls *listing, e entry, name string, depth int, patterns []gitignore.Pattern) error {
	if w.mode == modeTake {
		if text, over := w.limitText(0); over {
			if ls != nil {
				ls.discard()
			}
			w.skip(e, whyLimit, text)
			return nil
		}
	}
	var (
		sub *os.Root
		des []fs.DirEntry
		err error
	)
	if ls != nil {
		<-ls.done
		sub, des, err = ls.root, ls.des, ls.err
	} else {
		sub, des, err = listDir(d.root, name, e.Path)
	}
	if err != nil {
		if cerr := w.ctx.Err(); cerr != nil {
			return cerr
		}
		w.skip(e, whyUnreadable, "could not be read: "+errText(err))
		return nil
	}
	e.Kind = kDir
	e.Size, e.Mtime, e.Ctime, e.Ino = 0, 0, 0, 0
	w.out = append(w.out, e)
	w.count++
	child := &dirRef{root: sub}
	child.refs.Store(1)
	w.parts = append(w.parts[:depth], name)
	err = w.walkDir(child, des, e.Path, depth+1, patterns)
	child.release()
	return err
}

func (w *walker) link(d *dirRef, e entry, name string) {
	if w.mode == modeTake {
		if text, over := w.limitText(0); over {
			w.skip(e, whyLimit, text)
			return
		}
	}
	target, err := d.root.Readlink(name)
	if err != nil {
		w.skip(e, whyUnreadable, "could not be read: "+errText(err))
		return
	}
	e.Kind = kLink
	e.Target = target
	e.Size, e.Mtime, e.Ctime, e.Ino = 0, 0, 0, 0
	w.out = append(w.out, e)
	w.count++
}

func statSame(a, b *entry) bool {
	return a.Size == b.Size && a.Mtime == b.Mtime && a.Ctime == b.Ctime && a.Ino == b.Ino
}

func (w *walker) file(d *dirRef, e entry, name string, ref *entry) {
	cached := ref != nil && ref.Kind == kFile && ref.Flags&flagRacy == 0 && statSame(ref, &e)
	if w.mode == modeTake {
		if e.Size > w.s.opt.MaxFileBytes {
			w.skip(e, whyBig, "larger than "+humanBytes(w.s.opt.MaxFileBytes))
			return
		}
		if text, over := w.limitText(e.Size); over {
			w.skip(e, whyLimit, text)
			return
		}
		w.count++
		w.total += e.Size
		if e.Mtime >= w.scanStart-racyWindow {
			e.Flags |= flagRacy
		}
	}
	e.Kind = kFile
	need := true
	switch {
	case cached:
		e.Hash, e.hashed = ref.Hash, true
		need = false
	case w.mode == modeCompare:
		// Only a file of the snapshot's size can be unchanged.
		need = ref != nil && ref.Kind == kFile && ref.Size == e.Size
	}
	w.out = append(w.out, e)
	if need {
		j := &hashJob{dir: d, name: name, path: e.Path, idx: len(w.out) - 1, ino: e.Ino, size: e.Size, store: w.mode == modeTake}
		d.refs.Add(1)
		w.jobs = append(w.jobs, j)
		w.jobCh <- j
	}
}

// work is a hashing worker.
func (w *walker) work() {
	var buf bytes.Buffer
	for j := range w.jobCh {
		if w.ctx.Err() == nil {
			w.hash(j, &buf)
		}
		j.dir.release()
		if buf.Cap() > 4*smallFile {
			buf = bytes.Buffer{}
		}
	}
}

func (w *walker) hash(j *hashJob, buf *bytes.Buffer) {
	if testHookHash != nil {
		testHookHash(j.path)
	}
	f, err := j.dir.root.OpenFile(j.name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		j.why, j.err = whyUnreadable, err
		if errors.Is(err, fs.ErrNotExist) {
			j.why = whyChanging
		}
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		j.why, j.err = whyUnreadable, err
		return
	}
	if ino, _ := inoCtime(fi); !fi.Mode().IsRegular() || ino != j.ino {
		j.why = whyChanging // swapped since the listing: not what we stat'ed
		return
	}
	// Comparing, a file longer than it was listed has changed: reading
	// stops there (and the hash stays unknown).
	limit := j.size
	if j.store {
		limit = w.s.opt.MaxFileBytes
	}
	if j.size <= smallFile {
		buf.Reset()
		buf.Grow(int(j.size) + bytes.MinRead)
		if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
			j.why, j.err = whyUnreadable, err
			return
		}
		j.n = int64(buf.Len())
		if j.n > limit {
			j.why = whyBig
			return
		}
		j.hash = sha256.Sum256(buf.Bytes())
		if j.store {
			j.copied, j.storeEr = w.s.putObject(j.hash, buf.Bytes())
		}
		return
	}
	cr := &countReader{r: f}
	h, n, copied, err := w.s.streamObject(w.ctx, cr, limit, j.store)
	switch {
	case cr.err != nil:
		j.why, j.err = whyUnreadable, cr.err
	case err != nil:
		j.storeEr = err
	case n > limit:
		j.why = whyBig
	default:
		j.hash, j.n, j.copied = h, n, copied
	}
}

// countReader remembers a read error, to tell it from a write error.
type countReader struct {
	r   io.Reader
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// finish applies the hash results to w.out.
func (w *walker) finish() error {
	for _, j := range w.jobs {
		if j.storeEr != nil {
			return fmt.Errorf("checkpoint: write to the store: %w", j.storeEr)
		}
		e := &w.out[j.idx]
		if j.why != 0 {
			if w.mode == modeCompare {
				continue // hash unknown: compares as changed
			}
			e.Kind, e.Why = kSkip, j.why
			w.count--
			w.total -= e.Size
			text := "changed while the snapshot was taken"
			switch j.why {
			case whyBig:
				text = "larger than " + humanBytes(w.s.opt.MaxFileBytes)
			case whyUnreadable:
				text = "could not be read: " + errText(j.err)
			}
			w.skips.add(Skip{Path: e.Path, Why: text}, false)
			continue
		}
		e.Hash, e.hashed = j.hash, true
		if j.n != e.Size {
			// It changed while being read: what was read is kept, and the
			// next snapshot reads it again.
			w.total += j.n - e.Size
			e.Size = j.n
			e.Flags |= flagRacy
		}
		w.copied += j.copied
	}
	w.jobs = nil
	return nil
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// skipList keeps the first skips of each class and counts the rest.
type skipList struct {
	important, ignored []Skip
	total              int
}

func (l *skipList) add(s Skip, ignored bool) {
	l.total++
	if ignored {
		if len(l.ignored) < maxSkipsShown {
			l.ignored = append(l.ignored, s)
		}
	} else if len(l.important) < maxSkipsShown {
		l.important = append(l.important, s)
	}
}

// result lists what was skipped for another reason first, then what was ignored.
func (l *skipList) result() ([]Skip, int) {
	out := append(append([]Skip(nil), l.important...), l.ignored...)
	if len(out) > maxSkipsShown {
		out = out[:maxSkipsShown]
	}
	return out, l.total - len(out)
}
