package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/trust"
)

// workspaceCode returns the folder laid out like the workspace from which
// its extensions may run, and the trust state they are in. The folder is a
// private copy of exactly the content the user trusted (see trust.Snapshot);
// it is "" when the workspace's code may not run, which is then said once as
// a warning.
func (a *app) workspaceCode() (string, trust.State) {
	st, err := a.trustState()
	if err != nil { // unreadable, too large, or a damaged store: nothing runs
		a.warn.warn(fmt.Sprintf("workspace code is off: %v", err))
		return "", st
	}
	m := st.Manifest
	if !st.Runs() {
		if msg := st.Message(); msg != "" {
			a.warn.warn(msg)
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
		a.warn.warn(fmt.Sprintf("workspace code is off: %v", err))
		return "", st
	}
	if a.snapshots == nil {
		a.snapshots = map[string]string{}
	}
	a.snapshots[m.Digest] = dir
	return dir, st
}

// trustState is the state of the workspace's code now, without warnings.
func (a *app) trustState() (trust.State, error) {
	m, err := trust.Scan(a.ws)
	if err != nil {
		return trust.State{Status: trust.StatusUntrusted, Manifest: &trust.Manifest{Workspace: a.ws}}, err
	}
	return a.trust.Check(m)
}

// trustDigest trusts the workspace's current code if its digest is still
// the one the user was shown; any other content stays untrusted.
func (a *app) trustDigest(digest string) (trust.State, error) {
	m, err := trust.Scan(a.ws)
	if err != nil {
		return trust.State{}, err
	}
	if m.Digest != digest {
		st, _ := a.trust.Check(m)
		return st, errTrustMoved
	}
	if err := grantAndKeep(a.trust, m, a.userDir); err != nil {
		return trust.State{}, err
	}
	return a.trust.Check(m)
}

var errTrustMoved = errors.New("the workspace's code changed after it was shown to you; review it again")

// removeSnapshots deletes the private copies of trusted code.
func (a *app) removeSnapshots() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for d, dir := range a.snapshots {
		os.RemoveAll(dir)
		delete(a.snapshots, d)
	}
}

// trustCommand lists the workspace's code and records the user's trust in
// exactly that content, or revokes it.
func trustCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero trust", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workspace := fs.String("workspace", "", "the workspace (default: the current directory)")
	revoke := fs.Bool("revoke", false, "forget the trust of this workspace: its code stops running")
	check := fs.Bool("check", false, "only list the code and whether it is trusted (exit 1 when it is not)")
	yes := fs.Bool("yes", false, "trust what is shown without asking (for scripts; the files are still shown)")
	helpOutput(fs, args, stdout)
	fs.Usage = func() {
		printUsage(fs, "  zero trust [--workspace DIR] [--yes] [--check | --revoke]",
			`Shows what in the workspace can run on this machine (extension scripts, .disabled switches, tool
scripts, their helper files, .mcp.json and what its servers run, knowledge, secrets.env): each file's
path, size and kind, with its content, or what changed since you last trusted it as a diff. Then asks
whether to trust exactly that content (y/N): any later change, by a git pull or by the agent, turns it
off again until you trust it again. The record is kept in your config directory, outside every
workspace. Without a terminal to ask on, --yes is needed.`,
			"  zero trust                  review and trust this workspace's code\n"+
				"  zero trust --check          only show it, and exit 1 when it is not trusted\n"+
				"  zero trust --yes --workspace ~/src/project   trust without asking (scripts)\n"+
				"  zero trust --revoke         stop running this workspace's code")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zero trust: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ws, err := resolveWorkspace(*workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	store := trust.NewStore(userConfigDir())
	if *revoke {
		had, err := store.Revoke(ws)
		if err == nil {
			err = os.RemoveAll(trustedCopyDir(userConfigDir(), ws))
		}
		switch {
		case err != nil:
			fmt.Fprintln(stderr, "zero:", err)
			return 1
		case had:
			fmt.Fprintf(stdout, "%s is no longer trusted: its code will not run.\n", ws)
		default:
			fmt.Fprintf(stdout, "%s was not trusted.\n", ws)
		}
		return 0
	}
	m, err := trust.Scan(ws)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	st, err := store.Check(m)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		if !*check {
			return 1
		}
	}
	if m.Empty() {
		fmt.Fprintf(stdout, "%s carries no code that Zero would run; nothing to trust.\n", ws)
		return 0
	}
	if *check || st.Runs() {
		printManifest(stdout, st)
	}
	switch {
	case *check && st.Runs():
		fmt.Fprintf(stdout, "\ntrusted since %s\n", st.Trusted.Local().Format("2006-01-02 15:04"))
		return 0
	case *check:
		fmt.Fprintf(stdout, "\n%s\n", st.Message())
		return 1
	case st.Runs():
		fmt.Fprintln(stdout, "\nalready trusted: nothing changed since", st.Trusted.Local().Format("2006-01-02 15:04"))
		return 0
	}
	if err := reviewCode(stdout, st, trustedCopyDir(userConfigDir(), ws)); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	if !*yes {
		fmt.Fprintf(stdout, "\nTrust %s of %s? What of them runs, runs on this machine with your permissions. [y/N] ", plural(len(m.Files), "file"), ws)
		answer, ok := readAnswer(stdin)
		switch {
		case !ok:
			fmt.Fprintln(stdout)
			fmt.Fprintln(stderr, "zero trust: nothing trusted: there is no one to answer (stdin gave no answer and is not a terminal); review the files above and run zero trust --yes to trust exactly them")
			return 1
		case answer != "y" && answer != "yes":
			fmt.Fprintln(stdout, "not trusted: nothing changed; the workspace's code stays off.")
			return 1
		}
	}
	if err := grantAndKeep(store, m, userConfigDir()); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\ntrusted (%s, recorded in %s). Any change to these files turns them off again.\n", short(m.Digest), store.Path())
	return 0
}

// readAnswer reads the person's answer, one line, lower-cased; ok is false
// when stdin ended without one (nothing to read: /dev/null, a closed pipe).
func readAnswer(stdin io.Reader) (string, bool) {
	if stdin == nil {
		return "", false
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", false
	}
	return strings.ToLower(strings.TrimSpace(line)), true
}

// maxReviewLines is how much of one file the review prints; the rest is
// named, and the file is in the workspace to read.
const maxReviewLines = 400

// reviewCode shows each acting file the way the user consents to it: its
// path, kind and size, and its content (the bytes that were hashed, from a
// snapshot), or, for a file that changed since the user last trusted the
// workspace, a unified diff against the copy kept then (copyDir).
func reviewCode(w io.Writer, st trust.State, copyDir string) error {
	m := st.Manifest
	dir, err := trust.Snapshot(m)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	now, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer now.Close()
	var before *os.Root // the copy kept when the user last trusted, if any
	if st.Status == trust.StatusChanged {
		if r, err := os.OpenRoot(filepath.Join(copyDir, "files")); err == nil {
			before = r
			defer r.Close()
		}
	}
	changed, was := map[string]string{}, map[string]string{}
	for _, c := range st.Changes {
		changed[c.Path], was[c.Path] = c.What, c.Was
	}
	for _, f := range m.Files {
		what := f.Kind
		if f.Point != "" {
			what += ", " + f.Point
		}
		if st.Status == trust.StatusChanged {
			what += ", " + cmp.Or(changed[f.Path], "unchanged")
		}
		name := filepath.FromSlash(f.Path)
		data, rerr := now.ReadFile(name)
		switch {
		case f.Link != "" && rerr != nil:
			fmt.Fprintf(w, "\n== %s  (%s, a link to %s that is not followed: nothing runs from it)\n", reviewable(f.Path), reviewable(what), reviewable(f.Link))
			continue
		case rerr != nil:
			return fmt.Errorf("review %s: %w", f.Path, rerr)
		}
		if fi, err := now.Stat(name); err == nil && fi.Mode().Perm()&0o100 != 0 {
			what += ", executable"
		}
		if f.Link != "" {
			what += ", a link to " + reviewable(f.Link)
		}
		fmt.Fprintf(w, "\n== %s  (%s, %s, %s)\n", reviewable(f.Path), reviewable(what), plural(len(data), "byte"), short(f.Digest))
		if st.Status == trust.StatusChanged && changed[f.Path] == "" {
			fmt.Fprintln(w, "   (unchanged since you trusted it)")
			continue
		}
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			fmt.Fprintln(w, "   (binary: not shown)")
			continue
		}
		text := string(data)
		if before != nil && changed[f.Path] == "changed" {
			// The diff is against what was trusted, or there is none: a
			// kept copy that is not what the record says (changed since by
			// anything running as you) is not believed.
			old, err := before.ReadFile(name)
			switch {
			case err != nil || !utf8.Valid(old):
			case trust.ContentDigest(old, false) != was[f.Path] && trust.ContentDigest(old, true) != was[f.Path]:
				fmt.Fprintln(w, "   (the copy kept when you trusted it is not what you trusted: the whole file follows)")
			default:
				text = udiff.Unified("trusted/"+f.Path, "now/"+f.Path, string(old), text)
			}
		}
		printCut(w, reviewable(text))
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			fmt.Fprintf(w, "\n== %s  (removed since you trusted it)\n", reviewable(c.Path))
		}
	}
	return nil
}

// maxReviewLine is how much of one line the review shows (in bytes).
const maxReviewLine = 1000

// printCut prints text indented, at most maxReviewLines lines of it, each
// cut after maxReviewLine bytes: a file of one endless line shows as much
// as a short one, and says what it did not show.
func printCut(w io.Writer, text string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if i == maxReviewLines {
			fmt.Fprintf(w, "   … %d more lines (read the file in the workspace before you trust it)\n", len(lines)-i)
			return
		}
		if len(l) > maxReviewLine {
			cut := maxReviewLine
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = fmt.Sprintf("%s … (%d more bytes on this line)", l[:cut], len(l)-cut)
		}
		fmt.Fprintln(w, "   "+l)
	}
}

// reviewable shows what would act on the terminal or hide in the text:
// control characters (see visible) and Unicode format characters such as
// bidirectional overrides, which can make code read other than it runs.
func reviewable(s string) string {
	s = visible(s)
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Cf, r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// plural is "1 byte", "2 bytes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// trustedCopyDir is where the copy of a workspace's code as the user last
// trusted it is kept, for the diff of the next review: in the user's config
// directory, one folder per workspace. The copies are never run (no file
// in them is executable).
func trustedCopyDir(userDir, ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join(userDir, "trusted", hex.EncodeToString(sum[:8]))
}

// grantAndKeep records the user's trust in exactly m and keeps a copy of
// its files for the diff of the next review. A copy that cannot be kept
// costs only that diff: the trust stands, and the next review shows whole
// files.
func grantAndKeep(st *trust.Store, m *trust.Manifest, userDir string) error {
	if err := st.Grant(m); err != nil {
		return err
	}
	dir := trustedCopyDir(userDir, m.Workspace)
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

// printManifest lists the acting files, marking what changed since the
// user last trusted the workspace.
func printManifest(w io.Writer, st trust.State) {
	changed := map[string]string{}
	for _, c := range st.Changes {
		changed[c.Path] = c.What
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tKIND\tPOINT\tDIGEST\t")
	for _, f := range st.Manifest.Files {
		note := changed[f.Path]
		if f.Link != "" {
			note = strings.TrimSpace(note + " → " + f.Link)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", reviewable(f.Path), reviewable(f.Kind), reviewable(f.Point), short(f.Digest), reviewable(note))
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			fmt.Fprintf(tw, "%s\t\t\t\tremoved\n", reviewable(c.Path))
		}
	}
	tw.Flush()
}

// trustSummary says in one line what may run of the workspace's code.
func trustSummary(st trust.State) string {
	switch st.Status {
	case trust.StatusNone:
		return "none (nothing in .zero/ can run)"
	case trust.StatusTrusted:
		return fmt.Sprintf("trusted (%d files, %s, since %s)", len(st.Manifest.Files), short(st.Manifest.Digest), st.Trusted.Local().Format("2006-01-02 15:04"))
	}
	return "off: " + st.Message()
}

// short is a digest's first 12 hex digits, enough to compare by eye.
func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

// hostTrust is the editor faces' server.Trust: each workspace's app
// decides for its own code.
type hostTrust struct{ h *host }

var _ server.Trust = hostTrust{}

// TrustState implements server.Trust.
func (t hostTrust) TrustState(roots []string) (server.TrustState, error) {
	a, err := t.h.appOf(roots)
	if err != nil {
		return server.TrustState{}, err
	}
	st, err := a.trustState()
	return serverTrust(st), err
}

// Grant implements server.Trust.
func (t hostTrust) Grant(roots []string, digest string) (server.TrustState, error) {
	a, err := t.h.appOf(roots)
	if err != nil {
		return server.TrustState{}, err
	}
	st, err := a.trustDigest(digest)
	if errors.Is(err, errTrustMoved) {
		err = server.ErrTrustMoved
	}
	if err == nil {
		a.logger.Info("workspace code trusted", "workspace", a.ws, "digest", digest, "files", len(st.Manifest.Files))
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
