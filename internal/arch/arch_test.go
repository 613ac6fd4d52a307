package arch

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/zeroagent/zero/"

// root is the repository: two folders above this one.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// arrows reads the arrows block of ARCHITECTURE.md: "a, b -> c, d" lines,
// "(nothing of ours)" for none, and "everything above".
func arrows(t *testing.T, dir string) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(dir, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## The arrows.*?```\n(.*?)```").FindSubmatch(doc)
	if block == nil {
		t.Fatal("ARCHITECTURE.md has no arrows block under \"## The arrows\"")
	}
	allowed := map[string][]string{}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		from, to, ok := strings.Cut(line, "->")
		if !ok {
			from, to = line, ""
			if i := strings.Index(from, "("); i >= 0 {
				from = from[:i]
			}
		}
		var targets []string
		if strings.TrimSpace(to) == "everything above" {
			targets = slices.Clone(seen)
		} else {
			for _, p := range strings.Split(to, ",") {
				if p = strings.TrimSpace(p); p != "" {
					targets = append(targets, p)
				}
			}
		}
		for _, p := range strings.Split(from, ",") {
			p = strings.TrimSpace(p)
			allowed[p] = targets
			seen = append(seen, p)
		}
	}
	return allowed
}

// TestArrows fails when a package imports one of ours that its arrow in
// ARCHITECTURE.md does not name, or when a package has no arrow at all.
func TestArrows(t *testing.T) {
	dir := root(t)
	allowed := arrows(t, dir)
	if len(allowed) < 10 {
		t.Fatalf("read %d arrows from ARCHITECTURE.md; the block did not parse", len(allowed))
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != dir && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "bin" || name == "dist") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here, or only tests
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/") || rel == "e2e" || rel == "security" || rel == "cmd/fakellm" || pkg.Name == "main" && rel != "cmd/zero" {
			return nil // test support and test-only packages: not rooms of the house
		}
		want, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s has no arrow in ARCHITECTURE.md: add it to the rooms and the arrows", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			ours, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if !slices.Contains(want, ours) {
				t.Errorf("%s imports %s, which ARCHITECTURE.md's arrows do not allow (%s -> %s)", rel, ours, rel, strings.Join(want, ", "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestArrowsCatchABreak checks the check: an arrow block without loop's
// arrow to hooks reports loop's import of hooks.
func TestArrowsCatchABreak(t *testing.T) {
	dir := root(t)
	allowed := arrows(t, dir)
	if !slices.Contains(allowed["loop"], "hooks") {
		t.Fatal("ARCHITECTURE.md's arrows lost loop -> hooks")
	}
	pkg, err := build.ImportDir(filepath.Join(dir, "loop"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkg.Imports, module+"hooks") {
		t.Fatal("loop no longer imports hooks: pick another arrow for this check")
	}
	if !slices.Contains(allowed["cmd/zero"], "server/acp") || slices.Contains(allowed["loop"], "server") {
		t.Fatalf("\"everything above\" or a plain arrow parsed wrongly: cmd/zero -> %v, loop -> %v", allowed["cmd/zero"], allowed["loop"])
	}
}

// TestReadmeLinksStayInside fails when README.md or ARCHITECTURE.md links
// anything outside the repository (a web page, ../shared/…) or a file of it
// that does not exist.
func TestReadmeLinksStayInside(t *testing.T) {
	dir := root(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, name := range []string{"README.md", "ARCHITECTURE.md"} {
		doc, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(doc), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" {
				continue // a heading of the same file
			}
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s links %s, outside the repository", name, m[1])
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(target))
			if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s links %s, outside the repository", name, m[1])
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links %s, which is not in the repository: %v", name, m[1], err)
			}
		}
	}
}
