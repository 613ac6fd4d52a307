package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/server"
)

func TestHostPolicy(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("ZERO_APPROVAL", "")
	askCommands := server.DefaultPolicy("local")
	tests := []struct {
		name    string
		project string            // the workspace's config.yaml
		flags   map[string]string // flag overrides
		want    server.Policy
	}{
		{"default on the local backend asks for commands", "", nil, askCommands},
		{"auto from a flag", "", map[string]string{"approval": "auto"}, server.Policy{Default: server.Auto}},
		{"a workspace cannot turn approvals off", "approval: auto\n", nil, askCommands},
		{"a workspace can ask for more", "approval: ask\n", nil, server.Policy{Default: server.Auto, Rules: []server.Rule{
			{Tool: "code_execution_tool", Decision: server.Ask},
			{Tool: "input", Decision: server.Ask},
			{Tool: "text_editor:write", Decision: server.Ask},
			{Tool: "text_editor:patch", Decision: server.Ask},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.project != "" {
				mustWrite(t, filepath.Join(ws, ".zero", "config.yaml"), tt.project)
			}
			a, err := newAppAt(ws, nil, tt.flags, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, a.policy()); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostRoots(t *testing.T) {
	t.Parallel()
	ws, other := t.TempDir(), t.TempDir()
	file := filepath.Join(other, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h := &host{ws: ws}
	tests := []struct {
		roots   []string
		want    []string
		wantErr bool
	}{
		{nil, []string{ws}, false},
		{[]string{other, ws, other}, []string{other, ws}, false},
		{[]string{"relative/path"}, nil, true},
		{[]string{file}, nil, true},
		{[]string{filepath.Join(other, "missing")}, nil, true},
	}
	for _, tt := range tests {
		got, err := h.roots(server.SessionSpec{Roots: tt.roots})
		if (err != nil) != tt.wantErr || !cmp.Equal(got, tt.want) {
			t.Errorf("roots(%q) = %q, %v; want %q, error %v", tt.roots, got, err, tt.want, tt.wantErr)
		}
	}
}

