package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPromptLinksOutAreNotRead plants, in a workspace's prompt folders and
// in a user's profile cloned from elsewhere, links to a host file (absolute,
// "..", /proc/self/environ, .zero itself pointing out): none of the target
// reaches a rendered prompt or the profile's spec, each link is named in a
// diagnostic, and the prompts fall back to the layers below.
func TestPromptLinksOutAreNotRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, user := filepath.Join(root, "ws"), filepath.Join(root, "user")
	secret := filepath.Join(root, "host", "credentials")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, "role: HOSTSECRET\ntitle: HOSTSECRET\n")
	link(secret, filepath.Join(ws, ".zero", "prompts", "agent.system.main.role.md"))
	link("../../../host/credentials", filepath.Join(ws, ".zero", "prompts", "agent.system.main.communication.md"))
	link("/proc/self/environ", filepath.Join(ws, ".zero", "prompts", "agent.system.main.solving.md"))
	link(secret, filepath.Join(ws, ".zero", "agents", "agent0", "agent.yaml"))
	link(filepath.Dir(secret), filepath.Join(ws, ".zero", "agents", "agent0", "prompts"))
	// A profile the user cloned from someone's repository, linked into
	// the agents folder: the folder link is the user's, the links inside
	// are the repository's.
	write(filepath.Join(root, "clone", "agent.yaml"), "title: Cloned\n")
	link(secret, filepath.Join(root, "clone", "prompts", "agent.system.main.tips.md"))
	link(filepath.Join(root, "clone"), filepath.Join(user, "agents", "cloned"))

	l := NewLoader(ws, user)
	for _, name := range []string{"agent0", "cloned"} {
		p, err := l.Load(name)
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		var diags strings.Builder
		for _, d := range p.Diagnostics {
			diags.WriteString(d.String() + "\n")
		}
		for _, f := range []string{"agent.system.main.md", "agent.system.main.role.md", "agent.system.main.tips.md"} {
			text, err := p.Prompts.Render(f, nil)
			if err != nil {
				t.Fatalf("%s: render %s: %v", name, f, err)
			}
			if strings.Contains(text, "HOSTSECRET") || strings.Contains(text, "PATH=") {
				t.Errorf("%s: %s holds the host file:\n%s", name, f, text)
			}
		}
		if strings.Contains(p.Spec.Title, "HOSTSECRET") || strings.Contains(diags.String(), "HOSTSECRET") {
			t.Errorf("%s: the host file reached the spec or a diagnostic: %q\n%s", name, p.Spec.Title, diags.String())
		}
		if name == "agent0" && !strings.Contains(diags.String(), "agent.system.main.role.md") {
			t.Errorf("no diagnostic names the link:\n%s", diags.String())
		}
		if name == "cloned" && p.Spec.Title != "Cloned" {
			t.Errorf("the linked-in profile's own agent.yaml was not read: %q", p.Spec.Title)
		}
	}
}

// TestWorkspaceZeroFolderLinkedOut: .zero itself a link out of the
// workspace is not followed.
func TestWorkspaceZeroFolderLinkedOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(filepath.Join(root, "elsewhere", "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "elsewhere", "prompts", "agent.system.main.role.md"), []byte("HOSTSECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(ws, ".zero")); err != nil {
		t.Fatal(err)
	}
	p, err := NewLoader(ws, "").Load("agent0")
	if err != nil {
		t.Fatal(err)
	}
	text, err := p.Prompts.Render("agent.system.main.role.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "HOSTSECRET") {
		t.Fatalf("followed .zero out of the workspace:\n%s", text)
	}
}
