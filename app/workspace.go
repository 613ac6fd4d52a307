package app

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// ResolveWorkspace is the workspace a command names (--workspace), else
// the current directory: absolute and a directory.
//
// An editor's configuration may pass its own variable for the project
// (VS Code's and Cursor's ${workspaceFolder}); an editor that does not
// know it passes the text as it is, and that is said as such rather than
// as a folder that does not exist.
func ResolveWorkspace(dir string) (string, error) {
	if v := editorVariable.FindString(dir); v != "" {
		return "", fmt.Errorf("workspace %q: the editor did not replace %s with a folder (it does not know the variable here); put the project's absolute path in its place, e.g. --workspace /home/you/project", dir, v)
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("current directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return abs, nil
}

// editorVariable is an editor's configuration variable left unexpanded:
// ${workspaceFolder}, ${env:HOME}, ${userHome}.
var editorVariable = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_:]*\}`)

// workspaceError is a session's workspace refused: the faces answer it as
// a bad workspace parameter (ACP: cwd), not as an internal error.
type workspaceError struct{ msg string }

func (e *workspaceError) Error() string { return e.msg }

// InvalidWorkspace marks the error for the faces (see server/acp).
func (e *workspaceError) InvalidWorkspace() bool { return true }

func (e *workspaceError) Unwrap() error { return ErrBroadWorkspace }

// refuseBroad refuses a session's folders when one is as broad as the
// whole file system or the user's home directory (see broadWorkspace) and
// nobody chose it: the editor faces would otherwise hand an agent
// everything because an editor started zero in / (Claude Desktop does)
// or sent no folder. A broad folder passes when the user named it with
// --workspace (named, resolved by realPath), or when the terminal asked
// about it or was told it (checked: the app of that folder has wsChecked).
func refuseBroad(roots []string, named string, checked func(root string) bool) error {
	for _, r := range roots {
		what := broadWorkspace(r)
		if what == "" || RealPath(r) == named || checked(r) {
			continue
		}
		return &workspaceError{fmt.Sprintf("no workspace: it would be %s (where zero was started, or what the editor asked for), and the agent could read and change everything in it. "+
			"Open a project's folder in the editor, or add --workspace DIR to zero's arguments in the editor's configuration (--workspace %s if you mean it)", what, r)}
	}
	return nil
}
