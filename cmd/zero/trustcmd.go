package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/zeroagent/zero/app"
	"github.com/zeroagent/zero/instructions"
	"github.com/zeroagent/zero/termsafe"

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
	printInstructions(stdout, ws)
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
	if err := app.ReviewCode(stdout, st, app.TrustedCopyDir(app.UserConfigDir(), ws)); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	if !*yes {
		files := "1 file"
		if n := len(m.Files); n != 1 {
			files = fmt.Sprintf("%d files", n)
		}
		fmt.Fprintf(stdout, "\nTrust %s of %s? What of them runs, runs on this machine with your permissions. [y/N] ", files, ws)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Reviewable(f.Path), termsafe.Reviewable(f.Kind), termsafe.Reviewable(f.Point), app.Short(f.Digest), termsafe.Reviewable(note))
	}
	for _, c := range st.Changes {
		if c.What == "removed" {
			fmt.Fprintf(tw, "%s\t\t\t\tremoved\n", termsafe.Reviewable(c.Path))
		}
	}
	tw.Flush()
}

// printInstructions names the workspace's instructions for agents
// (AGENTS.md and the like): text for the agent's prompt, whatever is
// trusted, so the user sees what steers it beside the code.
func printInstructions(w io.Writer, ws string) {
	files := instructions.New("", ws).Files()
	if len(files) == 0 {
		return
	}
	fmt.Fprintln(w, "Instructions for the agent (text its system prompt includes, trusted or not; they run nothing):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range files {
		what := fmt.Sprintf("%d bytes", f.Size)
		switch {
		case f.Problem != "":
			what = "not read: " + f.Problem
		case f.Cut:
			what += fmt.Sprintf(", the first %d read", len(f.Text))
		}
		fmt.Fprintf(tw, "  %s\t%s\n", termsafe.Reviewable(f.Label), termsafe.Reviewable(what))
	}
	tw.Flush()
	fmt.Fprintln(w)
}
