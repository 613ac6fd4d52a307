// Package e2e runs the end-to-end tests: the real zero binary driven over
// stdio (and loopback HTTP) by each protocol's own client library from
// npm, against the scripted model server.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClients runs every *.test.mjs here with node's test runner, one
// subtest per file. Node and the installed packages (npm ci) are required
// when ZERO_REQUIRE_NODE=1 (CI), and the test skips without them otherwise.
func TestClients(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat("node_modules/@agentclientprotocol/sdk")
	}
	if err != nil {
		if os.Getenv("ZERO_REQUIRE_NODE") == "1" {
			t.Fatalf("node and the npm packages are required (ZERO_REQUIRE_NODE=1): %v; run npm ci in e2e", err)
		}
		t.Skipf("node or the npm packages are missing (%v); run npm ci in e2e", err)
	}
	bin := t.TempDir()
	for _, name := range []string{"zero", "fakellm"} {
		if name == "zero" && os.Getenv("ZERO_TEST_BIN") != "" {
			continue
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), "../cmd/"+name).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	zero := zeroBinary(t, filepath.Join(bin, "zero"))
	files, err := filepath.Glob("*.test.mjs")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".test.mjs"), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(node, "--test", "--test-reporter=spec", f)
			cmd.Env = append(os.Environ(), "ZERO_BIN="+zero, "FAKELLM_BIN="+filepath.Join(bin, "fakellm"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node --test %s: %v\n%s", f, err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// zeroBinary is the zero the tests drive: built is the one built from this
// checkout, unless ZERO_TEST_BIN names another (scripts/test points it at
// the binary unpacked from the release archive, as a user installs it).
func zeroBinary(t *testing.T, built string) string {
	t.Helper()
	p := os.Getenv("ZERO_TEST_BIN")
	if p == "" {
		return built
	}
	abs, err := filepath.Abs(p)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		t.Fatalf("ZERO_TEST_BIN=%s: %v", p, err)
	}
	t.Logf("driving %s (ZERO_TEST_BIN)", abs)
	return abs
}
