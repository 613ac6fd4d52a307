package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aliasBomb is YAML whose aliases and << merges would stand for 10^levels
// copies of one mapping if they were expanded.
func aliasBomb(key string, levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "x0: &x0 {%s: a}\n", key)
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*x%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "x%d: &x%d {<<: [%s], l%d: [%s]}\n", i, i, refs, i, refs)
	}
	fmt.Fprintf(&b, "<<: *x%d\n", levels)
	return b.String()
}

// A workspace's config.yaml built to explode when its aliases are followed
// (a billion laughs) is read in one pass over what is written: each
// problem said, the load refused, nothing expanded.
func TestAliasBombIsReadOnce(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".zero"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ProjectFile(ws), []byte(aliasBomb("profile", 9)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(Sources{Workspace: ws, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("Load = %v, want the unknown keys said", err)
	}
	if len(err.Error()) > 64<<10 {
		t.Errorf("the error repeats what the aliases stand for: %d bytes", len(err.Error()))
	}
}
