// Package dockertest finds the Docker engine and test image the Docker
// tests need: without them a test skips with the reason, and fails instead
// when ZERO_REQUIRE_DOCKER=1 (as in CI, where .ci/run starts an engine).
package dockertest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Image returns the test image ($ZERO_TEST_IMAGE, default
// zero-test:bookworm) once the engine has it.
func Image(t testing.TB) string {
	t.Helper()
	image := os.Getenv("ZERO_TEST_IMAGE")
	if image == "" {
		image = "zero-test:bookworm"
	}
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput()
	if err != nil {
		msg := "no Docker engine with image " + image + ": " + strings.TrimSpace(string(out))
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return image
}
