package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/server"
)

func TestHostPolicy(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("ZERO_APPROVAL", "")
	askCommands := server.DefaultPolicy(false) // no sandbox opened: nothing confines the commands
	tests := []struct {
		name    string
		project string            // the workspace's config.yaml
		flags   map[string]string // flag overrides
		want    server.Policy
	}{
		{"default on the local backend asks for commands", "", nil, askCommands},
		{"auto from a flag", "", map[string]string{"approval": "auto"}, server.Policy{Default: server.Auto}},
		{"a workspace cannot turn approvals off", "approval: auto\n", nil, askCommands},
		{"a workspace can ask for more", "approval: ask\n", nil, server.AskPolicy()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if tt.project != "" {
				mustWrite(t, filepath.Join(ws, ".zero", "config.yaml"), tt.project)
			}
			a, err := app.NewAppAt(ws, nil, tt.flags, slog.New(slog.DiscardHandler), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, a.Policy()); diff != "" {
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
	h := &app.Host{Workspace: ws}
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
		got, err := h.Roots(server.SessionSpec{Roots: tt.roots})
		if (err != nil) != tt.wantErr || !cmp.Equal(got, tt.want) {
			t.Errorf("roots(%q) = %q, %v; want %q, error %v", tt.roots, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestHostSessionsAsk checks the wiring every face relies on: a session
// the host builds on the local backend asks before a command, and runs it
// once approved.
func TestHostSessionsAsk(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts":["list"],"headline":"Listing","tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"echo approved-and-ran"}}`},
		llmtest.Reply{Content: `{"thoughts":["done"],"headline":"Answer","tool_name":"response","tool_args":{"text":"done"}}`})
	t.Setenv("ZERO_MODEL", llmtest.ModelName)
	t.Setenv("OPENAI_BASE_URL", srv.URL())
	t.Setenv("ZERO_SANDBOX", "local")
	t.Setenv("ZERO_APPROVAL", "ask") // under bubblewrap "sandbox" would not ask
	h, err := app.NewHost(t.Context(), app.Options{Workspace: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(time.Second)
	s, err := h.Manager.Create(t.Context(), server.SessionSpec{})
	if err != nil {
		t.Fatal(err)
	}
	f := s.Follow(s.Cursor())
	answered := make(chan struct{})
	t.Cleanup(func() { <-answered }) // t.Context ends first
	// Answer as a face would, from the events.
	go func() {
		defer close(answered)
		for {
			b, err := f.Next(t.Context())
			if err != nil {
				return
			}
			for _, e := range b.Events {
				if e.Type == server.EventApprovalRequested {
					if err := h.Manager.Approvals().Approve(e.Text, false); err != nil {
						t.Errorf("Approve: %v", err)
					}
				}
			}
		}
	}()
	res, err := s.Prompt(t.Context(), "list")
	if err != nil || res.Response != "done" {
		t.Fatalf("Prompt = %+v, %v", res, err)
	}
	evs, _ := s.Events(0)
	var asked, output bool
	for _, e := range evs {
		asked = asked || e.Type == server.EventApprovalRequested
		output = output || (e.Type == loop.EventToolResult && strings.Contains(e.Text, "approved-and-ran"))
	}
	if !asked || !output {
		t.Fatalf("asked %v, command ran %v; events: %+v", asked, output, evs)
	}
}

// approval "sandbox" asks only where commands would run unconfined: the
// local backend under bubblewrap is a sandbox, without it it is not.
func TestDefaultPolicyFollowsIsolation(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("ZERO_APPROVAL", "")
	t.Setenv("ZERO_SANDBOX", "local")
	a, err := app.NewAppAt(t.TempDir(), nil, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureSandbox(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	l := a.Backend.(*sandbox.Local)
	mode, _ := l.Isolation()
	want := server.DefaultPolicy(false)
	if mode == sandbox.IsolationBubblewrap {
		want = server.Policy{Default: server.Auto}
	} else if os.Getenv("ZERO_REQUIRE_DOCKER") == "1" {
		t.Fatal("bubblewrap is required here (ZERO_REQUIRE_DOCKER=1)")
	}
	if diff := cmp.Diff(want, a.Policy()); diff != "" {
		t.Errorf("policy under %s (-want +got):\n%s", mode, diff)
	}
}
