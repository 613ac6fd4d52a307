// Package trust decides whether the code a workspace carries may run.
//
// A workspace is input, not code: a cloned repository, or files the agent
// itself wrote. Two kinds of thing live in its .zero folder: text that
// shapes prompts, which loads as it is, and things that act (extension
// executables and their helper files, NAME.disabled switches, tool
// scripts). What acts is inert until the user trusts the workspace, and the
// trust names a digest of exactly those files, recorded in the user's
// config directory, outside every workspace. Any change to them (a git
// pull, or the agent writing into its own workspace) makes them inert again
// until the user looks and trusts again, as direnv does with an .envrc.
//
// [Scan] reads the acting files once and keeps their bytes; [Snapshot]
// writes those same bytes into a private folder, and only that copy is
// ever executed. So what runs is what was hashed, with no window between
// the check and the exec in which the agent could swap a file.
package trust

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/zeroagent/zero/rootfs"
)

// Limits of what a workspace may ask the user to trust. Extension scripts
// are small; a folder past these is refused rather than read into memory.
const (
	MaxFiles     = 2000
	MaxBytes     = 32 << 20 // all files together
	maxLinkDepth = 8
)

// Kinds of acting file.
const (
	KindExtension = "extension" // an executable in an extension point's folder
	KindDisabled  = "disabled"  // NAME.disabled: switches an extension off
	KindTool      = "tool"      // a file in a tools folder (user-defined tools)
	KindFile      = "file"      // any other file beside them (helpers, data)
)

// actingDirs are the folders of a workspace, relative to it, whose files
// can act, or go where the user's consent is asked (its knowledge is
// parsed on this machine and imported into memory); "*" stands for every
// profile; a file (.mcp.json) stands for itself.
var actingDirs = []string{
	".zero/extensions",
	".zero/agents/*/extensions",
	".zero/tools",
	".zero/agents/*/tools",
	".zero/skills",
	".zero/agents/*/skills",
	".zero/knowledge",
	MCPFile,             // MCP servers (Claude Code's and Cursor's file): programs started on this machine
	".zero/secrets.env", // values given to tools and masked everywhere: the user sees what they are
}

// ErrTooLarge means the acting files exceed [MaxFiles] or [MaxBytes].
var ErrTooLarge = errors.New("too many or too large files to trust")

// ErrUnprintable refuses a file whose name holds control or formatting
// characters (terminal escapes, bidirectional overrides): the list the user
// reviews must show every file as it is.
var ErrUnprintable = errors.New("a file name with unprintable characters cannot be shown for review")

// File is one acting file.
type File struct {
	// Path is slash-separated and relative to the workspace.
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Point is the extension point of an extension or .disabled file.
	Point string `json:"point,omitempty"`
	// Digest is "sha256:<hex>" of the content and whether it is executable.
	Digest string `json:"digest"`
	// Link is the target of a symbolic link, as written ("" for none); the
	// digest is of what it points at.
	Link string `json:"link,omitempty"`

	exec bool
	data []byte
}

// Manifest is everything that can act in one workspace.
type Manifest struct {
	Workspace string
	Files     []File // sorted by Path
	// Digest covers every file's path, kind and digest: any change to the
	// acting set changes it.
	Digest string
}

// Empty reports whether the workspace carries nothing that acts.
func (m *Manifest) Empty() bool { return m == nil || len(m.Files) == 0 }

// Scan reads the acting files of workspace (an absolute directory). Missing
// folders are fine. Everything is read through an os.Root of the
// workspace: a symbolic link is followed while it stays inside (its
// target is what would run), up to a depth; one that leads out of the
// workspace, or dangles, is recorded by what it says and never read, so
// nothing outside the workspace reaches the snapshot, a knowledge import or
// a server's command line.
//
// The stdio MCP servers of .mcp.json are code too: each workspace file or
// folder a server's command or arguments name (see [mcpPaths]) is an
// acting file of kind [KindMCP], so the server runs from the snapshot and
// any change to what it runs turns it off until the user trusts again.
func Scan(workspace string) (*Manifest, error) {
	m := &Manifest{Workspace: workspace}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	defer root.Close()
	s := &scanner{m: m, root: root, abs: workspace}
	for _, pattern := range actingDirs {
		dirs := []string{pattern}
		if strings.Contains(pattern, "*") {
			var err error
			dirs, err = s.expand(pattern)
			if err != nil {
				return nil, err
			}
		}
		for _, rel := range dirs {
			if err := s.walk(rel, 0); err != nil {
				return nil, err
			}
		}
	}
	if i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == MCPFile }); i >= 0 && m.Files[i].data != nil {
		for _, rel := range mcpPaths(m.Files[i].data, workspace) {
			s.mcp = true
			if err := s.walk(rel, 0); err != nil {
				return nil, err
			}
		}
		s.mcp = false
	}
	slices.SortFunc(m.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	m.Files = slices.CompactFunc(m.Files, func(a, b File) bool { return a.Path == b.Path })
	h := sha256.New()
	for _, f := range m.Files {
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", f.Path, f.Kind, f.Digest)
	}
	m.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return m, nil
}

type scanner struct {
	m     *Manifest
	root  *os.Root
	abs   string // the workspace's path
	bytes int
	mcp   bool // walking what an MCP server runs
}

// expand lists the folders a pattern with one "*" (a profile name) matches.
func (s *scanner) expand(pattern string) ([]string, error) {
	before, after, _ := strings.Cut(pattern, "*")
	entries, err := s.readDir(strings.TrimSuffix(before, "/"))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || escapes(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, before+e.Name()+after)
		}
	}
	return out, nil
}

// readDir lists a folder of the workspace, sorted by name.
func (s *scanner) readDir(rel string) ([]fs.DirEntry, error) {
	f, err := s.root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return cmp.Compare(a.Name(), b.Name()) })
	return entries, err
}

// escapes reports whether err is os.Root's refusal of a name that leads
// out of the workspace.
func escapes(err error) bool { return errors.Is(rootfs.Wrap(err), rootfs.ErrEscapes) }

// walk records every file under rel (slash-separated, relative to root).
func (s *scanner) walk(rel string, links int) error {
	if !printable(rel) {
		return fmt.Errorf("trust: %q: %w", rel, ErrUnprintable)
	}
	name := filepath.FromSlash(rel)
	fi, err := s.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || escapes(err) {
		return nil // missing, or below a link that leads out (recorded as that link)
	}
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	abs := filepath.Join(s.abs, name)
	if links > 0 && fi.Mode()&fs.ModeSymlink == 0 && pseudo(abs) {
		return nil // below a link to "/": the kernel's files are never read
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		if links >= maxLinkDepth {
			return fmt.Errorf("trust: %s: %w: symbolic links nest too deep", rel, ErrTooLarge)
		}
		link, _ = s.root.Readlink(name)
		target, err := s.root.Stat(name)
		if err != nil || pseudo(abs) { // out of the workspace, dangling, or a kernel file: nothing to copy, but a change must show
			return s.add(File{Path: rel, Kind: s.kind(rel, false), Link: link}, nil)
		}
		fi = target
		links++
	}
	switch {
	case fi.IsDir():
		entries, err := s.readDir(rel)
		if err != nil {
			return fmt.Errorf("trust: %w", err)
		}
		for _, e := range entries {
			if err := s.walk(path.Join(rel, e.Name()), links); err != nil {
				return err
			}
		}
		return nil
	case !fi.Mode().IsRegular():
		return nil // devices and sockets do not run
	}
	if fi.Size() > MaxBytes-int64(s.bytes) {
		return fmt.Errorf("trust: %s: %w (%d bytes at most)", rel, ErrTooLarge, MaxBytes)
	}
	data, err := s.readAtMost(name, MaxBytes-int64(s.bytes))
	if err != nil {
		return fmt.Errorf("trust: %s: %w", rel, err)
	}
	exec := fi.Mode().Perm()&0o111 != 0
	return s.add(File{Path: rel, Kind: s.kind(rel, exec), Link: link, exec: exec}, data)
}

// printable reports whether a path shows as it is: no control or format
// characters that could rewrite the terminal or reorder the text.
func printable(p string) bool {
	for _, r := range p {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(p)
}

// readAtMost reads a file of the workspace, failing with ErrTooLarge past
// max bytes (whatever its size said: a file may grow while it is read).
func (s *scanner) readAtMost(name string, max int64) ([]byte, error) {
	f, err := s.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w (%d bytes at most)", ErrTooLarge, MaxBytes)
	}
	return data, nil
}

// pseudo reports whether a link leads into /proc, /sys or /dev, whose
// files are the kernel's views (zero's own environment among them), not
// content anyone could review: they are never read or copied.
func pseudo(abs string) bool {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return true
	}
	for _, p := range []string{"/proc", "/sys", "/dev"} {
		if real == p || strings.HasPrefix(real, p+"/") {
			return true
		}
	}
	return false
}

// ContentDigest is a file's [File.Digest]: of its content and whether it
// is executable.
func ContentDigest(data []byte, exec bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "exec=%t\x00", exec)
	h.Write(data)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (s *scanner) add(f File, data []byte) error {
	if len(s.m.Files) >= MaxFiles {
		return fmt.Errorf("trust: %w (%d files at most)", ErrTooLarge, MaxFiles)
	}
	s.bytes += len(data)
	if s.bytes > MaxBytes {
		return fmt.Errorf("trust: %w (%d bytes at most)", ErrTooLarge, MaxBytes)
	}
	if data == nil && f.Link != "" {
		h := sha256.New()
		fmt.Fprintf(h, "unread link\x00%s", f.Link)
		f.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	} else {
		f.Digest = ContentDigest(data, f.exec)
	}
	f.data = data
	f.Point = point(f.Path)
	s.m.Files = append(s.m.Files, f)
	return nil
}

// area splits a path into the acting folder it lies in ("extensions" or
// "tools") and the path below that folder.
func area(rel string) (string, []string) {
	parts := strings.Split(rel, "/")
	switch {
	case len(parts) > 2 && parts[0] == ".zero" && parts[1] != "agents":
		return parts[1], parts[2:]
	case len(parts) > 4 && parts[0] == ".zero" && parts[1] == "agents":
		return parts[3], parts[4:]
	}
	return "", nil
}

// kind classifies a file by where it lies.
func (s *scanner) kind(rel string, exec bool) string {
	switch a, rest := area(rel); {
	case s.mcp && rel != MCPFile:
		return KindMCP
	case a == "tools":
		return KindTool
	case a == "extensions" && len(rest) == 2 && strings.HasSuffix(rest[1], ".disabled"):
		return KindDisabled
	case a == "extensions" && len(rest) == 2 && exec:
		return KindExtension
	}
	return KindFile
}

// point is the extension point a file belongs to ("" for none).
func point(rel string) string {
	if a, rest := area(rel); a == "extensions" && len(rest) >= 2 {
		return rest[0]
	}
	return ""
}

// Snapshot writes the manifest's files, byte for byte as they were hashed,
// into a new private folder laid out like the workspace (dir/.zero/…), and
// returns it. Executables keep their executable bit; the folder is the
// caller's to remove.
func Snapshot(m *Manifest) (dir string, err error) {
	dir, err = os.MkdirTemp("", "zero-trusted-")
	if err != nil {
		return "", fmt.Errorf("trust: snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	for _, f := range m.Files {
		if f.data == nil {
			continue // a dangling link: nothing to run
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", fmt.Errorf("trust: snapshot: %w", err)
		}
		mode := fs.FileMode(0o600)
		if f.exec {
			mode = 0o700
		}
		if err := os.WriteFile(p, f.data, mode); err != nil {
			return "", fmt.Errorf("trust: snapshot: %w", err)
		}
	}
	return dir, nil
}
