package skills

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/rootfs"
)

// Bounds of the search of one [Dir].
const (
	// MaxDepth is how many folders below a Dir's Path a skill's folder may lie. It allows
	// <dir>/<repository>/skills/<category>/<skill>/ with room to spare.
	MaxDepth = 6
	// MaxEntries is how many files and folders the search of one Dir looks at; past it the rest
	// is skipped with a warning.
	MaxEntries = 10000
)

// Dir is a folder searched for skills.
type Dir struct {
	Path string
	// Layer names where the folder comes from ("workspace", "profile", "user"); it is reported
	// in [Skill.Layer] and in warnings.
	Layer string
	// FollowLinks follows symbolic links directly inside Path that lead to folders, so a skill
	// kept elsewhere can be linked in (as skill installers do). Set it only for the user's own
	// folders, never for a workspace's: its content comes from whoever wrote the repository.
	// Links further down, and links out of a skill's folder, are never followed.
	FollowLinks bool
	// Within, when set, is a folder Path must lie in, its own path and links
	// included: a workspace, whose .zero folder may be a link out of it.
	Within string
}

// Warning is a skill, or a file or folder, that was skipped.
type Warning struct {
	Path  string // the SKILL.md, or the file or folder concerned
	Layer string
	Err   error // wraps one of the sentinels in errors.go, or a file-system error
}

// Error names the file and says what is wrong with it.
func (w Warning) Error() string {
	s := "skills: " + w.Path
	if w.Layer != "" {
		s += " (" + w.Layer + ")"
	}
	if w.Err != nil {
		s += ": " + w.Err.Error()
	}
	return s
}

// String is Error, so a Warning prints well with %v.
func (w Warning) String() string { return w.Error() }

// Unwrap returns Err, so errors.Is(w, ErrTooLarge) works on a Warning used as an error.
func (w Warning) Unwrap() error { return w.Err }

// Catalog is the set of skills an agent may use. It is immutable and safe for concurrent use; the
// zero value is an empty catalog.
type Catalog struct {
	entries []entry // sorted by name
}

// entry is a skill and how to reopen its folder without following links out of it.
type entry struct {
	Skill
	base   string // the absolute folder the search opened (a Dir's Path or a followed link)
	within string // the Dir's Within: the folder base is opened inside
	rel    string // the skill's folder inside base, '/'-separated; "." for base itself
}

// openBase opens the folder base as a root; inside within when that is set,
// so that no link in base's own path leads out of within.
func openBase(within, base string) (*os.Root, error) {
	if within == "" {
		return os.OpenRoot(base)
	}
	rel, err := filepath.Rel(within, base)
	if err != nil {
		return nil, err
	}
	return rootfs.Open(within, rel)
}

// Discover searches dirs, in order, for folders holding a SKILL.md, up to [MaxDepth] folders deep.
// Hidden folders and dependency folders (node_modules, venv, __pycache__) are not searched, and
// symbolic links are not followed (but see [Dir.FollowLinks]). A skill whose name an earlier Dir
// already has is left out: list the workspace's folder first, then the profile's, then the user's.
// Missing folders are fine. Every skill that cannot be used is reported as a [Warning] and skipped.
func Discover(dirs ...Dir) (Catalog, []Warning) {
	var (
		c     Catalog
		warns []Warning
		taken = map[string]bool{}
	)
	for _, d := range dirs {
		found, w := search(d)
		warns = append(warns, w...)
		here := map[string]string{} // name -> folder, within this Dir
		for _, e := range found {
			if first, dup := here[e.Name]; dup {
				warns = append(warns, Warning{Path: filepath.Join(e.Dir, SkillFile), Layer: d.Layer,
					Err: fmt.Errorf("%w: %q is %s", ErrDuplicate, e.Name, first)})
				continue
			}
			here[e.Name] = e.Dir
			if !taken[e.Name] {
				taken[e.Name] = true
				c.entries = append(c.entries, e)
			}
		}
	}
	slices.SortFunc(c.entries, func(a, b entry) int { return cmp.Compare(a.Name, b.Name) })
	return c, warns
}

// search finds the skills of one Dir, in lexical order of their folders.
func search(d Dir) ([]entry, []Warning) {
	if d.Path == "" {
		return nil, nil
	}
	s := &searcher{layer: d.Layer, within: d.Within, budget: MaxEntries}
	abs, err := filepath.Abs(d.Path)
	if err != nil {
		s.warn(d.Path, err)
		return nil, s.warns
	}
	links := s.walk(abs, MaxDepth, d.FollowLinks)
	for _, name := range links {
		s.walk(filepath.Join(abs, name), MaxDepth-1, false)
	}
	return s.found, s.warns
}

type searcher struct {
	layer  string
	within string
	budget int
	found  []entry
	warns  []Warning
}

func (s *searcher) warn(p string, err error) {
	s.warns = append(s.warns, Warning{Path: p, Layer: s.layer, Err: err})
}

// walk searches the folder base to depth folders down and returns the names of the symbolic
// links directly in it that lead to folders, when follow is set.
func (s *searcher) walk(base string, depth int, follow bool) (links []string) {
	if s.budget <= 0 {
		return nil
	}
	root, err := openBase(s.within, base)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, rootfs.ErrEscapes) {
			s.warn(base, err)
		}
		return nil
	}
	defer root.Close()
	var dirs []string
	fs.WalkDir(root.FS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			s.warn(filepath.Join(base, filepath.FromSlash(p)), err)
			return nil // an unreadable folder is skipped, the rest searched
		}
		if s.budget--; s.budget < 0 {
			if s.budget == -1 {
				s.warn(base, ErrTooMany)
			}
			return fs.SkipAll
		}
		if p == "." {
			return nil
		}
		name := de.Name()
		if de.IsDir() {
			if ignoredDir(name) || strings.Count(p, "/")+1 > depth {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case name == SkillFile:
			dirs = append(dirs, path.Dir(p))
		case de.Type()&fs.ModeSymlink != 0 && !strings.Contains(p, "/") && !hidden(name):
			// A skill folder linked in: followed only in the user's own folders. Stat reads no
			// content, so looking where the link leads is harmless.
			if fi, err := os.Stat(filepath.Join(base, name)); err != nil || !fi.IsDir() {
				return nil
			}
			if follow {
				links = append(links, name)
			} else {
				s.warn(filepath.Join(base, name), ErrLinkNotFollowed)
			}
		}
		return nil
	})
	for _, rel := range dirs {
		e, err := readEntry(root, base, rel)
		if err != nil {
			s.warn(filepath.Join(e.Dir, SkillFile), err)
			continue
		}
		e.Layer, e.within = s.layer, s.within
		s.found = append(s.found, e)
	}
	return links
}

// readEntry reads the skill in the folder rel of root (the folder base).
func readEntry(root *os.Root, base, rel string) (entry, error) {
	e := entry{Skill: Skill{Dir: filepath.Join(base, filepath.FromSlash(rel))}, base: base, rel: rel}
	sr, err := openSkill(root, rel)
	if err != nil {
		return e, err
	}
	defer sr.Close()
	data, err := readSkillFile(sr)
	if err != nil {
		return e, err
	}
	skill, _, err := parse(data)
	if err != nil {
		return e, err
	}
	skill.Dir = e.Dir
	e.Skill = skill
	return e, nil
}

// openSkill opens the folder rel of root as a root of its own, so that nothing read from the
// skill can lead out of its folder.
func openSkill(root *os.Root, rel string) (*os.Root, error) {
	if rel == "." {
		return root.OpenRoot(".")
	}
	return root.OpenRoot(filepath.FromSlash(rel))
}

// ignoredDir reports folders never searched or listed: hidden ones (.git, .venv, ...) and
// dependency folders (Agent Zero's conf/skill.default.gitignore).
func ignoredDir(name string) bool {
	switch name {
	case "node_modules", "venv", "__pycache__":
		return true
	}
	return hidden(name)
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// List returns the skills sorted by name.
func (c Catalog) List() []Skill {
	out := make([]Skill, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.Skill
		out[i].Tags = slices.Clone(e.Tags)
	}
	return out
}

// Len is the number of skills.
func (c Catalog) Len() int { return len(c.entries) }

// Get finds a skill by name, ignoring case, surrounding space and "**" bold markers, with runs of
// spaces read as '-' (as Agent Zero matches names). A name no skill has is tried as a skill's
// folder name.
func (c Catalog) Get(name string) (Skill, bool) {
	e, ok := c.lookup(name)
	if !ok {
		return Skill{}, false
	}
	e.Tags = slices.Clone(e.Tags)
	return e.Skill, true
}

func (c Catalog) lookup(name string) (entry, bool) {
	key := normalize(name)
	if key == "" {
		return entry{}, false
	}
	for _, e := range c.entries {
		if e.Name == key {
			return e, true
		}
	}
	for _, e := range c.entries {
		if normalize(filepath.Base(e.Dir)) == key {
			return e, true
		}
	}
	return entry{}, false
}

func normalize(name string) string {
	name = strings.TrimSpace(name)
	name = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(name, "**"), "**"))
	return strings.ToLower(strings.Join(strings.Fields(name), "-"))
}

// Load reads the skill name (see [Catalog.Get]) afresh from its folder: its SKILL.md body and the
// list of its other files. An edit of the SKILL.md since [Discover] is seen; a skill that became
// unreadable or invalid gives an error.
func (c Catalog) Load(name string) (Loaded, error) {
	e, ok := c.lookup(name)
	if !ok {
		return Loaded{}, fmt.Errorf("%w: %q", ErrNotFound, cut.Head(strings.TrimSpace(name), MaxName+1))
	}
	root, err := openBase(e.within, e.base)
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", e.Name, err)
	}
	defer root.Close()
	sr, err := openSkill(root, e.rel)
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", e.Name, err)
	}
	defer sr.Close()
	data, err := readSkillFile(sr)
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", e.Name, err)
	}
	fresh, body, err := parse(data)
	if err != nil {
		return Loaded{}, fmt.Errorf("load skill %s: %w", e.Name, err)
	}
	l := Loaded{Skill: e.Skill, Body: body}
	l.Description, l.Tags, l.Version = fresh.Description, fresh.Tags, fresh.Version
	l.Files, l.More = listFiles(sr)
	return l, nil
}

// listFiles lists the files of a skill's folder besides its SKILL.md. A symbolic link is listed
// when it leads to a regular file inside the folder; links to folders are not followed.
func listFiles(sr *os.Root) (files []string, more bool) {
	budget := MaxEntries
	fs.WalkDir(sr.FS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if budget--; budget < 0 {
			more = true
			return fs.SkipAll
		}
		name := de.Name()
		if de.IsDir() {
			if ignoredDir(name) || strings.Count(p, "/")+1 > maxFileDepth {
				return fs.SkipDir
			}
			return nil
		}
		if hidden(name) || p == SkillFile {
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			if fi, err := sr.Stat(filepath.FromSlash(p)); err != nil || !fi.Mode().IsRegular() {
				return nil // leads out of the folder, nowhere, or to a folder
			}
		} else if !de.Type().IsRegular() {
			return nil
		}
		if len(files) == MaxFiles {
			more = true
			return fs.SkipAll
		}
		files = append(files, p)
		return nil
	})
	return files, more
}
