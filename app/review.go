package app

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
	"github.com/zeroagent/zero/termsafe"
	"github.com/zeroagent/zero/trust"
)

// maxReviewLines is how much of one file the review prints; the rest is
// named, and the file is in the workspace to read.
const maxReviewLines = 400

// ReviewCode shows each acting file the way the user consents to it: its
// path, kind and size, and its content (the bytes that were hashed, from a
// snapshot), or, for a file that changed since the user last trusted the
// workspace, a unified diff against the copy kept then (copyDir).
func ReviewCode(w io.Writer, st trust.State, copyDir string) error {
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
			fmt.Fprintf(w, "\n== %s  (%s, a link to %s that is not followed: nothing runs from it)\n", termsafe.Reviewable(f.Path), termsafe.Reviewable(what), termsafe.Reviewable(f.Link))
			continue
		case rerr != nil:
			return fmt.Errorf("review %s: %w", f.Path, rerr)
		}
		if fi, err := now.Stat(name); err == nil && fi.Mode().Perm()&0o100 != 0 {
			what += ", executable"
		}
		if f.Link != "" {
			what += ", a link to " + termsafe.Reviewable(f.Link)
		}
		fmt.Fprintf(w, "\n== %s  (%s, %s, %s)\n", termsafe.Reviewable(f.Path), termsafe.Reviewable(what), plural(len(data), "byte"), Short(f.Digest))
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
		printCut(w, termsafe.Reviewable(text))
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			fmt.Fprintf(w, "\n== %s  (removed since you trusted it)\n", termsafe.Reviewable(c.Path))
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

// plural is "1 byte", "2 bytes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Defaults are the profile, chat model and sandbox a session of ws starts
// with ("?" for a sandbox not chosen yet); empty when ws's assembly cannot
// be had.
func (h *Host) Defaults(ws string) (profile, model, sandbox string) {
	a, err := h.App([]string{ws})
	if err != nil {
		return "", "", "?"
	}
	sandbox = "?"
	if a.Backend != nil {
		sandbox = a.Backend.Name()
	}
	return a.Config.Profile, a.Config.Models.Chat.Model, sandbox
}

// ReviewTrust writes what a question to trust ws's code with digest shows:
// each file's content, or its diff against the copy kept when it was last
// trusted (see ReviewCode). It reports false when ws's code is no longer
// the one digest names (the question would not grant it) or cannot be
// read.
func (h *Host) ReviewTrust(w io.Writer, ws, digest string) bool {
	a, err := h.App([]string{ws})
	if err != nil {
		return false
	}
	st, err := a.TrustState()
	if err != nil || st.Manifest == nil || st.Manifest.Digest != digest {
		return false
	}
	return ReviewCode(w, st, TrustedCopyDir(a.UserDir, a.Workspace)) == nil
}
