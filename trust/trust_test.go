package trust_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/trust"
)

func write(t testing.TB, root, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func scan(t *testing.T, ws string) *trust.Manifest {
	t.Helper()
	m, err := trust.Scan(ws)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// workspace is a repository with code in every acting folder and prompt
// text that does not act.
func workspace(t *testing.T) string {
	ws := t.TempDir()
	write(t, ws, ".zero/extensions/agent_init/_10_x", "#!/bin/sh\necho hi\n", 0o755)
	write(t, ws, ".zero/extensions/agent_init/lib/helper.sh", "echo helper\n", 0o644)
	write(t, ws, ".zero/extensions/tool_execute_before/_05_approval.disabled", "", 0o644)
	write(t, ws, ".zero/agents/dev/extensions/monologue_start/_50_y.py", "print(1)\n", 0o755)
	write(t, ws, ".zero/agents/dev/prompts/agent.system.main.md", "text", 0o644)
	write(t, ws, ".zero/agents/dev/agent.yaml", "title: Dev\n", 0o644)
	write(t, ws, ".zero/tools/mytool", "#!/bin/sh\n", 0o755)
	write(t, ws, ".zero/config.yaml", "profile: dev\n", 0o644)
	write(t, ws, ".zero/prompts/agent.system.main.md", "text", 0o644)
	return ws
}

func TestScanFindsWhatActs(t *testing.T) {
	t.Parallel()
	m := scan(t, workspace(t))
	type row struct{ Path, Kind, Point string }
	var got []row
	for _, f := range m.Files {
		got = append(got, row{f.Path, f.Kind, f.Point})
	}
	want := []row{
		{".zero/agents/dev/extensions/monologue_start/_50_y.py", trust.KindExtension, "monologue_start"},
		{".zero/extensions/agent_init/_10_x", trust.KindExtension, "agent_init"},
		{".zero/extensions/agent_init/lib/helper.sh", trust.KindFile, "agent_init"},
		{".zero/extensions/tool_execute_before/_05_approval.disabled", trust.KindDisabled, "tool_execute_before"},
		{".zero/tools/mytool", trust.KindTool, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(m.Digest, "sha256:") {
		t.Errorf("digest %q", m.Digest)
	}
}

// Every change to what acts changes the digest; prompt text does not.
func TestDigestFollowsContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, ws string)
		changes bool
	}{
		{"script content", func(t *testing.T, ws string) {
			write(t, ws, ".zero/extensions/agent_init/_10_x", "#!/bin/sh\ncat /proc/1/environ\n", 0o755)
		}, true},
		{"helper file", func(t *testing.T, ws string) {
			write(t, ws, ".zero/extensions/agent_init/lib/helper.sh", "curl evil\n", 0o644)
		}, true},
		{"executable bit", func(t *testing.T, ws string) {
			os.Chmod(filepath.Join(ws, ".zero/extensions/agent_init/lib/helper.sh"), 0o755)
		}, true},
		{"new script", func(t *testing.T, ws string) {
			write(t, ws, ".zero/extensions/monologue_start/_50_x", "#!/bin/sh\nid\n", 0o755)
		}, true},
		{"new profile extension", func(t *testing.T, ws string) {
			write(t, ws, ".zero/agents/other/extensions/monologue_start/_50_x", "#!/bin/sh\nid\n", 0o755)
		}, true},
		{"new .disabled", func(t *testing.T, ws string) {
			write(t, ws, ".zero/extensions/system_prompt/_10_main_prompt.disabled", "", 0o644)
		}, true},
		{"removed script", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, ".zero/extensions/agent_init/_10_x"))
		}, true},
		{"prompt text", func(t *testing.T, ws string) {
			write(t, ws, ".zero/agents/dev/prompts/agent.system.main.md", "other text", 0o644)
			write(t, ws, ".zero/prompts/x.md", "x", 0o644)
		}, false},
		{"config", func(t *testing.T, ws string) {
			write(t, ws, ".zero/config.yaml", "profile: agent0\n", 0o644)
		}, false},
		{"source code", func(t *testing.T, ws string) {
			write(t, ws, "main.go", "package main\n", 0o644)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := workspace(t)
			before := scan(t, ws).Digest
			tc.change(t, ws)
			after := scan(t, ws).Digest
			if (before != after) != tc.changes {
				t.Errorf("digest changed = %v, want %v", before != after, tc.changes)
			}
		})
	}
}

// A symbolic link that stays in the workspace is judged by what it points
// at: changing its target changes the digest. One that leads out of the
// workspace is recorded by what it says and never read or copied: what is
// outside the workspace is not the workspace's to trust, and repointing
// the link changes the digest.
func TestSymlinks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "evil.sh", "#!/bin/sh\nid\n", 0o755)
	write(t, outside, "point/_10_z", "#!/bin/sh\nid\n", 0o755)
	write(t, ws, "scripts/init.sh", "#!/bin/sh\necho in the workspace\n", 0o755)
	os.MkdirAll(filepath.Join(ws, ".zero/extensions/agent_init"), 0o755)
	for link, target := range map[string]string{
		".zero/extensions/agent_init/_10_x":   filepath.Join(outside, "evil.sh"),
		".zero/extensions/agent_init/_20_up":  "../../../../" + strings.TrimPrefix(filepath.Join(outside, "evil.sh"), "/"),
		".zero/extensions/agent_init/_30_in":  "../../../scripts/init.sh",
		".zero/extensions/monologue_start":    filepath.Join(outside, "point"),
		".zero/extensions/agent_init/environ": "/proc/self/environ",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	m := scan(t, ws)
	byPath := map[string]trust.File{}
	for _, f := range m.Files {
		byPath[f.Path] = f
	}
	if len(m.Files) != 5 {
		t.Fatalf("files = %+v", m.Files)
	}
	if f := byPath[".zero/extensions/agent_init/_30_in"]; f.Kind != trust.KindExtension {
		t.Errorf("the link inside the workspace is not an extension: %+v", f)
	}
	for _, p := range []string{".zero/extensions/agent_init/_10_x", ".zero/extensions/agent_init/_20_up", ".zero/extensions/monologue_start"} {
		if f := byPath[p]; f.Link == "" || f.Kind == trust.KindExtension {
			t.Errorf("%s: a link out is recorded as a link, not run: %+v", p, f)
		}
	}
	dir, err := trust.Snapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "id\n") || strings.Contains(string(data), "PATH=") {
				t.Errorf("the snapshot holds a file from outside the workspace: %s", p)
			}
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, ".zero/extensions/agent_init/_30_in")); err != nil {
		t.Errorf("the link inside the workspace was not copied: %v", err)
	}

	write(t, outside, "point/_10_z", "#!/bin/sh\nrm -rf ~\n", 0o755)
	if scan(t, ws).Digest != m.Digest {
		t.Error("a file outside the workspace was read")
	}
	write(t, ws, "scripts/init.sh", "#!/bin/sh\nrm -rf ~\n", 0o755)
	if scan(t, ws).Digest == m.Digest {
		t.Error("changing the target of a link inside the workspace must change the digest")
	}
	os.Remove(filepath.Join(ws, ".zero/extensions/agent_init/_10_x"))
	os.Symlink(filepath.Join(outside, "point/_10_z"), filepath.Join(ws, ".zero/extensions/agent_init/_10_x"))
	if scan(t, ws).Digest == m.Digest {
		t.Error("repointing a link out must change the digest")
	}
}

// A link into /proc (say, to zero's own environment) is never read, so its
// content cannot reach the snapshot a trusted script could read.
func TestLinksToKernelFilesAreNotRead(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".zero/extensions/agent_init"), 0o755)
	if err := os.Symlink("/proc/self/environ", filepath.Join(ws, ".zero/extensions/agent_init/data")); err != nil {
		t.Fatal(err)
	}
	m := scan(t, ws)
	dir, err := trust.Snapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if len(m.Files) != 1 || m.Files[0].Link != "/proc/self/environ" {
		t.Fatalf("files = %+v", m.Files)
	}
	if _, err := os.Stat(filepath.Join(dir, ".zero/extensions/agent_init/data")); err == nil {
		t.Error("the kernel file was copied into the snapshot")
	}
}

func TestScanRefusesHugeFolders(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	big := strings.Repeat("x", 1<<20)
	for i := range trust.MaxBytes>>20 + 1 {
		write(t, ws, ".zero/extensions/agent_init/f"+strings.Repeat("a", i+1), big, 0o644)
	}
	if _, err := trust.Scan(ws); !errors.Is(err, trust.ErrTooLarge) {
		t.Fatalf("Scan error = %v, want ErrTooLarge", err)
	}
}

// The snapshot holds the bytes that were hashed, whatever happens to the
// workspace afterwards.
func TestSnapshotIsWhatWasHashed(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	m := scan(t, ws)
	write(t, ws, ".zero/extensions/agent_init/_10_x", "#!/bin/sh\necho swapped\n", 0o755)
	dir, err := trust.Snapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(filepath.Join(dir, ".zero/extensions/agent_init/_10_x"))
	if err != nil || string(data) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("snapshot has %q, %v", data, err)
	}
	fi, err := os.Stat(filepath.Join(dir, ".zero/extensions/agent_init/_10_x"))
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("the script lost its executable bit: %v %v", fi.Mode(), err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("snapshot folder mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, ".zero/extensions/tool_execute_before/_05_approval.disabled")); err != nil {
		t.Errorf(".disabled files belong in the snapshot: %v", err)
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	ws := workspace(t)
	store := trust.NewStore(t.TempDir())
	m := scan(t, ws)

	st, err := store.Check(m)
	if err != nil || st.Status != trust.StatusUntrusted || st.Runs() {
		t.Fatalf("new workspace: %+v, %v", st.Status, err)
	}
	if msg := st.Message(); !strings.Contains(msg, "5 files") || !strings.Contains(msg, "zero trust --workspace "+ws) {
		t.Errorf("message %q", msg)
	}
	if err := store.Grant(m); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(store.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store file mode: %v %v", fi, err)
	}
	if st, _ := store.Check(scan(t, ws)); st.Status != trust.StatusTrusted || !st.Runs() || st.Message() != "" {
		t.Fatalf("after Grant: %+v", st)
	}

	write(t, ws, ".zero/extensions/agent_init/_10_x", "#!/bin/sh\nenv\n", 0o755)
	write(t, ws, ".zero/extensions/monologue_start/_50_new", "#!/bin/sh\nid\n", 0o755)
	os.Remove(filepath.Join(ws, ".zero/tools/mytool"))
	st, _ = store.Check(scan(t, ws))
	granted := map[string]string{}
	for _, f := range m.Files {
		granted[f.Path] = f.Digest
	}
	want := []trust.Change{
		{Path: ".zero/extensions/agent_init/_10_x", What: "changed", Was: granted[".zero/extensions/agent_init/_10_x"]},
		{Path: ".zero/extensions/monologue_start/_50_new", What: "added"},
		{Path: ".zero/tools/mytool", What: "removed", Was: granted[".zero/tools/mytool"]},
	}
	for _, c := range want {
		if c.What != "added" && c.Was == "" {
			t.Fatalf("the test's workspace has no %s", c.Path)
		}
	}
	if st.Status != trust.StatusChanged || st.Runs() {
		t.Fatalf("after a change: %v", st.Status)
	}
	if diff := cmp.Diff(want, st.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if msg := st.Message(); !strings.Contains(msg, ".zero/extensions/agent_init/_10_x (changed)") {
		t.Errorf("the message must name the changed file: %q", msg)
	}

	if ok, err := store.Revoke(ws); !ok || err != nil {
		t.Fatalf("Revoke = %v, %v", ok, err)
	}
	if st, _ := store.Check(scan(t, ws)); st.Status != trust.StatusUntrusted {
		t.Errorf("after Revoke: %v", st.Status)
	}
	if st, _ := store.Check(scan(t, t.TempDir())); st.Status != trust.StatusNone || !strings.Contains(string(st.Status), "none") {
		t.Errorf("empty workspace: %v", st.Status)
	}
}

// Trust is per workspace: trusting one copy of a repository does not trust
// another checkout of it.
func TestTrustIsPerWorkspace(t *testing.T) {
	t.Parallel()
	store := trust.NewStore(t.TempDir())
	a, b := workspace(t), workspace(t)
	if err := store.Grant(scan(t, a)); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.Check(scan(t, b)); st.Runs() {
		t.Error("trusting one workspace trusted another")
	}
}

func TestDamagedStoreTrustsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := trust.NewStore(dir)
	os.WriteFile(store.Path(), []byte("{not json"), 0o600)
	st, err := store.Check(scan(t, workspace(t)))
	if err == nil || st.Runs() {
		t.Fatalf("a damaged store: %v, %v", st.Status, err)
	}
}

// A file name that could rewrite the terminal or reorder the text (escape
// sequences, bidirectional overrides) cannot be shown for review: the
// workspace's code stays off.
func TestUnprintableNamesAreRefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"_10_x\x1b[2K\rsafe", "_10_\u202eexe.txt", "_10_x\ny"} {
		ws := t.TempDir()
		write(t, ws, ".zero/extensions/agent_init/"+name, "#!/bin/sh\n", 0o755)
		if _, err := trust.Scan(ws); !errors.Is(err, trust.ErrUnprintable) {
			t.Errorf("%q: Scan error = %v, want ErrUnprintable", name, err)
		}
	}
}

// A link to a folder of the kernel's files is recorded by name and never
// walked or read.
func TestLinkToKernelFolderIsNotWalked(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".zero/extensions/agent_init"), 0o755)
	if err := os.Symlink("/proc/self", filepath.Join(ws, ".zero/extensions/agent_init/self")); err != nil {
		t.Fatal(err)
	}
	m := scan(t, ws)
	if len(m.Files) != 1 || m.Files[0].Link != "/proc/self" {
		t.Fatalf("files = %+v", m.Files)
	}
}
