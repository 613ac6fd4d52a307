package app

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/trust"
)

// workspaceCode returns the folder laid out like the workspace from which
// its extensions may run, and the trust state they are in. The folder is a
// private copy of exactly the content the user trusted (see trust.Snapshot);
// it is "" when the workspace's code may not run, which is then said once as
// a warning.
func (a *App) workspaceCode() (string, trust.State) {
	st, err := a.TrustState()
	if err != nil { // unreadable, too large, or a damaged store: nothing runs
		a.Warn.warn(fmt.Sprintf("workspace code is off: %v", err))
		return "", st
	}
	m := st.Manifest
	if !st.Runs() {
		if msg := st.Message(); msg != "" {
			a.Warn.warn(msg)
		}
		return "", st
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if dir := a.snapshots[m.Digest]; dir != "" {
		return dir, st
	}
	dir, err := trust.Snapshot(m)
	if err != nil {
		a.Warn.warn(fmt.Sprintf("workspace code is off: %v", err))
		return "", st
	}
	if a.snapshots == nil {
		a.snapshots = map[string]string{}
	}
	a.snapshots[m.Digest] = dir
	return dir, st
}

// TrustState is the state of the workspace's code now, without warnings.
func (a *App) TrustState() (trust.State, error) {
	m, err := trust.Scan(a.Workspace)
	if err != nil {
		return trust.State{Status: trust.StatusUntrusted, Manifest: &trust.Manifest{Workspace: a.Workspace}}, err
	}
	return a.Trust.Check(m)
}

// TrustDigest trusts the workspace's current code if its digest is still
// the one the user was shown; any other content stays untrusted.
func (a *App) TrustDigest(digest string) (trust.State, error) {
	m, err := trust.Scan(a.Workspace)
	if err != nil {
		return trust.State{}, err
	}
	if m.Digest != digest {
		st, _ := a.Trust.Check(m)
		return st, errTrustMoved
	}
	if err := GrantAndKeep(a.Trust, m, a.UserDir); err != nil {
		return trust.State{}, err
	}
	return a.Trust.Check(m)
}

var errTrustMoved = errors.New("the workspace's code changed after it was shown to you; review it again")

// removeSnapshots deletes the private copies of trusted code.
func (a *App) removeSnapshots() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for d, dir := range a.snapshots {
		os.RemoveAll(dir)
		delete(a.snapshots, d)
	}
}

// TrustedCopyDir is where the copy of a workspace's code as the user last
// trusted it is kept, for the diff of the next review: in the user's config
// directory, one folder per workspace. The copies are never run (no file
// in them is executable).
func TrustedCopyDir(userDir, ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join(userDir, "trusted", hex.EncodeToString(sum[:8]))
}

// GrantAndKeep records the user's trust in exactly m and keeps a copy of
// its files for the diff of the next review. A copy that cannot be kept
// costs only that diff: the trust stands, and the next review shows whole
// files.
func GrantAndKeep(st *trust.Store, m *trust.Manifest, userDir string) error {
	if err := st.Grant(m); err != nil {
		return err
	}
	dir := TrustedCopyDir(userDir, m.Workspace)
	if err := os.RemoveAll(dir); err != nil {
		return nil
	}
	snap, err := trust.Snapshot(m)
	if err != nil {
		return nil
	}
	defer os.RemoveAll(snap)
	_ = copyTree(snap, filepath.Join(dir, "files"))
	return nil
}

// copyTree copies the regular files under src into dst, readable by the
// user only and never executable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o600)
	})
}

// hostTrust is the editor faces' server.Trust: each workspace's app
// decides for its own code.
type hostTrust struct{ h *Host }

var _ server.Trust = hostTrust{}

// TrustState implements server.Trust.
func (t hostTrust) TrustState(roots []string) (server.TrustState, error) {
	a, err := t.h.appOf(roots)
	if err != nil {
		return server.TrustState{}, err
	}
	st, err := a.TrustState()
	return serverTrust(st), err
}

// Grant implements server.Trust.
func (t hostTrust) Grant(roots []string, digest string) (server.TrustState, error) {
	a, err := t.h.appOf(roots)
	if err != nil {
		return server.TrustState{}, err
	}
	st, err := a.TrustDigest(digest)
	if errors.Is(err, errTrustMoved) {
		err = server.ErrTrustMoved
	}
	if err == nil {
		a.Logger.Info("workspace code trusted", "workspace", a.Workspace, "digest", digest, "files", len(st.Manifest.Files))
	}
	return serverTrust(st), err
}

// serverTrust converts a trust state for the faces.
func serverTrust(st trust.State) server.TrustState {
	out := server.TrustState{Status: string(st.Status), Message: st.Message()}
	m := st.Manifest
	if m == nil {
		return out
	}
	out.Workspace, out.Digest = m.Workspace, m.Digest
	changed := map[string]string{}
	for _, c := range st.Changes {
		changed[c.Path] = c.What
	}
	for _, f := range m.Files {
		out.Files = append(out.Files, server.TrustFile{Path: f.Path, Kind: f.Kind, Point: f.Point, Digest: f.Digest, Change: changed[f.Path]})
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			out.Files = append(out.Files, server.TrustFile{Path: c.Path, Change: c.What})
		}
	}
	return out
}

// TrustSummary says in one line what may run of the workspace's code.
func TrustSummary(st trust.State) string {
	switch st.Status {
	case trust.StatusNone:
		return "none (nothing in .zero/ can run)"
	case trust.StatusTrusted:
		return fmt.Sprintf("trusted (%d files, %s, since %s)", len(st.Manifest.Files), Short(st.Manifest.Digest), st.Trusted.Local().Format("2006-01-02 15:04"))
	}
	return "off: " + st.Message()
}

// Short is a digest's first 12 hex digits, enough to compare by eye.
func Short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}
