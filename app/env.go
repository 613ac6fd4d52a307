package app

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/secrets"
	"golang.org/x/term"
)

// agentEnviron is the environment the agent's shells and extension scripts
// get: Zero's own secrets are not theirs to see. That is the model
// configuration (the API key above all), the MCP token, and every variable
// a key is read from (secret: the api_key_env names of the configuration
// and of the profiles).
func agentEnviron(environ []string, secret ...string) []string {
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "OPENAI_API_KEY", k == "OPENAI_BASE_URL", k == "OPENAI_ORG_ID", k == "OPENAI_PROJECT_ID",
			k == "ZERO_MODEL", k == "ZERO_MCP_TOKEN", slices.Contains(secret, k):
		default:
			env = append(env, kv)
		}
	}
	return env
}

// userConfigDir is $XDG_CONFIG_HOME/zero, else ~/.config/zero, on every
// system (macOS included), where the README and Agent Zero users look.
func UserConfigDir() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "zero")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "zero")
}

// newLogger logs to stderr only: stdout belongs to the output. ZERO_LOG
// sets the level (debug, info, warn, error; default warn).
func newLogger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("ZERO_LOG"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return slog.New(secrets.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), LogSecrets.Load))
}

func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isTerminalIn reports whether r is a terminal a person can answer on
// (/dev/null is a character device, but nobody types there).
func IsTerminalIn(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}
