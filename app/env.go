package app

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/store"
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

// Env is the environment the assembly reads: where the user's files are
// (HOME, XDG_*), the model keys and secrets, ZERO_STORE, and what the
// agent's shell inherits (without the keys). nil is the process's; the
// face tests give their own, so that hosts run side by side in one process.
type Env []string

// Get is the value of key ("" when unset); a later entry wins.
func (e Env) Get(key string) string {
	if e == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range e {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// List is every KEY=value of e.
func (e Env) List() []string {
	if e == nil {
		return os.Environ()
	}
	return e
}

// Home is the user's home directory ("" when unknown).
func (e Env) Home() string {
	if e == nil {
		home, _ := os.UserHomeDir()
		return home
	}
	return e.Get("HOME")
}

// UserConfigDir is $XDG_CONFIG_HOME/zero, else ~/.config/zero, on every
// system (macOS included), where the README and Agent Zero users look.
func (e Env) UserConfigDir() string {
	if dir := e.Get("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "zero")
	}
	if home := e.Home(); home != "" {
		return filepath.Join(home, ".config", "zero")
	}
	return ""
}

// StateDir is Zero's state folder ($XDG_STATE_HOME/zero, else
// ~/.local/state/zero; "" without a home): the chat's log, the list of
// workspaces with spilled output.
func (e Env) StateDir() string {
	if dir := e.Get("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "zero")
	}
	if home := e.Home(); home != "" {
		return filepath.Join(home, ".local", "state", "zero")
	}
	return ""
}

// StorePath is the session store's file: $ZERO_STORE, else
// $XDG_DATA_HOME/zero/zero.db, else ~/.local/share/zero/zero.db;
// ErrStoreOff for ZERO_STORE=off.
func (e Env) StorePath() (string, error) {
	switch path := e.Get("ZERO_STORE"); path {
	case "off":
		return "", ErrStoreOff
	case "":
		return e.defaultStorePath()
	default:
		return path, nil
	}
}

func (e Env) defaultStorePath() (string, error) {
	return store.DefaultPathIn(e.Get("XDG_DATA_HOME"), e.Home())
}

// UserConfigDir is the process's Env.UserConfigDir.
func UserConfigDir() string { return Env(nil).UserConfigDir() }

// StateDir is the process's Env.StateDir.
func StateDir() string { return Env(nil).StateDir() }

// StorePath is the process's Env.StorePath.
func StorePath() (string, error) { return Env(nil).StorePath() }

func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IsTerminalIn reports whether r is a terminal a person can answer on
// (/dev/null is a character device, but nobody types there).
func IsTerminalIn(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}
