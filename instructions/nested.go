package instructions

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"time"
)

const (
	// maxWalk is how many folders a look for nested instructions visits:
	// a huge tree is not walked to its end on an agent's turn.
	maxWalk = 4000
	// maxDepth is how deep below the workspace it looks.
	maxDepth = 8
	// stale is how old a look may be before the next prompt starts another
	// (in the background; the prompt uses the last one meanwhile).
	stale = 30 * time.Second
)

// skipped are folders that hold other people's code or built files, not
// instructions for this project.
var skipped = map[string]bool{"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true, "__pycache__": true}

// nested is the last look for AGENTS.md (or CLAUDE.md) in the main
// folder's subfolders.
type nested struct {
	list    []string
	at      time.Time
	running bool
	done    chan struct{} // closed when the first look ends
}

// Nested are the subfolders' instructions files, slash paths relative to
// the main folder, at most [MaxNested] in name order. The first call waits
// for the first look (see [Set.Look]); later ones return the last look and
// start a new one in the background when it is older than 30 s.
func (s *Set) Nested() []string {
	done := s.start()
	if done == nil {
		return nil
	}
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nest.list
}

// Look starts the first look for the subfolders' instructions in the
// background, so that the first prompt need not wait for all of it.
func (s *Set) Look() { s.start() }

// start starts a look when none was made or the last is stale, and returns
// what is closed when the first look is over (nil without a folder).
func (s *Set) start() chan struct{} {
	if len(s.roots) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := &s.nest
	if n.done == nil {
		n.done = make(chan struct{})
		n.running = true
		go s.look(n.done)
	} else if !n.running && s.now().Sub(n.at) > stale {
		n.running = true
		go s.look(nil)
	}
	return n.done
}

// look walks the main folder and keeps what it found; first is closed
// after the first look.
func (s *Set) look(first chan struct{}) {
	list := walk(s.roots[0])
	s.mu.Lock()
	s.nest.list, s.nest.at, s.nest.running = list, s.now(), false
	s.mu.Unlock()
	if first != nil {
		close(first)
	}
}

// walk finds AGENTS.md, else CLAUDE.md, in the subfolders of root, breadth
// first, through an os.Root: links are not followed (a linked folder is
// not a folder here), hidden and vendored folders are skipped.
func walk(root string) []string {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	fsys := r.FS()
	type dir struct {
		name  string
		depth int
	}
	var found []string
	queue, visited := []dir{{".", 0}}, 0
	for len(queue) > 0 && visited < maxWalk {
		d := queue[0]
		queue = queue[1:]
		visited++
		entries, err := fs.ReadDir(fsys, d.name)
		if err != nil {
			continue
		}
		if d.name != "." {
			for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
				if i := slices.IndexFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name }); i >= 0 && entries[i].Type().IsRegular() {
					found = append(found, path.Join(d.name, name))
					break
				}
			}
		}
		if d.depth == maxDepth {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && e.Name()[0] != '.' && !skipped[e.Name()] {
				queue = append(queue, dir{path.Join(d.name, e.Name()), d.depth + 1})
			}
		}
	}
	found = sorted(found)
	if len(found) > MaxNested {
		found = found[:MaxNested]
	}
	return found
}
