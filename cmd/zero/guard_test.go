package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/loop"
)

// Not parallel: it sets HOME.
func TestGuardConfirmWorkspace(t *testing.T) {
	home := app.RealPath(t.TempDir())
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name        string
		ws          string
		answer      string
		interactive bool
		wantErr     bool
		wantAsked   string // the question, "" for none
		wantInErr   []string
	}{
		{name: "a project folder", ws: filepath.Join(home, "src", "project")},
		{name: "a project folder, no terminal", ws: filepath.Join(home, "src")},
		{name: "home, yes", ws: home, answer: "y\n", interactive: true,
			wantAsked: "Run with your whole home directory (" + home + ") as the workspace? The agent can read and change everything in it. [y/N] "},
		{name: "home, YES", ws: home, answer: " YES \n", interactive: true, wantAsked: "[y/N] "},
		{name: "home, enter", ws: home, answer: "\n", interactive: true, wantErr: true, wantAsked: "[y/N] ", wantInErr: []string{"--workspace"}},
		{name: "home, no", ws: home, answer: "n\n", interactive: true, wantErr: true, wantAsked: "[y/N] "},
		{name: "home, stdin closed", ws: home, interactive: true, wantErr: true, wantAsked: "[y/N] "},
		{name: "home, no terminal", ws: home, wantErr: true,
			wantInErr: []string{"your whole home directory (" + home + ")", "--workspace DIR", "--workspace " + home}},
		{name: "root", ws: "/", wantErr: true, wantInErr: []string{"the whole file system (/)"}},
		{name: "above home", ws: filepath.Dir(home), answer: "y\n", interactive: true,
			wantAsked: "Run with " + filepath.Dir(home) + " (it holds your home directory, " + home + ") as the workspace?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked bytes.Buffer
			err := app.ConfirmWorkspace(tc.ws, strings.NewReader(tc.answer), &asked, tc.interactive)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, app.ErrBroadWorkspace)) {
				t.Fatalf("confirmWorkspace(%s) = %v, want error %v", tc.ws, err, tc.wantErr)
			}
			if tc.wantAsked == "" && asked.Len() > 0 || !strings.Contains(asked.String(), tc.wantAsked) {
				t.Errorf("asked %q, want %q", asked.String(), tc.wantAsked)
			}
			for _, want := range tc.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// The answer is read without reading ahead: what follows it on stdin is
// left for the approval prompts.
func TestGuardReadsOneLine(t *testing.T) {
	home := app.RealPath(t.TempDir())
	t.Setenv("HOME", home)
	in := strings.NewReader("y\na\n")
	if err := app.ConfirmWorkspace(home, in, io.Discard, true); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(in)
	if string(rest) != "a\n" {
		t.Errorf("left on stdin: %q, want %q", rest, "a\n")
	}
}

// An editor's session in the home directory gets a warning, logged and
// sent to the editor, and nobody is asked; a terminal command's session,
// whose workspace went through preflight, gets none.
func TestGuardEditorSessionWarns(t *testing.T) {
	home := app.RealPath(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("ZERO_MODEL", "m")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("ZERO_SANDBOX", "local")
	warnings := func(a *app.App) []string {
		t.Helper()
		var got []string
		if _, err := a.SessionFor(app.SessionOpts{ID: app.NewID()}, func(e loop.Event) {
			if e.Type == loop.EventWarning && strings.Contains(e.Text, "can read and change everything") {
				got = append(got, e.Text)
			}
		}, true); err != nil {
			t.Fatal(err)
		}
		return got
	}

	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	a, err := app.NewAppAt(home, nil, nil, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Warn.Logger = logger // as host.app does for the editor faces
	want := "the workspace is your whole home directory (" + home + "): the agent can read and change everything in it"
	if got := warnings(a); len(got) != 1 || !strings.Contains(got[0], want) {
		t.Errorf("warnings = %q, want one with %q", got, want)
	}
	if !strings.Contains(log.String(), want) {
		t.Errorf("the log lacks the warning:\n%s", log.String())
	}

	fs := flag.NewFlagSet("zero run", flag.ContinueOnError)
	common := addCommonFlags(fs, true)
	if err := fs.Parse([]string{"--workspace", home}); err != nil {
		t.Fatal(err)
	}
	a, err = newApp(common, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if code := a.Preflight(common.explicit("workspace"), strings.NewReader(""), io.Discard); code != 0 {
		t.Fatalf("preflight with --workspace named = %d", code)
	}
	if got := warnings(a); len(got) != 0 {
		t.Errorf("a named workspace: warnings %q, want none", got)
	}

	// A project whose editor added the home directory (or /) as another
	// folder is warned too.
	a, err = app.NewAppAt(app.RealPath(t.TempDir()), []string{home, "/"}, nil, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := warnings(a); len(got) != 2 || !strings.Contains(got[0], "("+home+") is your whole home directory") {
		t.Errorf("extra folders: warnings %q, want one for the home directory and one for /", got)
	}
}
