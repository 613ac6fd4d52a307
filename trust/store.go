package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// StoreFile is the name of the trust records inside the user's config
// directory: outside every workspace, so neither a repository nor the agent
// can trust itself.
const StoreFile = "trust.json"

// Status says what may run of a workspace's code.
type Status string

// The statuses.
const (
	// StatusNone: the workspace carries nothing that acts.
	StatusNone Status = "none"
	// StatusTrusted: the user trusted exactly the current content.
	StatusTrusted Status = "trusted"
	// StatusUntrusted: the user never trusted this workspace.
	StatusUntrusted Status = "untrusted"
	// StatusChanged: the user trusted other content; what changed is in
	// State.Changes.
	StatusChanged Status = "changed"
)

// Change is one difference between the trusted content and the current one.
type Change struct {
	Path string `json:"path"`
	What string `json:"what"` // "added", "changed" or "removed"
	// Was is the digest the user trusted ("" for an added file), to check
	// a kept copy against (see [ContentDigest]).
	Was string `json:"was,omitempty"`
}

// State is what the store says about a workspace's current content.
type State struct {
	Status   Status
	Manifest *Manifest
	Changes  []Change  // for StatusChanged
	Trusted  time.Time // when the record was made, if there is one
}

// Runs reports whether the workspace's code may run.
func (s State) Runs() bool { return s.Status == StatusTrusted }

// Message tells the user, in one paragraph, why workspace code is off and
// how to turn it on; "" when nothing needs saying.
func (s State) Message() string {
	m := s.Manifest
	switch s.Status {
	case StatusUntrusted:
		return fmt.Sprintf("This workspace carries %s that would run on this machine (%s). "+
			"Zero runs none of it until you review it and trust it: zero trust --workspace %s",
			plural(len(m.Files), "file"), listPaths(m, 3), m.Workspace)
	case StatusChanged:
		var names []string
		for _, c := range s.Changes {
			names = append(names, c.Path+" ("+c.What+")")
		}
		shown := names
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(names)-3))
		}
		return fmt.Sprintf("Workspace code changed since you trusted it: %s. "+
			"Zero runs none of it until you review it and trust it again: zero trust --workspace %s",
			strings.Join(shown, ", "), m.Workspace)
	}
	return ""
}

func listPaths(m *Manifest, n int) string {
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if len(paths) > n {
		paths = append(paths[:n:n], fmt.Sprintf("and %d more", len(m.Files)-n))
	}
	return strings.Join(paths, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Store keeps the user's trust records in one JSON file.
type Store struct {
	path string
	now  func() time.Time
}

// NewStore returns the store in the user's config directory userDir.
func NewStore(userDir string) *Store {
	return &Store{path: filepath.Join(userDir, StoreFile), now: time.Now}
}

// Path is the file the records are kept in.
func (s *Store) Path() string { return s.path }

type record struct {
	Digest  string            `json:"digest"`
	Trusted time.Time         `json:"trusted_at"`
	Files   map[string]string `json:"files"` // path -> digest, to name what changed
}

type document struct {
	Version    int                `json:"version"`
	Workspaces map[string]*record `json:"workspaces"`
}

func (s *Store) load() (*document, error) {
	doc := &document{Version: 1, Workspaces: map[string]*record{}}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: read %s: %w", s.path, err)
	}
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("trust: %s is damaged (%v); remove it and trust your workspaces again", s.path, err)
	}
	if doc.Workspaces == nil {
		doc.Workspaces = map[string]*record{}
	}
	return doc, nil
}

// save writes the records atomically, readable by the user only.
func (s *Store) save(doc *document) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust: write %s: %w", s.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("trust: write %s: %w", s.path, err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("trust: write %s: %w", s.path, err)
	}
	return nil
}

// Check compares m with the record of its workspace.
func (s *Store) Check(m *Manifest) (State, error) {
	st := State{Manifest: m}
	if m.Empty() {
		st.Status = StatusNone
		return st, nil
	}
	doc, err := s.load()
	if err != nil {
		st.Status = StatusUntrusted
		return st, err
	}
	rec := doc.Workspaces[m.Workspace]
	switch {
	case rec == nil:
		st.Status = StatusUntrusted
		return st, nil
	case rec.Digest == m.Digest:
		st.Status, st.Trusted = StatusTrusted, rec.Trusted
		return st, nil
	}
	st.Status, st.Trusted = StatusChanged, rec.Trusted
	seen := map[string]bool{}
	for _, f := range m.Files {
		seen[f.Path] = true
		switch old, ok := rec.Files[f.Path]; {
		case !ok:
			st.Changes = append(st.Changes, Change{Path: f.Path, What: "added"})
		case old != f.Digest:
			st.Changes = append(st.Changes, Change{Path: f.Path, What: "changed", Was: old})
		}
	}
	for p, old := range rec.Files {
		if !seen[p] {
			st.Changes = append(st.Changes, Change{Path: p, What: "removed", Was: old})
		}
	}
	slices.SortFunc(st.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return st, nil
}

// Grant records that the user trusts exactly m. An empty manifest removes
// the record instead: there is nothing to trust.
func (s *Store) Grant(m *Manifest) error {
	doc, err := s.load()
	if err != nil {
		return err
	}
	if m.Empty() {
		delete(doc.Workspaces, m.Workspace)
		return s.save(doc)
	}
	rec := &record{Digest: m.Digest, Trusted: s.now().UTC().Truncate(time.Second), Files: map[string]string{}}
	for _, f := range m.Files {
		rec.Files[f.Path] = f.Digest
	}
	doc.Workspaces[m.Workspace] = rec
	return s.save(doc)
}

// Revoke forgets the trust of workspace; it reports whether there was any.
func (s *Store) Revoke(workspace string) (bool, error) {
	doc, err := s.load()
	if err != nil {
		return false, err
	}
	if _, ok := doc.Workspaces[workspace]; !ok {
		return false, nil
	}
	delete(doc.Workspaces, workspace)
	return true, s.save(doc)
}
