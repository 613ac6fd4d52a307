package profiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace's agent.yaml whose aliases and << merges would stand for
// 10^9 copies of one mapping is read in one pass over what is written.
func TestAgentYAMLAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("x0: &x0 {title: a}\n")
	for i := 1; i <= 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*x%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "x%d: &x%d {<<: [%s], l%d: [%s]}\n", i, i, refs, i, refs)
	}
	b.WriteString("<<: *x9\n")
	ws := t.TempDir()
	dir := filepath.Join(ws, ".zero", "agents", "bomb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewLoader(ws, t.TempDir()).Load("bomb")
	if err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("Load = %v, want the unknown keys said", err)
	}
	if len(err.Error()) > 64<<10 {
		t.Errorf("the error repeats what the aliases stand for: %d bytes", len(err.Error()))
	}
}
