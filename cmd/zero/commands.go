package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

// parseOnly parses a command's flags; it returns an exit status, or -1 to
// go on.
func parseOnly(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2
	}
	return -1
}

// profilesCommand lists the profiles every layer offers.
func profilesCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero profiles", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, false)
	if code := parseOnly(fs, args); code >= 0 {
		return code
	}
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	infos, err := a.loader.List()
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
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
	return 0
}

// promptCommand prints the system prompt an agent of a profile is given,
// with its token count.
func promptCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero prompt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, false)
	if code := parseOnly(fs, args); code >= 0 {
		return code
	}
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
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
	fs := flag.NewFlagSet("zero config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	if code := parseOnly(fs, args); code >= 0 {
		return code
	}
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	if err := a.cfg.Print(stdout); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	return 0
}
