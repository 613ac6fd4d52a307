// Package instructions reads what people leave for the agents that work
// in their folders: a workspace's AGENTS.md (Codex's name; else Claude
// Code's CLAUDE.md, else Gemini CLI's GEMINI.md), an Agent Zero project's
// instructions (.a0proj/project.json and .a0proj/instructions/), and the
// user's own AGENTS.md in Zero's configuration folder, for the system
// prompt.
//
// They are text for the model, never policy: nothing here changes what the
// agent may do. A workspace's files are read through an [os.Root], so a
// link that leads out of the workspace is named, not followed; each file
// is read up to [MaxFile] bytes (a longer one is cut, saying so), opened
// without blocking (a FIFO is not a file to wait on), and read again when
// its size or time changes.
package instructions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/rootfs"
)

const (
	// MaxFile is how much of one file reaches the prompt (Codex's
	// project_doc_max_bytes); the rest is cut, and the prompt says so.
	MaxFile = 32 << 10
	// MaxTotal is how much of all the files together reaches it.
	MaxTotal = 64 << 10
	// MaxProjectFiles is how many files of .a0proj/instructions are read.
	MaxProjectFiles = 16
	// MaxNested is how many AGENTS.md of subfolders the prompt names.
	MaxNested = 20
)

// Names are the names of a workspace's instructions file, in the order
// they are looked for: the first present is read, the others are not.
var Names = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// UserFile is the name of the user's own instructions in Zero's
// configuration folder (~/.config/zero/AGENTS.md).
const UserFile = "AGENTS.md"

// A File is one instructions file as the prompt shows it.
type File struct {
	// Label is the heading the prompt gives it: "AGENTS.md",
	// ".a0proj/instructions/style.md", "~/.config/zero/AGENTS.md (yours)",
	// or the path of a file of another workspace folder.
	Label string
	Path  string // where it is
	Size  int64  // its size on the disk
	Text  string // what of it reaches the prompt
	Cut   bool   // Text is its start only
	// Problem says why it was not read ("" when it was): a link that leads
	// out of the workspace, not a regular file.
	Problem string
}

// Project is what an Agent Zero project (.a0proj/project.json) says of
// itself.
type Project struct {
	Title, Description string
}

// A Set is the instructions of one workspace and one user. Its methods
// are safe for concurrent use.
type Set struct {
	user  string   // Zero's configuration folder ("" for none)
	roots []string // the workspace's folders, the first the main one
	home  string   // to show the user's file as ~/…

	mu    sync.Mutex
	cache map[string]cached // by path
	nest  nested
	now   func() time.Time
}

type cached struct {
	size int64
	mod  time.Time
	file File
}

// New is the set of the workspace roots (the first is the main folder)
// and the user's configuration folder userDir ("" for none).
func New(userDir string, roots ...string) *Set {
	home, _ := os.UserHomeDir()
	return &Set{user: userDir, roots: roots, home: home, cache: map[string]cached{}, now: time.Now}
}

// Files are the instructions as they are now, the user's first, then each
// workspace folder's, then the Agent Zero project's, cut to [MaxTotal]
// together. A file that changed since the last call is read again.
func (s *Set) Files() []File {
	var files []File
	if s.user != "" {
		p := filepath.Join(s.user, UserFile)
		label := p
		if s.home != "" && rootfs.Within(s.home, p) {
			if rel, err := filepath.Rel(s.home, p); err == nil {
				label = "~/" + filepath.ToSlash(rel)
			}
		}
		if f, ok := s.read(p, label+" (yours)", openOwn(p)); ok {
			files = append(files, f)
		}
	}
	for i, root := range s.roots {
		for _, name := range Names {
			label := name
			if i > 0 {
				label = filepath.Join(root, name)
			}
			if f, ok := s.read(filepath.Join(root, name), label, openIn(root, name)); ok {
				files = append(files, f)
				break
			}
		}
	}
	if len(s.roots) > 0 {
		files = append(files, s.projectFiles(s.roots[0])...)
	}
	return budget(files)
}

// budget cuts the files to MaxTotal together, the last ones first.
func budget(files []File) []File {
	left := MaxTotal
	for i := range files {
		if len(files[i].Text) > left {
			files[i].Text, files[i].Cut = cut.Head(files[i].Text, left), true
		}
		left -= len(files[i].Text)
	}
	return files
}

// opener opens a file without blocking on it.
type opener func() (*os.File, error)

// openOwn opens a file of the user's own folder: a link the user made is
// followed.
func openOwn(p string) opener {
	return func() (*os.File, error) { return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0) }
}

// openIn opens name inside root: a link that leads out is refused.
func openIn(root, name string) opener {
	return func() (*os.File, error) {
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		f, err := r.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		return f, rootfs.Wrap(err)
	}
}

// read reads the file at p through open, or its cached copy when its size
// and time are as they were; ok is false when there is no such file.
func (s *Set) read(p, label string, open opener) (File, bool) {
	f, err := open()
	if errors.Is(err, rootfs.ErrEscapes) {
		return File{Label: label, Path: p, Problem: "it is a link that leads out of the workspace; Zero does not follow it"}, true
	}
	if err != nil {
		return File{}, false // absent, or unreadable like absent
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return File{}, false
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return File{}, false
		}
		return File{Label: label, Path: p, Problem: "it is not a regular file"}, true
	}
	s.mu.Lock()
	c, ok := s.cache[p]
	s.mu.Unlock()
	if ok && c.size == fi.Size() && c.mod.Equal(fi.ModTime()) && c.file.Label == label {
		return c.file, true
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return File{Label: label, Path: p, Problem: rootfs.Reason(err)}, true
	}
	file := File{Label: label, Path: p, Size: fi.Size(), Text: strings.ToValidUTF8(string(data), "\uFFFD")}
	if len(data) > MaxFile {
		file.Text, file.Cut = cut.Head(file.Text, MaxFile), true
	}
	s.mu.Lock()
	s.cache[p] = cached{size: fi.Size(), mod: fi.ModTime(), file: file}
	s.mu.Unlock()
	return file, true
}

// projectDir is where an Agent Zero project keeps its settings.
const projectDir = ".a0proj"

// projectFiles are the instructions of an Agent Zero project in root: the
// "instructions" of its project.json, then the files of its instructions
// folder in name order (as Agent Zero joins them).
func (s *Set) projectFiles(root string) []File {
	var files []File
	if p, ok := s.project(root); ok && p.instructions != "" {
		files = append(files, File{Label: projectDir + "/project.json", Path: filepath.Join(root, projectDir, "project.json"),
			Size: int64(len(p.instructions)), Text: cut.Head(p.instructions, MaxFile), Cut: len(p.instructions) > MaxFile})
	}
	dir := projectDir + "/instructions"
	entries, err := fs.ReadDir(rootfs.FS(root, dir), ".")
	if err != nil {
		return files
	}
	n := 0
	for _, e := range entries {
		if n == MaxProjectFiles {
			files = append(files, File{Label: dir, Path: filepath.Join(root, dir),
				Problem: fmt.Sprintf("only its first %d files are read", MaxProjectFiles)})
			break
		}
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := path.Join(dir, e.Name())
		if f, ok := s.read(filepath.Join(root, filepath.FromSlash(name)), name, openIn(root, name)); ok {
			files = append(files, f)
			n++
		}
	}
	return files
}

type projectJSON struct {
	Title        string `json:"title"`
	Description  string `json:"description"`
	instructions string
}

// project reads root's .a0proj/project.json, if it has one.
func (s *Set) project(root string) (projectJSON, bool) {
	name := projectDir + "/project.json"
	// Through the cache: the prompt asks for it on every request.
	f, ok := s.read(filepath.Join(root, filepath.FromSlash(name)), name, openIn(root, name))
	if !ok || f.Problem != "" || f.Cut {
		return projectJSON{}, false
	}
	data := []byte(f.Text)
	var raw struct {
		Title        string `json:"title"`
		Description  string `json:"description"`
		Instructions string `json:"instructions"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return projectJSON{}, false
	}
	return projectJSON{Title: raw.Title, Description: raw.Description, instructions: strings.TrimSpace(raw.Instructions)}, true
}

// Project is what the workspace's Agent Zero project says of itself (zero
// values when it is none).
func (s *Set) Project() Project {
	if len(s.roots) == 0 {
		return Project{}
	}
	p, _ := s.project(s.roots[0])
	return Project{Title: cut.Line(p.Title, 200), Description: cut.Line(p.Description, 2000)}
}

// Text is the instructions as the prompt shows them: each file under a
// heading naming it, a cut one saying so, then the subfolders that have
// their own AGENTS.md. It is "" when there is none.
func Text(files []File, nested []string) string {
	var b strings.Builder
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "### %s\n", f.Label)
		switch {
		case f.Problem != "":
			fmt.Fprintf(&b, "(not read: %s)", f.Problem)
		default:
			b.WriteString(strings.TrimSpace(f.Text))
			if f.Cut {
				fmt.Fprintf(&b, "\n[cut: the file has %d bytes; only the first %d are here. Read the rest with text_editor if you need it.]", f.Size, len(f.Text))
			}
		}
	}
	if len(nested) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("### Folders with their own instructions\n" +
			"These apply to the files inside their folder and take precedence there over the ones above; read one before you change files in its folder:\n")
		for _, n := range nested {
			b.WriteString("- " + n + "\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// Sorted is a copy of names in order, for stable prompts.
func sorted(names []string) []string {
	names = slices.Clone(names)
	slices.Sort(names)
	return names
}
