package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/server"
)

// Tool results too long for history are kept whole where the agent's shell
// can read them: the workspace's .zero/output/<session>/ for a container
// (it sees only the workspace), a private temporary folder for the local
// backend. They go when their session is deleted, and each session's folder
// keeps at most spillBudget bytes, the oldest files going first.

// spillBudget bounds the spilled output one session keeps.
const spillBudget = 256 << 20

// spillDirs are the folders a session's spilled output may be in, as
// (root, folder inside root): the workspace's, written through an os.Root
// because the agent can write the workspace, and the temporary one.
func spillDirs(ws, id string) [][2]string {
	return [][2]string{
		{ws, filepath.Join(".zero", "output", id)},
		{os.TempDir(), "zero-" + id},
	}
}

// Spill writes one result and returns its path.
func Spill(ws, id string, inWorkspace bool, name, text string) (string, error) {
	if !server.ValidID(id) {
		return "", fmt.Errorf("session id %q cannot name a folder", id)
	}
	dirs := spillDirs(ws, id)
	d := dirs[1]
	if inWorkspace {
		d = dirs[0]
	}
	path, err := SpillInto(d[0], d[1], name, text)
	if err != nil {
		return "", err
	}
	if inWorkspace {
		noteSpillWorkspace(ws)
	}
	TrimSpill(d[0], d[1], name, spillBudget)
	return path, nil
}

// SpillInto writes text to root/dir/name without ever leaving root (the
// agent could have made .zero/output a link to a folder of yours), and
// returns the file's path.
func SpillInto(root, dir, name, text string) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := r.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	rel := filepath.Join(dir, name)
	if err := r.WriteFile(rel, []byte(text), 0o600); err != nil {
		return "", err
	}
	return filepath.Join(root, rel), nil
}

// TrimSpill removes the oldest regular files of root/dir, but never keep
// (the one just written), until they hold at most budget bytes. Best
// effort: spilled output is a convenience.
func TrimSpill(root, dir, keep string, budget int64) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return
	}
	defer r.Close()
	entries, err := fs.ReadDir(r.FS(), filepath.ToSlash(dir))
	if err != nil {
		return
	}
	type file struct {
		name string
		info fs.FileInfo
	}
	var files []file
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == keep {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{e.Name(), info})
		total += info.Size()
	}
	if info, err := r.Lstat(filepath.Join(dir, keep)); err == nil {
		total += info.Size()
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(a.info.ModTime().Compare(b.info.ModTime()), cmp.Compare(a.name, b.name))
	})
	for _, f := range files {
		if total <= budget {
			return
		}
		if err := r.Remove(filepath.Join(dir, f.name)); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.info.Size()
		}
	}
}

// RemoveSpill removes a deleted session's spilled output, never leaving
// the roots it is in.
func RemoveSpill(ws, id string) {
	if !server.ValidID(id) { // never a path: "../x" would be a folder of the workspace
		return
	}
	for _, d := range spillDirs(ws, id) {
		if d[0] == "" {
			continue
		}
		r, err := os.OpenRoot(d[0])
		if err != nil {
			continue
		}
		_ = r.RemoveAll(d[1]) // best effort, as above
		r.Close()
	}
}

// The workspaces whose .zero/output holds spilled output are listed, one
// absolute path a line, in the state folder, so that other workspaces'
// bubblewrapped shells, which see the host read-only, get them hidden
// (see localBackend).
const (
	spillListFile = "output-workspaces"
	maxSpillList  = 1000
)

// noteSpillWorkspace adds ws to the list unless it is there.
func noteSpillWorkspace(ws string) {
	if slices.Contains(spillWorkspaces(), ws) {
		return
	}
	dir := StateDir()
	if dir == "" || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, spillListFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, ws)
}

// spillWorkspaces reads the list: the newest maxSpillList workspaces.
func spillWorkspaces() []string {
	dir := StateDir()
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, spillListFile))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if filepath.IsAbs(line) && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	if len(out) > maxSpillList {
		out = out[len(out)-maxSpillList:]
	}
	return out
}
