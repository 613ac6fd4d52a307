// Package dockertest finds the Docker engine and test image the Docker
// tests need: without them a test skips with the reason, and fails instead
// when ZERO_REQUIRE_DOCKER=1 (as in CI, where .ci/run starts an engine).
package dockertest

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// ImageName is the test image: $ZERO_TEST_IMAGE, default
// zero-test:bookworm (built by scripts/ci-docker).
func ImageName() string {
	if image := os.Getenv("ZERO_TEST_IMAGE"); image != "" {
		return image
	}
	return "zero-test:bookworm"
}

var (
	checkOnce sync.Once
	checkErr  string // why the engine or the image is missing; "" when both are there
)

// Image returns the test image once an engine answers and has it. The
// check runs once per test binary.
func Image(t testing.TB) string {
	t.Helper()
	image := ImageName()
	checkOnce.Do(func() {
		out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput()
		if err != nil {
			checkErr = "no Docker engine with image " + image + " (build it with scripts/ci-docker): " + strings.TrimSpace(string(out))
		}
	})
	if checkErr != "" {
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
			t.Fatal(checkErr)
		}
		t.Skip(checkErr)
	}
	return image
}

// Bwrap gates a test on bubblewrap, the local backend's isolation: without
// it the test skips with the reason, and fails instead when
// ZERO_REQUIRE_DOCKER=1 (scripts/ci-docker installs it with the engine).
func Bwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
			t.Fatal("bwrap is required (ZERO_REQUIRE_DOCKER=1):", err)
		}
		t.Skip("bwrap is not installed:", err)
	}
}
