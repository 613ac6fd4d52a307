package checkpoint

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// kind of an entry.
const (
	kFile uint8 = 1 + iota // regular file, copied (Hash)
	kLink                  // symbolic link (Target)
	kDir                   // folder
	kSkip                  // present but not covered (Why says why); left alone
)

// why an entry is kSkip.
const (
	whyIgnored    uint8 = 1 + iota // matched by .gitignore or .git/info/exclude
	whyBig                         // regular file larger than MaxFileBytes
	whyLimit                       // beyond MaxFiles or MaxTotalBytes
	whySpecial                     // FIFO, socket, device
	whyUnreadable                  // could not be read (permission...)
	whyChanging                    // replaced while it was being read
	whyProtected                   // .git or an excluded path (never in a manifest)
)

const flagRacy uint8 = 1 // mtime too close to the scan: do not trust the stat

// entry is one path of a snapshot, or of the disk as walked now.
type entry struct {
	Path   string // slash-separated, relative to the root
	Kind   uint8
	Why    uint8
	Flags  uint8
	Mode   fs.FileMode // type and permission bits
	Size   int64
	Mtime  int64 // ns
	Ctime  int64 // ns
	Ino    uint64
	Hash   [32]byte // kFile
	Target string   // kLink

	hashed bool // (disk only) Hash is known
}

func (e *entry) covered() bool { return e.Kind == kFile || e.Kind == kLink || e.Kind == kDir }

func (e *entry) isDir() bool { return e.Mode.IsDir() }

// show is the path as shown to users: a folder ends with "/".
func (e *entry) show() string {
	if e.isDir() {
		return e.Path + "/"
	}
	return e.Path
}

// permBits are the mode bits a restore puts back.
const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// cmpPath orders paths as a depth-first walk with sorted folders visits
// them: component by component, so a folder's contents follow it at once.
// It is byte order with '/' below every other byte.
func cmpPath(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

const manifestMagic = "zero-checkpoint-manifest-1\n"

// encodeManifest encodes entries (in cmpPath order). Paths are stored
// front-coded: the length shared with the previous path, then the rest.
func encodeManifest(es []entry) []byte {
	n := len(manifestMagic) + binary.MaxVarintLen64
	for i := range es {
		n += len(es[i].Path) + len(es[i].Target) + 48
		if es[i].Kind == kFile {
			n += 32
		}
	}
	b := make([]byte, 0, n)
	b = append(b, manifestMagic...)
	b = binary.AppendUvarint(b, uint64(len(es)))
	prev := ""
	for i := range es {
		e := &es[i]
		shared := 0
		for shared < len(prev) && shared < len(e.Path) && prev[shared] == e.Path[shared] {
			shared++
		}
		b = binary.AppendUvarint(b, uint64(shared))
		b = binary.AppendUvarint(b, uint64(len(e.Path)-shared))
		b = append(b, e.Path[shared:]...)
		prev = e.Path
		b = append(b, e.Kind, e.Why, e.Flags)
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendVarint(b, e.Size)
		b = binary.AppendVarint(b, e.Mtime)
		b = binary.AppendVarint(b, e.Ctime)
		b = binary.AppendUvarint(b, e.Ino)
		switch e.Kind {
		case kFile:
			b = append(b, e.Hash[:]...)
		case kLink:
			b = binary.AppendUvarint(b, uint64(len(e.Target)))
			b = append(b, e.Target...)
		}
	}
	return b
}

var errBadManifest = errors.New("bad encoding")

// decodeManifest is the inverse of encodeManifest; it checks the order.
func decodeManifest(data []byte) ([]entry, error) {
	if !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil, errBadManifest
	}
	r := data[len(manifestMagic):]
	bad := false
	uv := func() uint64 {
		x, n := binary.Uvarint(r)
		if n <= 0 {
			bad = true
			r = nil
			return 0
		}
		r = r[n:]
		return x
	}
	sv := func() int64 {
		x, n := binary.Varint(r)
		if n <= 0 {
			bad = true
			r = nil
			return 0
		}
		r = r[n:]
		return x
	}
	take := func(n uint64) []byte {
		if n > uint64(len(r)) {
			bad = true
			r = nil
			return nil
		}
		out := r[:n]
		r = r[n:]
		return out
	}
	count := uv()
	if bad || count > uint64(len(r)) {
		return nil, errBadManifest
	}
	es := make([]entry, count)
	// All paths go into one arena, turned into one string at the end.
	arena := make([]byte, 0, len(r))
	offs := make([]int, count+1)
	prevStart, prevLen := 0, 0
	for i := range es {
		shared := uv()
		rest := take(uv())
		if bad || shared > uint64(prevLen) {
			return nil, errBadManifest
		}
		start := len(arena)
		arena = append(arena, arena[prevStart:prevStart+int(shared)]...)
		arena = append(arena, rest...)
		offs[i] = start
		prevStart, prevLen = start, len(arena)-start
		e := &es[i]
		hdr := take(3)
		if bad {
			return nil, errBadManifest
		}
		e.Kind, e.Why, e.Flags = hdr[0], hdr[1], hdr[2]
		e.Mode = fs.FileMode(uv())
		e.Size = sv()
		e.Mtime = sv()
		e.Ctime = sv()
		e.Ino = uv()
		switch e.Kind {
		case kFile:
			copy(e.Hash[:], take(32))
			e.hashed = true
		case kLink:
			e.Target = string(take(uv()))
		case kDir, kSkip:
		default:
			return nil, errBadManifest
		}
		if bad {
			return nil, errBadManifest
		}
	}
	if len(r) != 0 {
		return nil, errBadManifest
	}
	offs[count] = len(arena)
	all := string(arena)
	for i := range es {
		es[i].Path = all[offs[i]:offs[i+1]]
		if es[i].Path == "" || i > 0 && cmpPath(es[i-1].Path, es[i].Path) >= 0 {
			return nil, errBadManifest
		}
	}
	return es, nil
}

func manifestID(enc []byte) string {
	h := sha256.Sum256(enc)
	return hex.EncodeToString(h[:16])
}

// saveManifest stores es and returns its id. An identical manifest already
// stored is not written again.
func (s *Store) saveManifest(es []entry) (string, error) {
	enc := encodeManifest(es)
	id := manifestID(enc)
	p := s.manifestPath(id)
	if _, err := os.Stat(p); err == nil {
		return id, nil
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	zw.Write(enc)
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := s.writeAtomic(p, z.Bytes()); err != nil {
		return "", fmt.Errorf("checkpoint: write manifest: %w", err)
	}
	return id, nil
}

// loadManifest reads and checks manifest id.
func (s *Store) loadManifest(id string) ([]entry, error) {
	if !validID(id) {
		return nil, fmt.Errorf("checkpoint: %q is not a snapshot id: %w", id, ErrNotFound)
	}
	f, err := os.Open(s.manifestPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: snapshot %s: manifest %s is missing: %w", id, s.manifestPath(id), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: snapshot %s: %w", id, err)
	}
	defer f.Close()
	corrupt := func(why string) error {
		return fmt.Errorf("checkpoint: snapshot %s: manifest %s is corrupt (%s): %w", id, s.manifestPath(id), why, ErrDamaged)
	}
	zdata, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: snapshot %s: %w", id, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zdata))
	if err != nil {
		return nil, corrupt(err.Error())
	}
	// gzip's trailer gives the size (mod 4 GiB): read into one buffer.
	var enc []byte
	if n := len(zdata); n >= 4 {
		if size := binary.LittleEndian.Uint32(zdata[n-4:]); size < 1<<30 {
			enc = make([]byte, 0, int(size)+1)
		}
	}
	buf := bytes.NewBuffer(enc)
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, corrupt(err.Error())
	}
	enc = buf.Bytes()
	if manifestID(enc) != id {
		return nil, corrupt("its bytes no longer hash to its name")
	}
	es, err := decodeManifest(enc)
	if err != nil {
		return nil, corrupt(err.Error())
	}
	return es, nil
}
