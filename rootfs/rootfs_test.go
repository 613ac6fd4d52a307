package rootfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/rootfs"
)

// plant makes base/.zero/prompts with a file, and links of every kind out
// of it: absolute, "..", /proc/self/environ, a link to a folder outside,
// a chain of two links, and a link inside that stays inside.
func plant(t *testing.T) (base, secret string) {
	t.Helper()
	base = t.TempDir()
	outside := t.TempDir()
	secret = filepath.Join(outside, "credentials")
	must(t, os.WriteFile(secret, []byte("aws_secret_access_key=HOSTSECRET"), 0o600))
	dir := filepath.Join(base, ".zero", "prompts")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ok.md"), []byte("fine"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "README.md"), []byte("in the workspace, outside the folder"), 0o644))
	for name, target := range map[string]string{
		"abs.md":     secret,
		"up.md":      "../../../" + strings.TrimPrefix(secret, "/"),
		"ws.md":      "../../README.md",
		"environ.md": "/proc/self/environ",
		"chain.md":   "abs.md",
		"inside.md":  "ok.md",
	} {
		must(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	must(t, os.Symlink(outside, filepath.Join(dir, "dir")))
	return base, secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLinksOutAreNotRead(t *testing.T) {
	base, _ := plant(t)
	fsys := rootfs.FS(base, ".zero/prompts")
	for _, name := range []string{"abs.md", "up.md", "ws.md", "environ.md", "chain.md", "dir/credentials"} {
		data, err := fs.ReadFile(fsys, name)
		if err == nil || len(data) > 0 {
			t.Errorf("%s: read %q", name, data)
			continue
		}
		if !errors.Is(err, rootfs.ErrEscapes) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want ErrEscapes (and ErrNotExist)", name, err)
		}
		if !rootfs.Escapes(base, ".zero/prompts", name) {
			t.Errorf("Escapes(%s) = false", name)
		}
		if _, err := rootfs.ReadFile(base, ".zero/prompts", name, 1<<20); !errors.Is(err, rootfs.ErrEscapes) {
			t.Errorf("ReadFile(%s): %v, want ErrEscapes", name, err)
		}
	}
	for _, name := range []string{"ok.md", "inside.md"} {
		if data, err := fs.ReadFile(fsys, name); err != nil || string(data) != "fine" {
			t.Errorf("%s: %q, %v", name, data, err)
		}
		if rootfs.Escapes(base, ".zero/prompts", name) {
			t.Errorf("Escapes(%s) = true", name)
		}
	}
	if _, err := fs.ReadFile(fsys, "missing.md"); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, rootfs.ErrEscapes) {
		t.Errorf("missing: %v", err)
	}
}

// TestFolderLinkedOut: the folder itself (.zero, or .zero/prompts) a link
// out of the base reads as missing.
func TestFolderLinkedOut(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(outside, "prompts"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "prompts", "x.md"), []byte("HOSTSECRET"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(base, ".zero")))
	if data, err := fs.ReadFile(rootfs.FS(base, ".zero/prompts"), "x.md"); !errors.Is(err, rootfs.ErrEscapes) {
		t.Fatalf("read %q, %v; want ErrEscapes", data, err)
	}
	if _, err := fs.ReadDir(rootfs.FS(base, ".zero/prompts"), "."); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadDir: %v", err)
	}
}

func TestPerEntry(t *testing.T) {
	agents := t.TempDir()
	elsewhere := t.TempDir() // a profile kept in a dotfiles folder, linked in by its owner
	must(t, os.MkdirAll(filepath.Join(elsewhere, "prompts"), 0o755))
	must(t, os.WriteFile(filepath.Join(elsewhere, "agent.yaml"), []byte("title: x"), 0o644))
	must(t, os.WriteFile(filepath.Join(elsewhere, "prompts", "a.md"), []byte("linked profile"), 0o644))
	secret := filepath.Join(t.TempDir(), "credentials")
	must(t, os.WriteFile(secret, []byte("HOSTSECRET"), 0o600))
	must(t, os.Symlink(secret, filepath.Join(elsewhere, "prompts", "leak.md")))
	must(t, os.Symlink(elsewhere, filepath.Join(agents, "mine")))
	fsys := rootfs.PerEntry(agents)
	if data, err := fs.ReadFile(fsys, "mine/prompts/a.md"); err != nil || string(data) != "linked profile" {
		t.Fatalf("linked profile: %q, %v", data, err)
	}
	if data, err := fs.ReadFile(fsys, "mine/prompts/leak.md"); !errors.Is(err, rootfs.ErrEscapes) {
		t.Fatalf("leak: %q, %v", data, err)
	}
}

func TestReadFileLimit(t *testing.T) {
	base := t.TempDir()
	must(t, os.WriteFile(filepath.Join(base, "big"), make([]byte, 100), 0o644))
	if _, err := rootfs.ReadFile(base, "", "big", 99); !errors.Is(err, rootfs.ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if b, err := rootfs.ReadFile(base, "", "big", 100); err != nil || len(b) != 100 {
		t.Fatalf("at the limit: %d, %v", len(b), err)
	}
}
