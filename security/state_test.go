package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// stateProbe reads and writes what Zero keeps for the user (the store with
// every workspace's sessions, its -wal and -shm, the state folder, the
// temporary folder's snapshots and leases) from the agent's shell, by
// absolute path and by ~, printing a marker for each thing it reached.
func stateProbe(b *box) string {
	data := filepath.Join(b.home, ".local", "share", "zero")
	return strings.Join([]string{
		"echo probe-start",
		"for f in " + data + "/zero.db " + data + "/zero.db-wal ~/.local/share/zero/zero.db; do head -c 15 $f 2>/dev/null | grep -q SQLite && echo STORE-READ:$f; done",
		"grep -l -a WORKSPACE-A-SECRET-TALK " + data + "/* 2>/dev/null && echo STORE-GREP",
		"ls " + data + " 2>/dev/null | grep -q zero.db && echo STORE-LISTED",
		"(echo x > " + data + "/agent-was-here) 2>/dev/null",
		"ls " + b.tmp + " 2>/dev/null | grep -q zero- && echo TMP-LISTED",
		"echo probe-end",
	}, "; ")
}

// checkState fails the test when the probe reached Zero's state.
func checkState(t *testing.T, b *box, out string) {
	t.Helper()
	printed := outputs(out)
	if !strings.Contains(printed, "probe-end") {
		t.Fatalf("the probe did not run:\n%s", out)
	}
	for _, leak := range []string{"STORE-READ", "STORE-GREP", "STORE-LISTED", "TMP-LISTED", "WORKSPACE-A-SECRET-TALK"} {
		if strings.Contains(printed, leak) {
			t.Errorf("the agent reached Zero's state (%s):\n%s", leak, printed)
		}
	}
	if exists(filepath.Join(b.home, ".local", "share", "zero", "agent-was-here")) {
		t.Error("the agent wrote into the store's folder")
	}
}

// TestStoreHiddenFromBwrap: workspace A's conversation is in the store;
// the agent of workspace B, whose workspace is the home folder that holds
// the store, cannot read, list or write it under bubblewrap.
func TestStoreHiddenFromBwrap(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	b := newBox(t, llmtest.Reply{Match: "WORKSPACE-A", Content: `{"tool_name": "response", "tool_args": {"text": "noted"}}`})
	if _, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--workspace", b.ws, "WORKSPACE-A-SECRET-TALK"); err != nil {
		t.Fatalf("zero run A: %v\n%s", err, stderr)
	}
	if !exists(filepath.Join(b.home, ".local", "share", "zero", "zero.db")) {
		t.Fatal("no store was made where the test looks")
	}
	b.model.Push(shell(stateProbe(b)), answer("done"))
	out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.home, "probe")
	if err != nil {
		t.Fatalf("zero run B: %v\n%s", err, stderr)
	}
	checkState(t, b, out)
}

// TestStoreHiddenFromDocker: the same from the container, with the home
// folder as the workspace (mounted whole).
func TestStoreHiddenFromDocker(t *testing.T) {
	t.Parallel()
	b := dockerBox(t, llmtest.Reply{Match: "WORKSPACE-A", Content: `{"tool_name": "response", "tool_args": {"text": "noted"}}`})
	t.Cleanup(func() { _, _, _ = b.run(nil, "sandbox", "rm", "--workspace", b.home) })
	if _, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--workspace", b.ws, "WORKSPACE-A-SECRET-TALK"); err != nil {
		t.Fatalf("zero run A: %v\n%s", err, stderr)
	}
	// The temporary folder in the workspace too, so that a container that
	// mounted it would show it.
	b.tmp = filepath.Join(b.home, "tmp")
	if err := os.MkdirAll(b.tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "TMPDIR="+b.tmp)
	b.model.Push(shell(stateProbe(b)), answer("done"))
	out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.home, "probe")
	if err != nil {
		t.Fatalf("zero run B: %v\n%s", err, stderr)
	}
	checkState(t, b, out)
}

// TestOtherWorkspacesSpillHidden: a long command output of workspace A is
// kept whole in A's .zero/output; the agent of workspace B, under
// bubblewrap (which shows the host read-only), cannot list or read it.
func TestOtherWorkspacesSpillHidden(t *testing.T) {
	t.Parallel()
	requireBwrap(t)
	b := newBox(t, shell("seq 1 40000 | sed 's/^/SPILLED-LINE-/'"), answer("done"))
	// Workspace A outside /tmp: bubblewrap's private /tmp would hide it
	// anyway, where a real project is in the home folder, seen read-only.
	dir, err := os.MkdirTemp("/var/tmp", "zero-spill-ws-")
	if err != nil {
		t.Fatal("no /var/tmp to put workspace A in:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b.ws = dir
	if _, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "long output"); err != nil {
		t.Fatalf("zero run A: %v\n%s", err, stderr)
	}
	out := filepath.Join(b.ws, ".zero", "output")
	if spilled, _ := filepath.Glob(filepath.Join(out, "*", "*.txt")); len(spilled) == 0 {
		t.Fatal("the output was not spilled into the workspace")
	}
	other := t.TempDir()
	b.model.Push(shell("echo probe-start; ls -R "+out+" 2>/dev/null | grep -q txt && echo SPILL-LISTED; cat "+out+"/*/* 2>/dev/null | grep -q SPILLED-LINE-39999 && echo SPILL-READ; echo probe-end"), answer("done"))
	events, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", other, "probe")
	if err != nil {
		t.Fatalf("zero run B: %v\n%s", err, stderr)
	}
	printed := outputs(events)
	if !strings.Contains(printed, "probe-end") {
		t.Fatalf("the probe did not run:\n%.3000s", events)
	}
	for _, leak := range []string{"SPILL-LISTED", "SPILL-READ"} {
		if strings.Contains(printed, leak) {
			t.Errorf("workspace B's agent reached A's spilled output (%s)", leak)
		}
	}
}
