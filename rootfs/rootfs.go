// Package rootfs reads folders that someone else may have written (a
// workspace's .zero folder, a profile folder cloned from a repository)
// through an [os.Root], so that no symbolic link, ".." or absolute path in
// them leads out: a link to ~/.aws/credentials or /proc/self/environ reads
// as a file that is not there, and says why.
//
// Each call opens the root afresh, so what it reads is the folder as it is
// now (an edit shows on the next read) and nothing stays open.
package rootfs

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// ErrEscapes is the error of a name that leads out of its folder: a
// symbolic link (or a chain of them) to something outside, or "..". It
// also matches [fs.ErrNotExist], so a reader that treats a missing file as
// absent treats such a link the same way; errors.Is(err, ErrEscapes) tells
// the two apart, to name the link in a warning.
var ErrEscapes error = escapeError{}

type escapeError struct{}

func (escapeError) Error() string {
	return "leads out of its folder (a symbolic link or '..' to outside is not followed)"
}
func (escapeError) Is(target error) bool { return target == fs.ErrNotExist }

// Open opens the folder sub of base as a root: base's own path is the
// caller's (links in it are followed), but sub is resolved inside base, so
// a sub or a link in it that leads out of base fails with [ErrEscapes].
// sub "" or "." is base itself. The root is the caller's to close.
func Open(base, sub string) (*os.Root, error) {
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	if sub == "" || sub == "." {
		return r, nil
	}
	s, err := r.OpenRoot(filepath.FromSlash(sub))
	r.Close()
	if err != nil {
		return nil, wrap(err)
	}
	return s, nil
}

// FS is the folder sub of base (see [Open]) as an fs.FS: every name is
// resolved inside it, and one that leads out fails with [ErrEscapes].
// A folder that is missing reads as empty of everything ([fs.ErrNotExist]).
func FS(base, sub string) fs.FS { return dirFS{base: base, sub: sub} }

type dirFS struct{ base, sub string }

func (d dirFS) root(op, name string) (*os.Root, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	r, err := Open(d.base, d.sub)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: unwrapPath(err)}
	}
	return r, nil
}

func (d dirFS) Open(name string) (fs.File, error) {
	r, err := d.root("open", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(name))
	if err != nil {
		return nil, wrap(err)
	}
	return f, nil
}

func (d dirFS) ReadFile(name string) ([]byte, error) {
	r, err := d.root("read", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := r.ReadFile(filepath.FromSlash(name))
	return b, wrap(err)
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	r, err := d.root("stat", name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fi, err := r.Stat(filepath.FromSlash(name))
	return fi, wrap(err)
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dir, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	// os.File.ReadDir does not sort; fs.ReadDirFS promises sorted entries.
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// PerEntry is a folder whose every entry is a root of its own: the
// entries themselves may be links (to a profile kept elsewhere: the
// owner of the folder put them there), but nothing inside an entry leads
// out of it. It suits the user's agents folder, whose profiles may be
// linked in from a dotfiles repository and may have been cloned from
// someone else's.
func PerEntry(dir string) fs.FS { return perEntry(dir) }

type perEntry string

// split returns the folder that resolves name and name within it: the
// entry's own root, or for "." the folder itself (its listing only: every
// entry it lists is opened through its own root).
func (p perEntry) split(op, name string) (fs.FS, string, error) {
	if !fs.ValidPath(name) {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return os.DirFS(string(p)), ".", nil
	}
	entry, rest, _ := strings.Cut(name, "/")
	return FS(filepath.Join(string(p), entry), ""), cmp.Or(rest, "."), nil
}

func (p perEntry) Open(name string) (fs.File, error) {
	sub, rest, err := p.split("open", name)
	if err != nil {
		return nil, err
	}
	return sub.Open(rest)
}

func (p perEntry) ReadFile(name string) ([]byte, error) {
	sub, rest, err := p.split("read", name)
	if err != nil {
		return nil, err
	}
	return fs.ReadFile(sub, rest)
}

func (p perEntry) Stat(name string) (fs.FileInfo, error) {
	sub, rest, err := p.split("stat", name)
	if err != nil {
		return nil, err
	}
	return fs.Stat(sub, rest)
}

func (p perEntry) ReadDir(name string) ([]fs.DirEntry, error) {
	sub, rest, err := p.split("readdir", name)
	if err != nil {
		return nil, err
	}
	return fs.ReadDir(sub, rest)
}

// ReadFile reads the file name (slash-separated, relative to the folder
// sub of base, see [Open]) of at most limit bytes. A larger file fails
// with [ErrTooLarge]; one that leads out, with [ErrEscapes].
func ReadFile(base, sub, name string, limit int64) ([]byte, error) {
	r, err := Open(base, sub)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(filepath.FromSlash(name), os.O_RDONLY|noBlock, 0)
	if err != nil {
		return nil, wrap(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%d bytes at most)", ErrTooLarge, limit)}
	}
	return data, nil
}

// noBlock opens a named pipe without waiting for a writer (no context or
// Ctrl-C could interrupt that wait): ReadFile then refuses it as not a
// regular file. 0 where there are no named pipes.
var noBlock = func() int {
	if runtime.GOOS == "windows" {
		return 0
	}
	return syscall.O_NONBLOCK
}()

// NotRegular words what a file of mode m is when it is not a regular file
// ("a named pipe"), and is "" for a regular file: reading a pipe or a
// device waits for a writer or never ends.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}

// ErrTooLarge is the error of a file over ReadFile's limit.
var ErrTooLarge = errors.New("file too large")

// Escapes reports whether the name (relative to base/sub) is a link, or
// goes through one, that leads out of the folder: what a listing should
// name as ignored.
func Escapes(base, sub, name string) bool {
	r, err := Open(base, sub)
	if err != nil {
		return errors.Is(err, ErrEscapes)
	}
	defer r.Close()
	_, err = r.Stat(filepath.FromSlash(name))
	return errors.Is(wrap(err), ErrEscapes)
}

// Wrap turns the error of an os.Root method for a name that leads out of
// the root into one matching [ErrEscapes] (and [fs.ErrNotExist]); any other
// error is returned as it is. It is for callers that use an os.Root
// directly.
func Wrap(err error) error { return wrap(err) }

// wrap turns os.Root's "path escapes from parent" into ErrEscapes.
func wrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == escapesText {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: ErrEscapes}
	}
	return err
}

// escapesText is os.Root's error for a name that leaves the root (the
// os package does not export it; TestLinksOutAreNotRead keeps this in step).
const escapesText = "path escapes from parent"

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsEscape reports whether err, or an error it wraps (a rename's
// *os.LinkError as well as a *fs.PathError), is an os.Root's refusal of a
// name that leads out of the root, or [ErrEscapes].
func IsEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err == ErrEscapes || err.Error() == escapesText {
			return true
		}
	}
	return false
}

// Within reports whether p is root or below it; both are clean and
// absolute.
func Within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Reason words a file system error for the model without the path, which
// may be the real one rather than the name it gave: "no such file",
// "permission denied", else the error's own words.
func Reason(err error) string {
	err = unwrapPath(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}
