package skills_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/skills"
)

// write creates the files (path relative to dir -> content), with their folders.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func skillMD(name, desc, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s\n", name, desc, body)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func names(list []skills.Skill) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.Name+"@"+s.Layer)
	}
	return out
}

// hasWarning reports whether warns has one for a path ending in suffix that wraps target.
func hasWarning(warns []skills.Warning, suffix string, target error) bool {
	for _, w := range warns {
		if strings.HasSuffix(filepath.ToSlash(w.Path), suffix) && errors.Is(w, target) {
			return true
		}
	}
	return false
}

func TestDiscoverLayers(t *testing.T) {
	t.Parallel()
	ws, prof, user := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, ws, map[string]string{
		"deploy/SKILL.md": skillMD("deploy", "Deploy this project.", "workspace steps"),
	})
	write(t, prof, map[string]string{
		"deploy/SKILL.md":        skillMD("deploy", "Deploy (profile).", "profile steps"),
		"review/SKILL.md":        skillMD("review", "Review code.", ""),
		"web/scraping/SKILL.md":  skillMD("scrape", "Scrape pages.", ""), // a category folder
		"web/scraping/helper.py": "print(1)\n",
	})
	write(t, user, map[string]string{
		"deploy/SKILL.md":                           skillMD("deploy", "Deploy (user).", "user steps"),
		"review/SKILL.md":                           skillMD("review", "Review (user).", ""),
		"notes/SKILL.md":                            skillMD("notes", "Take notes.", ""),
		"repo/skills/docs/pdf/SKILL.md":             skillMD("pdf", "Work with PDFs.", ""), // a cloned repository
		"a/b/c/d/e/f/SKILL.md":                      skillMD("deep", "Six folders down.", ""),
		"a/b/c/d/e/f/g/SKILL.md":                    skillMD("too-deep", "Seven folders down.", ""),
		".hidden/SKILL.md":                          skillMD("hidden", "In a hidden folder.", ""),
		"tool/node_modules/pkg/SKILL.md":            skillMD("dependency", "Inside node_modules.", ""),
		"tool/venv/lib/SKILL.md":                    skillMD("venv", "Inside a venv.", ""),
		"README.md":                                 "not a skill",
		"notes/sub/SKILL.md":                        skillMD("sub-notes", "A skill inside a skill.", ""),
		"notes/__pycache__/x/SKILL.md":              skillMD("cache", "Inside __pycache__.", ""),
		"notes/.git/SKILL.md":                       skillMD("git", "Inside .git.", ""),
		"repo/skills/docs/pdf/scripts/fill_form.py": "pass\n",
	})

	c, warns := skills.Discover(
		skills.Dir{Path: ws, Layer: "workspace"},
		skills.Dir{Path: prof, Layer: "profile"},
		skills.Dir{Path: filepath.Join(t.TempDir(), "missing"), Layer: "profile"}, // no folder: fine
		skills.Dir{Path: "", Layer: "none"},
		skills.Dir{Path: user, Layer: "user"},
	)
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	want := []string{"deep@user", "deploy@workspace", "notes@user", "pdf@user", "review@profile", "scrape@profile", "sub-notes@user"}
	if diff := cmp.Diff(want, names(c.List())); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if c.Len() != len(want) {
		t.Errorf("Len = %d, want %d", c.Len(), len(want))
	}

	s, ok := c.Get("deploy")
	if !ok || s.Description != "Deploy this project." || s.Dir != filepath.Join(ws, "deploy") || s.Layer != "workspace" {
		t.Errorf("Get(deploy) = %+v, %v", s, ok)
	}
	l, err := c.Load("deploy")
	if err != nil || l.Body != "workspace steps" {
		t.Errorf("Load(deploy) = %q, %v; want the workspace's body", l.Body, err)
	}
	l, err = c.Load("pdf")
	if err != nil || !slices.Equal(l.Files, []string{"scripts/fill_form.py"}) {
		t.Errorf("Load(pdf) files = %q, %v", l.Files, err)
	}
}

func TestDiscoverWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"good/SKILL.md":      skillMD("good", "Fine.", ""),
		"nofm/SKILL.md":      "# no front matter\n",
		"noname/SKILL.md":    "---\ndescription: d\n---\n",
		"nodesc/SKILL.md":    "---\nname: nodesc\n---\n",
		"badname/SKILL.md":   skillMD("Bad Name", "d", ""),
		"badyaml/SKILL.md":   "---\nname: [x\n---\n",
		"huge/SKILL.md":      skillMD("huge", "Too big.", strings.Repeat("x", skills.MaxFileSize)),
		"dup1/SKILL.md":      skillMD("twin", "First.", ""),
		"dup2/SKILL.md":      skillMD("twin", "Second.", ""),
		"dirskill/README.md": "",
	})
	if err := os.Mkdir(filepath.Join(dir, "dirskill", "SKILL.md"), 0o755); err != nil { // a folder named SKILL.md
		t.Fatal(err)
	}
	c, warns := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	if diff := cmp.Diff([]string{"good@user", "twin@user"}, names(c.List())); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if s, _ := c.Get("twin"); s.Description != "First." {
		t.Errorf("twin = %q, want the first folder's", s.Description)
	}
	for _, w := range []struct {
		suffix string
		err    error
	}{
		{"nofm/SKILL.md", skills.ErrNoFrontMatter},
		{"noname/SKILL.md", skills.ErrNoName},
		{"nodesc/SKILL.md", skills.ErrNoDescription},
		{"badname/SKILL.md", skills.ErrName},
		{"badyaml/SKILL.md", skills.ErrFrontMatter},
		{"huge/SKILL.md", skills.ErrTooLarge},
		{"dup2/SKILL.md", skills.ErrDuplicate},
	} {
		if !hasWarning(warns, w.suffix, w.err) {
			t.Errorf("no warning %v for %s in %v", w.err, w.suffix, warns)
		}
	}
	if len(warns) != 7 {
		t.Errorf("got %d warnings, want 7: %v", len(warns), warns)
	}
	for _, w := range warns {
		if !strings.HasPrefix(w.Error(), "skills: "+dir) || !strings.Contains(w.Error(), "(user)") {
			t.Errorf("warning %q does not name the file and layer", w.Error())
		}
	}
}

func TestDiscoverBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range skills.MaxEntries + 10 {
		files[fmt.Sprintf("f%05d.txt", i)] = ""
	}
	write(t, dir, files)
	_, warns := skills.Discover(skills.Dir{Path: dir, Layer: "workspace"})
	if len(warns) != 1 || !errors.Is(warns[0], skills.ErrTooMany) {
		t.Errorf("warnings = %v, want one ErrTooMany", warns)
	}
}

// TestSymlinkEscape: a cloned repository may hold links to the user's secrets. Nothing is read
// or listed through a link that leaves a skill's folder.
func TestSymlinkEscape(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	write(t, home, map[string]string{
		".ssh/id_ed25519":  "PRIVATE KEY",
		".ssh/SKILL.md":    skillMD("ssh", "Looks like a skill.", "PRIVATE"),
		"secret.md":        skillMD("stolen", "A skill-shaped secret.", "SECRET BODY"),
		"other/x/SKILL.md": skillMD("linked", "Kept elsewhere.", "linked body"),
	})
	ws := t.TempDir()
	write(t, ws, map[string]string{
		"repo/SKILL.md":   skillMD("repo", "A repository's skill.", "body"),
		"repo/notes.md":   "notes",
		"repo/lib/run.sh": "echo hi\n",
	})
	symlink(t, filepath.Join(home, ".ssh"), filepath.Join(ws, "repo", "keys"))                  // folder out
	symlink(t, filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(ws, "repo", "key.txt")) // file out
	symlink(t, "../../secret.md", filepath.Join(ws, "repo", "lib", "up.md"))                    // relative, out
	symlink(t, "notes.md", filepath.Join(ws, "repo", "alias.md"))                               // inside: listed
	symlink(t, "lib", filepath.Join(ws, "repo", "lib2"))                                        // folder inside: not followed
	symlink(t, filepath.Join(home, "secret.md"), filepath.Join(ws, "evil", "SKILL.md"))         // SKILL.md out
	symlink(t, "../repo/SKILL.md", filepath.Join(ws, "sibling", "SKILL.md"))                    // out of its folder, inside the Dir
	symlink(t, filepath.Join(home, ".ssh"), filepath.Join(ws, "ssh"))                           // a skill folder linked in
	symlink(t, filepath.Join(home, "other"), filepath.Join(ws, "repo", "deeper"))               // below the top: never followed

	c, warns := skills.Discover(skills.Dir{Path: ws, Layer: "workspace"})
	if diff := cmp.Diff([]string{"repo@workspace"}, names(c.List())); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if !hasWarning(warns, "evil/SKILL.md", skills.ErrEscapes) || !hasWarning(warns, "sibling/SKILL.md", skills.ErrEscapes) {
		t.Errorf("warnings = %v, want ErrEscapes for evil and sibling", warns)
	}
	if !hasWarning(warns, "/ssh", skills.ErrLinkNotFollowed) {
		t.Errorf("warnings = %v, want ErrLinkNotFollowed for the linked folder", warns)
	}
	for _, w := range warns {
		if strings.Contains(w.Error(), "SECRET") || strings.Contains(w.Error(), "PRIVATE") {
			t.Errorf("a warning shows a secret: %v", w)
		}
	}
	l, err := c.Load("repo")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alias.md", "lib/run.sh", "notes.md"}, l.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	if strings.Contains(l.Text(), "PRIVATE") || strings.Contains(l.Text(), "SECRET") {
		t.Errorf("loaded text shows a secret:\n%s", l.Text())
	}

	// The user's own folder may link a skill folder in; links out of it are still not followed.
	user := t.TempDir()
	symlink(t, filepath.Join(home, "other", "x"), filepath.Join(user, "linked"))
	symlink(t, filepath.Join(home, "secret.md"), filepath.Join(home, "other", "x", "leak.md"))
	symlink(t, filepath.Join(ws, "evil"), filepath.Join(user, "evil"))
	c, warns = skills.Discover(skills.Dir{Path: user, Layer: "user", FollowLinks: true})
	if diff := cmp.Diff([]string{"linked@user"}, names(c.List())); diff != "" {
		t.Errorf("FollowLinks: List (-want +got):\n%s", diff)
	}
	if !hasWarning(warns, "evil/SKILL.md", skills.ErrEscapes) {
		t.Errorf("FollowLinks: warnings = %v, want ErrEscapes for evil", warns)
	}
	l, err = c.Load("linked")
	if err != nil {
		t.Fatal(err)
	}
	if l.Dir != filepath.Join(user, "linked") || l.Body != "linked body" || len(l.Files) != 0 {
		t.Errorf("FollowLinks: Load = %+v", l)
	}
}

// TestLoadAfterSwap: a SKILL.md replaced by a link to a secret after discovery is not read.
func TestLoadAfterSwap(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	write(t, home, map[string]string{"secret.md": skillMD("swap", "Secret.", "SECRET")})
	write(t, ws, map[string]string{"swap/SKILL.md": skillMD("swap", "Fine.", "fine")})
	c, _ := skills.Discover(skills.Dir{Path: ws, Layer: "workspace"})
	if err := os.Remove(filepath.Join(ws, "swap", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(home, "secret.md"), filepath.Join(ws, "swap", "SKILL.md"))
	if l, err := c.Load("swap"); !errors.Is(err, skills.ErrEscapes) {
		t.Errorf("Load = %q, %v; want ErrEscapes", l.Body, err)
	}

	// The skill's folder itself swapped for a link out of the Dir.
	write(t, home, map[string]string{"dir/SKILL.md": skillMD("swap", "Secret.", "SECRET")})
	if err := os.RemoveAll(filepath.Join(ws, "swap")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(home, "dir"), filepath.Join(ws, "swap"))
	if l, err := c.Load("swap"); err == nil {
		t.Errorf("Load through a swapped folder = %q, want an error", l.Body)
	}
}

func TestGetAndLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"pdf-tools/SKILL.md":           "---\nname: pdf\ndescription: Work with PDFs.\ntags: [docs]\nversion: '2'\n---\n# PDF\n",
		"pdf-tools/scripts/fill.py":    "",
		"pdf-tools/reference/forms.md": "",
		"pdf-tools/.env":               "TOKEN=x",
		"pdf-tools/.git/config":        "",
		"pdf-tools/node_modules/a.js":  "",
		"pdf-tools/sub/SKILL.md":       skillMD("pdf-sub", "Nested.", ""),
		"many/SKILL.md":                skillMD("many", "Many files.", ""),
	}
	for i := range skills.MaxFiles + 5 {
		files[fmt.Sprintf("many/f%03d.txt", i)] = ""
	}
	write(t, dir, files)
	c, warns := skills.Discover(skills.Dir{Path: dir, Layer: "user"})
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	for _, q := range []string{"pdf", "PDF", "  Pdf ", "**pdf**", "pdf-tools", "PDF Tools"} {
		if s, ok := c.Get(q); !ok || s.Name != "pdf" {
			t.Errorf("Get(%q) = %q, %v; want pdf", q, s.Name, ok)
		}
	}
	for _, q := range []string{"", "  ", "pd", "pdf-tools/sub", "../pdf"} {
		if s, ok := c.Get(q); ok {
			t.Errorf("Get(%q) = %q, want nothing", q, s.Name)
		}
	}
	if _, err := c.Load("nope"); !errors.Is(err, skills.ErrNotFound) {
		t.Errorf("Load(nope) err = %v, want ErrNotFound", err)
	}

	l, err := c.Load("pdf")
	if err != nil {
		t.Fatal(err)
	}
	want := skills.Loaded{
		Skill: skills.Skill{Name: "pdf", Description: "Work with PDFs.", Tags: []string{"docs"}, Version: "2", Dir: filepath.Join(dir, "pdf-tools"), Layer: "user"},
		Body:  "# PDF",
		Files: []string{"reference/forms.md", "scripts/fill.py", "sub/SKILL.md"},
	}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}

	// Load reads the file afresh.
	write(t, dir, map[string]string{"pdf-tools/SKILL.md": "---\nname: pdf\ndescription: Edited.\n---\nnew body\n"})
	if l, err := c.Load("pdf"); err != nil || l.Body != "new body" || l.Description != "Edited." {
		t.Errorf("Load after an edit = %q %q, %v", l.Description, l.Body, err)
	}
	write(t, dir, map[string]string{"pdf-tools/SKILL.md": "broken"})
	if _, err := c.Load("pdf"); !errors.Is(err, skills.ErrNoFrontMatter) {
		t.Errorf("Load of a broken file: err = %v, want ErrNoFrontMatter", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "pdf-tools")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load("pdf"); err == nil {
		t.Error("Load of a deleted skill: no error")
	}

	l, err = c.Load("many")
	if err != nil || len(l.Files) != skills.MaxFiles || !l.More {
		t.Errorf("Load(many): %d files, More %v, err %v; want %d and More", len(l.Files), l.More, err, skills.MaxFiles)
	}

	// List and Get hand out copies.
	list := c.List()
	list[0].Tags = append(list[0].Tags, "changed")
	if s, _ := c.Get(list[0].Name); slices.Contains(s.Tags, "changed") {
		t.Error("List shares its slices with the catalog")
	}
	var zero skills.Catalog
	if zero.Len() != 0 || len(zero.List()) != 0 {
		t.Error("the zero Catalog is not empty")
	}
}
