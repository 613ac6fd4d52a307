package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The copy of a workspace's code that zero trust keeps for the next
// review's diff (in the user's config folder) is out of the agent's reach:
// an agent that could rewrite it would choose what the next review calls
// unchanged. The agent's workspace is the home folder that holds it, under
// bubblewrap and in the container.
func TestTrustedCopyHidden(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"local", "docker"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			b := boxIn(t, backend)
			if backend == "docker" {
				t.Cleanup(func() { _, _, _ = b.run(nil, "sandbox", "rm", "--workspace", b.home) })
			}
			write(t, filepath.Join(b.ws, ".zero/extensions/monologue_start/_50_x"), "#!/bin/sh\necho TRUSTED-COPY-MARKER\n", 0o755)
			if out, stderr, err := b.run(nil, "trust", "--yes", "--workspace", b.ws); err != nil {
				t.Fatalf("zero trust --yes: %v\n%s%s", err, out, stderr)
			}
			copies, _ := filepath.Glob(filepath.Join(b.home, ".config", "zero", "trusted", "*", "files", ".zero", "extensions", "monologue_start", "_50_x"))
			if len(copies) != 1 {
				t.Fatalf("no trusted copy where the test looks: %v", copies)
			}
			dir := filepath.Join(b.home, ".config", "zero", "trusted")
			probe := strings.Join([]string{
				"echo probe-start",
				"for d in " + dir + " ~/.config/zero/trusted; do grep -r -l TRUSTED-COPY-MARKER $d 2>/dev/null && echo COPY-READ; done",
				"ls " + dir + " 2>/dev/null | grep -q . && echo COPY-LISTED",
				"(echo x > " + copies[0] + ") 2>/dev/null && echo COPY-WRITTEN",
				"echo probe-end",
			}, "; ")
			b.model.Push(shell(probe), answer("done"))
			out, stderr, err := b.run([]string{"ZERO_APPROVAL=auto"}, "run", "--json", "--workspace", b.home, "probe")
			if err != nil {
				t.Fatalf("zero run: %v\n%s", err, stderr)
			}
			printed := outputs(out)
			if !strings.Contains(printed, "probe-end") {
				t.Fatalf("the probe did not run:\n%s", out)
			}
			for _, leak := range []string{"COPY-READ", "COPY-LISTED", "COPY-WRITTEN"} {
				if strings.Contains(printed, leak) {
					t.Errorf("the agent reached the trusted copy (%s):\n%s", leak, printed)
				}
			}
			if data, err := os.ReadFile(copies[0]); err != nil || !strings.Contains(string(data), "TRUSTED-COPY-MARKER") {
				t.Errorf("the trusted copy changed: %q, %v", data, err)
			}
		})
	}
}
