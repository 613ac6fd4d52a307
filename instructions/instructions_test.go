package instructions

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func labels(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Label)
	}
	return out
}

// TestOrder: the user's file comes first; a workspace's AGENTS.md wins over
// CLAUDE.md, which wins over GEMINI.md; a second folder's file is named by
// its path.
func TestOrder(t *testing.T) {
	t.Parallel()
	user, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "AGENTS.md"), "Answer in British English.")
	write(t, filepath.Join(ws, "CLAUDE.md"), "Use make, not go build.")
	write(t, filepath.Join(ws, "GEMINI.md"), "Gemini's.")
	write(t, filepath.Join(other, "GEMINI.md"), "The other folder's.")
	s := New(user, ws, other)
	files := s.Files()
	got := strings.Join(labels(files), "|")
	want := filepath.Join(user, "AGENTS.md") + " (yours)|CLAUDE.md|" + filepath.Join(other, "GEMINI.md")
	if got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	if files[1].Text != "Use make, not go build." {
		t.Errorf("CLAUDE.md read as %q", files[1].Text)
	}
	write(t, filepath.Join(ws, "AGENTS.md"), "Run make check first.")
	if files := s.Files(); files[1].Label != "AGENTS.md" || files[1].Text != "Run make check first." {
		t.Errorf("AGENTS.md does not win over CLAUDE.md: %+v", files[1])
	}
	if text := Text(s.Files(), nil); strings.Contains(text, "Use make, not go build.") || strings.Contains(text, "Gemini's.") {
		t.Errorf("a file behind AGENTS.md reached the prompt:\n%s", text)
	}
}

// TestReadAgainWhenChanged: an edit shows in the next prompt; an unchanged
// file is not read again.
func TestReadAgainWhenChanged(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	p := filepath.Join(ws, "AGENTS.md")
	write(t, p, "one")
	s := New("", ws)
	if f := s.Files(); len(f) != 1 || f[0].Text != "one" {
		t.Fatalf("first read: %+v", f)
	}
	write(t, p, "two, longer")
	if f := s.Files(); f[0].Text != "two, longer" {
		t.Fatalf("the edit was not read: %+v", f)
	}
	// Same size and time: the cached copy is what the prompt shows.
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, p, "TWO, LONGER")
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if f := s.Files(); f[0].Text != "two, longer" {
		t.Errorf("an unchanged file was read again: %+v", f)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if f := s.Files(); len(f) != 0 {
		t.Errorf("a removed file is still there: %+v", f)
	}
}

// TestLinkOutIsNotRead: an AGENTS.md that a cloned repository made a link
// to a file outside the workspace is named, not read.
func TestLinkOutIsNotRead(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "credentials")
	write(t, secret, "aws_secret_access_key = SECRET-FROM-OUTSIDE")
	if err := os.Symlink(secret, filepath.Join(ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "CLAUDE.md"), "claude's")
	if err := os.Symlink("../../../../../../../../etc/passwd", filepath.Join(ws, "GEMINI.md")); err != nil {
		t.Fatal(err)
	}
	files := New("", ws).Files()
	if len(files) != 1 || files[0].Label != "AGENTS.md" || !strings.Contains(files[0].Problem, "leads out") {
		t.Fatalf("files %+v, want AGENTS.md named as a link out", files)
	}
	text := Text(files, nil)
	if strings.Contains(text, "SECRET-FROM-OUTSIDE") || strings.Contains(text, "claude's") {
		t.Errorf("the prompt has what it must not:\n%s", text)
	}
	if !strings.Contains(text, "not read: it is a link that leads out of the workspace") {
		t.Errorf("the prompt does not say why AGENTS.md was not read:\n%s", text)
	}
	// A link inside the workspace is followed.
	ws2 := t.TempDir()
	write(t, filepath.Join(ws2, "docs", "agents.md"), "inside")
	if err := os.Symlink("docs/agents.md", filepath.Join(ws2, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if f := New("", ws2).Files(); len(f) != 1 || f[0].Text != "inside" {
		t.Errorf("a link inside the workspace was not followed: %+v", f)
	}
}

// TestHugeFileIsCut: a 20 MB AGENTS.md costs 32 KiB of prompt, and the
// prompt says it was cut; several files together stay within MaxTotal.
func TestHugeFileIsCut(t *testing.T) {
	t.Parallel()
	user, ws := t.TempDir(), t.TempDir()
	big := strings.Repeat("é", 10<<20) // two bytes each: the cut falls inside one
	write(t, filepath.Join(ws, "AGENTS.md"), big)
	write(t, filepath.Join(user, "AGENTS.md"), strings.Repeat("u", 40<<10))
	write(t, filepath.Join(ws, ".a0proj", "instructions", "a.md"), strings.Repeat("a", 30<<10))
	files := New(user, ws).Files()
	if len(files) != 3 {
		t.Fatalf("files %v", labels(files))
	}
	total := 0
	for _, f := range files {
		total += len(f.Text)
		if len(f.Text) > MaxFile {
			t.Errorf("%s: %d bytes", f.Label, len(f.Text))
		}
	}
	if total > MaxTotal {
		t.Errorf("%d bytes together, more than %d", total, MaxTotal)
	}
	ws0 := files[1]
	if !ws0.Cut || ws0.Size != int64(len(big)) || strings.ContainsRune(ws0.Text, '\uFFFD') {
		t.Errorf("the huge file: cut %v, size %d, %d bytes of text (a broken character: %v)", ws0.Cut, ws0.Size, len(ws0.Text), strings.ContainsRune(ws0.Text, '\uFFFD'))
	}
	if text := Text(files, nil); !strings.Contains(text, "[cut: the file has 20971520 bytes") {
		t.Errorf("the prompt does not say the file was cut")
	}
	if !files[2].Cut {
		t.Errorf("the last file was not cut to the total: %d bytes", len(files[2].Text))
	}
}

// TestFIFOIsNotWaitedOn: an AGENTS.md that is a named pipe (a read that
// never ends) is refused at once.
func TestFIFOIsNotWaitedOn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system on Windows")
	}
	t.Parallel()
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := New("", ws).Files() // would block forever if it waited for a writer
	if len(files) != 1 || files[0].Problem != "it is not a regular file" {
		t.Fatalf("files %+v", files)
	}
}

// TestAgentZeroProject: an Agent Zero project's instructions (project.json's
// and the instructions folder's, in name order) and its title reach the
// prompt.
func TestAgentZeroProject(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".a0proj", "project.json"), `{"title": "Shop", "description": "The web shop.", "instructions": "Prices are in cents."}`)
	write(t, filepath.Join(ws, ".a0proj", "instructions", "b.md"), "second")
	write(t, filepath.Join(ws, ".a0proj", "instructions", "a.md"), "first")
	s := New("", ws)
	got := strings.Join(labels(s.Files()), "|")
	if want := ".a0proj/project.json|.a0proj/instructions/a.md|.a0proj/instructions/b.md"; got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	if p := s.Project(); p.Title != "Shop" || p.Description != "The web shop." {
		t.Errorf("project %+v", p)
	}
	out, err := s.Render(func(name string, vars map[string]any) (string, error) {
		return name + "|" + vars["project_name"].(string) + "|" + vars["project_description"].(string) + "|" + vars["project_instructions"].(string), nil
	})
	if err != nil || !strings.HasPrefix(out, Prompt+"|Shop|The web shop.|### .a0proj/project.json\nPrices are in cents.") {
		t.Errorf("rendered %q, %v", out, err)
	}
}

// TestNoInstructionsNoPrompt: a workspace without any adds nothing.
func TestNoInstructionsNoPrompt(t *testing.T) {
	t.Parallel()
	out, err := New(t.TempDir(), t.TempDir()).Render(func(string, map[string]any) (string, error) { return "rendered", nil })
	if out != "" || err != nil {
		t.Errorf("rendered %q, %v for a workspace without instructions", out, err)
	}
}

// TestNested: the subfolders' AGENTS.md (else CLAUDE.md) are named;
// hidden, vendored and linked folders are not looked in; a later look
// finds a new one.
func TestNested(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "AGENTS.md"), "root")
	write(t, filepath.Join(ws, "api", "AGENTS.md"), "api")
	write(t, filepath.Join(ws, "web", "app", "CLAUDE.md"), "web")
	write(t, filepath.Join(ws, "node_modules", "left-pad", "AGENTS.md"), "no")
	write(t, filepath.Join(ws, ".git", "AGENTS.md"), "no")
	write(t, filepath.Join(outside, "AGENTS.md"), "no")
	if err := os.Symlink(outside, filepath.Join(ws, "linked")); err != nil {
		t.Fatal(err)
	}
	s := New("", ws)
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	if got := strings.Join(s.Nested(), " "); got != "api/AGENTS.md web/app/CLAUDE.md" {
		t.Fatalf("nested %q", got)
	}
	text := Text(s.Files(), s.Nested())
	if !strings.Contains(text, "- api/AGENTS.md\n") || !strings.Contains(text, "take precedence there") {
		t.Errorf("the prompt does not name the nested files:\n%s", text)
	}
	write(t, filepath.Join(ws, "db", "AGENTS.md"), "db")
	if got := strings.Join(s.Nested(), " "); got != "api/AGENTS.md web/app/CLAUDE.md" {
		t.Errorf("a fresh look was taken again: %q", got)
	}
	now = now.Add(stale + time.Second)
	s.Nested() // starts a look, returns the last one
	s.waitLook()
	if got := strings.Join(s.Nested(), " "); got != "api/AGENTS.md db/AGENTS.md web/app/CLAUDE.md" {
		t.Errorf("the look after 30 s found %q", got)
	}
}

// waitLook waits until no look is running.
func (s *Set) waitLook() {
	for {
		s.mu.Lock()
		running := s.nest.running
		s.mu.Unlock()
		if !running {
			return
		}
		runtime.Gosched()
	}
}
