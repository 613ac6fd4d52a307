package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/store"
)

// openApp parses the flags of a command that takes no arguments and
// builds its app; when it returns nil the command is over with code.
func openApp(name string, args []string, withModel bool, stderr io.Writer) (a *app, code int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, withModel)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return nil, 2
	}
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return nil, 2
	}
	return a, 0
}

// profilesCommand lists the profiles every layer offers.
func profilesCommand(args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero profiles", args, false, stderr)
	if a == nil {
		return code
	}
	infos, listErr := a.loader.List() // the good ones are listed even when some are broken
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLAYER\tTITLE\tPATH")
	for _, in := range infos {
		marker := ""
		if in.Name == a.cfg.Profile {
			marker = " *"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", in.Name, marker, in.Layer, in.Title, in.Path)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	fmt.Fprintf(stdout, "\n* the default profile (%s)\n", a.cfg.Origin("profile"))
	if st, err := a.trustState(); err != nil {
		fmt.Fprintf(stdout, "workspace code: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "workspace code: %s\n", trustSummary(st))
	}
	for _, in := range infos {
		p, err := a.loader.Load(in.Name)
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", in.Name, err)
			continue
		}
		for _, d := range p.Diagnostics {
			fmt.Fprintf(stdout, "%s: note: %s\n", in.Name, d)
		}
	}
	// After the list, which is what one looks at to choose another.
	if code := a.profileGate(stderr); code != 0 {
		return code
	}
	if listErr != nil {
		fmt.Fprintln(stderr, "zero:", listErr)
		return 1
	}
	return 0
}

// promptCommand prints the system prompt an agent of a profile is given,
// with its token count.
func promptCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero prompt", args, false, stderr)
	if a == nil {
		return code
	}
	if code := a.profileGate(stderr); code != 0 {
		return code
	}
	defer a.close() // the snapshot of trusted workspace code
	// The memory's tools and behaviour rules are part of the prompt.
	if path, err := storePath(); err == nil {
		if st, err := store.Open(path); err == nil {
			defer st.Close()
			a.initMemory(st)
		} else if store.IsDamaged(err) {
			fmt.Fprintln(stderr, "zero: warning:", damagedStore(path, err)+"; the prompt is printed without the memory's")
		}
	}
	var warnings []string
	sess, err := a.session(func(e loop.Event) {
		if e.Type == loop.EventWarning {
			warnings = append(warnings, e.Text)
		}
	}, false)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	text, err := sess.Agent0().SystemPrompt(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	fmt.Fprintln(stdout, text)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "zero: warning:", w)
	}
	fmt.Fprintf(stderr, "zero: profile %s: %d tokens (cl100k), %d bytes\n", a.cfg.Profile, llm.CountTokens(text), len(text))
	return 0
}

// configCommand prints the effective configuration and where each value
// came from.
func configCommand(args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero config", args, true, stderr)
	if a == nil {
		return code
	}
	if code := a.profileGate(stderr); code != 0 {
		return code
	}
	if err := a.cfg.Print(stdout); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	return 0
}

// sandboxCommand manages the Docker containers Zero keeps per workspace.
func sandboxCommand(args []string, stdout, stderr io.Writer) int {
	usage := "usage: zero sandbox ls | zero sandbox rm [--all] [--workspace DIR]"
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	sub, args := args[0], args[1:]
	all := false
	if sub == "rm" {
		if i := slices.Index(args, "--all"); i >= 0 {
			all, args = true, slices.Delete(args, i, i+1)
		}
	}
	if sub != "ls" && sub != "rm" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	a, code := openApp("zero sandbox "+sub, args, false, stderr)
	if a == nil {
		return code
	}
	d, err := a.docker()
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var list []sandbox.ContainerInfo
	if sub == "ls" {
		list, err = d.ListContainers(ctx)
	} else {
		list, err = d.RemoveContainers(ctx, "", all)
	}
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	verb := ""
	if sub == "rm" {
		verb = "removed "
	}
	fmt.Fprintln(tw, "NAME\tSTATE\tIMAGE\tWORKSPACE")
	for _, c := range list {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", verb, c.Name, c.State, c.Image, c.Workspace)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}
