package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/zeroagent/zero/app"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/zeroagent/zero/trust"
)

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
	ws, err := app.ResolveWorkspace(*workspace)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	store := trust.NewStore(app.UserConfigDir())
	if *revoke {
		had, err := store.Revoke(ws)
		if err == nil {
			err = os.RemoveAll(app.TrustedCopyDir(app.UserConfigDir(), ws))
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
	if err := reviewCode(stdout, st, app.TrustedCopyDir(app.UserConfigDir(), ws)); err != nil {
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
	if err := app.GrantAndKeep(store, m, app.UserConfigDir()); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\ntrusted (%s, recorded in %s). Any change to these files turns them off again.\n", app.Short(m.Digest), store.Path())
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
		fmt.Fprintf(w, "\n== %s  (%s, %s, %s)\n", reviewable(f.Path), reviewable(what), plural(len(data), "byte"), app.Short(f.Digest))
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", reviewable(f.Path), reviewable(f.Kind), reviewable(f.Point), app.Short(f.Digest), reviewable(note))
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			fmt.Fprintf(tw, "%s\t\t\t\tremoved\n", reviewable(c.Path))
		}
	}
	tw.Flush()
}
