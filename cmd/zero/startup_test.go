package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartupVersion measures `zero --version` end to end: process
// start, Go runtime init, package init and exit, on the real binary.
func BenchmarkStartupVersion(b *testing.B) {
	bin := buildZero(b)
	b.ResetTimer()
	for b.Loop() {
		if err := exec.Command(bin, "--version").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// buildZero builds the real binary for a benchmark.
func buildZero(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "zero")
	// ZERO_BENCH_TAGS=zeroprof builds the binary that writes profiles
	// (profile_on.go) for the benchmarks that run it.
	if out, err := exec.Command("go", "build", "-tags", os.Getenv("ZERO_BENCH_TAGS"), "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
