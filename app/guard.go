package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/zeroagent/zero/profiles"
)

// ExitUsage is the exit status of a command that cannot start as asked: a
// bad flag, a configuration that does not work, a profile that does not
// exist, a workspace refused. Every command returns it for the same cause.
const ExitUsage = 2

// ErrBroadWorkspace is the refusal of a workspace that holds the user's
// whole home directory.
var ErrBroadWorkspace = errors.New("workspace not confirmed")

// Preflight checks what a terminal command that runs the agent needs before
// anything starts (no sandbox, no model call): the configured profile
// exists, and a workspace as broad as the home directory was meant. It
// prints the one-line reason and returns the exit status when the command
// must stop, else 0.
func (a *App) Preflight(named bool, stdin io.Reader, stderr io.Writer) int {
	if err := a.CheckProfile(); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return ExitUsage
	}
	// No model, or no key for it, is said before any sandbox work (pulling
	// an image can take minutes).
	if p, err := a.Loader.Load(a.Config.Profile); err == nil {
		if _, err := a.endpoint("chat", p, ""); errors.Is(err, ErrNoModel) || errors.Is(err, ErrNoKey) {
			fmt.Fprintln(stderr, "zero:", err)
			return ExitUsage
		}
	}
	if !named { // else the user chose it
		// The question needs someone to see it: on a terminal stderr too.
		asked := IsTerminalIn(stdin)
		if f, ok := stderr.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			asked = false
		}
		if err := ConfirmWorkspace(a.Workspace, stdin, stderr, asked); err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			return ExitUsage
		}
	}
	a.wsChecked = true // no warning in its sessions either
	return 0
}

// ConfirmWorkspace asks before an agent gets the whole home directory (or
// the whole file system, or a folder holding the home directory) as its
// workspace: it could read and change everything there. On a terminal
// (interactive) it asks on errw and reads the answer from in, one line,
// without reading ahead; elsewhere nobody can answer, so it refuses with an
// error that says how to choose the folder. A workspace the user named
// (--workspace) needs no question: do not call it then. Any other
// workspace passes without a word.
func ConfirmWorkspace(ws string, in io.Reader, errw io.Writer, interactive bool) error {
	what := broadWorkspace(ws)
	if what == "" {
		return nil
	}
	if !interactive {
		return fmt.Errorf("%w: %s would be the workspace, and the agent could read and change everything in it; run zero in your project's folder, or name the folder with --workspace DIR (--workspace %s if you mean it)", ErrBroadWorkspace, what, ws)
	}
	fmt.Fprintf(errw, "Run with %s as the workspace? The agent can read and change everything in it. [y/N] ", what)
	switch strings.ToLower(strings.TrimSpace(readLine(in))) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%w: run zero in your project's folder, or name the folder with --workspace DIR", ErrBroadWorkspace)
}

// broadWorkspace describes ws when it is the file system's root, the home
// directory or a folder above it ("your whole home directory (/home/x)"),
// and is "" for any other folder.
func broadWorkspace(ws string) string {
	ws = RealPath(ws)
	if ws == string(filepath.Separator) || ws == filepath.VolumeName(ws)+string(filepath.Separator) {
		return "the whole file system (" + ws + ")"
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	home = RealPath(home)
	switch {
	case ws == home:
		return "your whole home directory (" + ws + ")"
	case strings.HasPrefix(home, ws+string(filepath.Separator)):
		return ws + " (it holds your home directory, " + home + ")"
	}
	return ""
}

// RealPath is p absolute, cleaned and with symbolic links resolved where
// they can be.
func RealPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// readLine reads one line from r a byte at a time, so that nothing after
// it is taken from whoever reads r next (the approval prompts).
func readLine(r io.Reader) string {
	var line []byte
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				return string(line)
			}
			line = append(line, b[0])
		}
		if err != nil {
			return string(line)
		}
	}
}

// CheckProfile fails, on one line that lists the profiles there are, when
// the configured profile does not exist. A profile that exists but is
// broken passes: it is reported where it is used.
func (a *App) CheckProfile() error {
	_, err := a.Loader.Load(a.Config.Profile)
	if !errors.Is(err, profiles.ErrNoProfile) {
		return nil
	}
	infos, _ := a.Loader.List() // the profiles that load, when some do not
	names := make([]string, 0, len(infos))
	for _, in := range infos {
		names = append(names, in.Name)
	}
	slices.Sort(names)
	return fmt.Errorf("no profile %q (profile from %s); the profiles are: %s", a.Config.Profile, a.Config.Origin("profile"), strings.Join(names, ", "))
}

// ProfileGate is checkProfile for the commands that print: the one-line
// reason on stderr and the exit status, or 0.
func (a *App) ProfileGate(stderr io.Writer) int {
	if err := a.CheckProfile(); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return ExitUsage
	}
	return 0
}
