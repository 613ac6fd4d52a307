package security

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceCannotRaiseContainerLimits: a repository's .zero/config.yaml
// asks for 1000g of memory and a million processes where the user set no
// limit; the container gets the limits that apply without it (the
// sandbox's defaults), and the warning says so.
func TestWorkspaceCannotRaiseContainerLimits(t *testing.T) {
	t.Parallel()
	b := dockerBox(t, shell("echo probe-end"), answer("done"))
	write(t, filepath.Join(b.ws, ".zero", "config.yaml"), "sandbox:\n  memory: 1000g\n  pids: 1000000\n", 0o644)
	out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.ws, "probe")
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, stderr)
	}
	if !strings.Contains(outputs(out), "probe-end") {
		t.Fatalf("the probe did not run:\n%s", out)
	}
	for _, key := range []string{"sandbox.memory", "sandbox.pids"} {
		if !strings.Contains(out+stderr, key) {
			t.Errorf("no warning names %s:\n%s", key, out)
		}
	}
	ids, err := exec.Command("docker", "ps", "-aq", "--filter", "label=zero.workspace="+b.ws).Output()
	if err != nil || len(strings.Fields(string(ids))) != 1 {
		t.Fatalf("the workspace's container: %q, %v", ids, err)
	}
	got, err := exec.Command("docker", "inspect", "-f", "{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}", strings.TrimSpace(string(ids))).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "4294967296 4096"; strings.TrimSpace(string(got)) != want {
		t.Errorf("the container's memory and process limits are %s, want the defaults %s", got, want)
	}
}
