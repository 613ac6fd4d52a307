package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/config"
	"github.com/zeroagent/zero/profiles"
)

// config.yaml and a profile's agent.yaml are read by one walker: the same
// mistake gets the same words, with its file, line and key.
func TestSettingsFilesSpeakAlike(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	agent := filepath.Join(ws, ".zero", "agents", "p", "agent.yaml")
	cfg := filepath.Join(ws, ".zero", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{cfg: "profile: [a]\n", agent: "title: [a]\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := config.Load(config.Sources{Workspace: ws, Getenv: func(string) string { return "" }})
	if want := cfg + ":1: profile: must be a single value, got a list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("config.yaml: %v, want %q", err, want)
	}
	_, err = profiles.NewLoader(ws, t.TempDir()).Load("p")
	if want := agent + ":1: title: must be a single value, got a list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("agent.yaml: %v, want %q", err, want)
	}
}
