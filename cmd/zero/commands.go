package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/sandbox"
	"github.com/zeroagent/zero/store"
)

// helpText is a command's help page (see printUsage).
type helpText struct{ usage, about, examples string }

// Help pages of the commands built with openApp.
var (
	profilesHelp = helpText{
		usage: "  zero profiles [--workspace DIR]",
		about: "Lists the agent profiles (Zero's own, yours in ~/.config/zero/agents, the workspace's in .zero/agents)\n" +
			"with the layer each comes from; * marks the default. Says whether the workspace's code may run, and\n" +
			"what is wrong with a profile that does not load.",
		examples: "  zero profiles\n  zero profiles --workspace ~/src/project",
	}
	promptHelp = helpText{
		usage: "  zero prompt [--profile P] [--workspace DIR]",
		about: "Prints the system prompt the agent of a profile is given in this workspace (on stdout), and its size\n" +
			"in tokens (on stderr): what the model reads before your first message.",
		examples: "  zero prompt\n  zero prompt --profile developer | less",
	}
	configHelp = helpText{
		usage: "  zero config [flags]",
		about: "Prints the configuration in force and where each value comes from: a flag, the environment, your\n" +
			"config.yaml, the workspace's .zero/config.yaml, or Zero's default. Flags show what they would change.",
		examples: "  zero config\n  zero config --sandbox local --model gpt-4.1-mini",
	}
	doctorHelp = helpText{
		usage: "  zero doctor [flags]",
		about: "Checks what the configured setup needs, in order: the configuration, the model endpoint (it answers,\n" +
			"takes the key, serves the model), the profiles, the sandbox, the workspace's code, the session store\n" +
			"and the MCP servers; says for each what is wrong and how to fix it. Exits 0 when all is in order.",
		examples: "  zero doctor\n  OPENAI_BASE_URL=http://localhost:11434/v1 ZERO_MODEL=qwen2.5-coder:14b zero doctor",
	}
	sandboxHelp = helpText{
		usage: "  zero sandbox ls [--workspace DIR]\n  zero sandbox rm [--all] [--workspace DIR]",
		about: "Lists (ls) or removes (rm) the Docker containers Zero keeps, one per workspace, for the agent's\n" +
			"commands. rm removes this workspace's container, killing what runs in it; the next command starts a\n" +
			"new one. The workspace's files are not touched.",
		examples: "  zero sandbox ls\n  zero sandbox rm --workspace ~/src/project\n  zero sandbox rm --all",
	}
)

// openApp parses the flags of a command that takes no arguments and
// builds its app; when it returns nil the command is over with code. extra
// adds the command's own flags.
func openApp(name string, args []string, withModel bool, help helpText, stdout, stderr io.Writer, extra ...func(*flag.FlagSet)) (a *app.App, code int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, withModel)
	for _, f := range extra {
		f(fs)
	}
	helpOutput(fs, args, stdout)
	fs.Usage = func() { printUsage(fs, help.usage, help.about, help.examples) }
	if code, ok := parseNoArgs(fs, args, ""); !ok {
		return nil, code
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
	a, code := openApp("zero profiles", args, false, profilesHelp, stdout, stderr)
	if a == nil {
		return code
	}
	infos, listErr := a.Loader.List() // the good ones are listed even when some are broken
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLAYER\tTITLE\tPATH")
	for _, in := range infos {
		marker := ""
		if in.Name == a.Config.Profile {
			marker = " *"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", in.Name, marker, in.Layer, in.Title, in.Path)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	fmt.Fprintf(stdout, "\n* the default profile (%s)\n", a.Config.Origin("profile"))
	if st, err := a.TrustState(); err != nil {
		fmt.Fprintf(stdout, "workspace code: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "workspace code: %s\n", app.TrustSummary(st))
	}
	for _, in := range infos {
		p, err := a.Loader.Load(in.Name)
		if err != nil {
			fmt.Fprintf(stdout, "%s: %v\n", in.Name, err)
			continue
		}
		for _, d := range p.Diagnostics {
			fmt.Fprintf(stdout, "%s: note: %s\n", in.Name, d)
		}
	}
	// After the list, which is what one looks at to choose another.
	if code := a.ProfileGate(stderr); code != 0 {
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
	a, code := openApp("zero prompt", args, false, promptHelp, stdout, stderr)
	if a == nil {
		return code
	}
	if code := a.ProfileGate(stderr); code != 0 {
		return code
	}
	defer a.Close() // the snapshot of trusted workspace code
	// The memory's tools and behaviour rules are part of the prompt.
	if path, err := app.StorePath(); err == nil {
		if st, err := store.Open(path); err == nil {
			defer st.Close()
			a.InitMemory(st)
		} else if store.IsDamaged(err) {
			fmt.Fprintln(stderr, "zero: warning:", app.DamagedStore(path, err)+"; the prompt is printed without the memory's")
		}
	}
	var warnings []string
	sess, err := a.Session(func(e loop.Event) {
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
	fns := sess.Agent0().Functions(ctx)
	tokens, size := llm.CountTokens(text), len(text)
	if len(fns) > 0 {
		// With native tool calls the tools are not in the prompt but sent
		// beside it, each with its description and schema.
		fmt.Fprintln(stdout, "\n# Functions (native tool calls)")
		for _, f := range fns {
			fmt.Fprintf(stdout, "\n## %s\n%s\nparameters: %s\n", f.Name, f.Description, f.Parameters)
			part := f.Name + f.Description + string(f.Parameters)
			tokens, size = tokens+llm.CountTokens(part), size+len(part)
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "zero: warning:", w)
	}
	protocol := "Agent Zero's JSON tool requests"
	if len(fns) > 0 {
		protocol = fmt.Sprintf("native tool calls: %d functions, counted in", len(fns))
	}
	fmt.Fprintf(stderr, "zero: profile %s: %d tokens (cl100k), %d bytes; %s\n", a.Config.Profile, tokens, size, protocol)
	return 0
}

// configCommand prints the effective configuration and where each value
// came from.
func configCommand(args []string, stdout, stderr io.Writer) int {
	a, code := openApp("zero config", args, true, configHelp, stdout, stderr)
	if a == nil {
		return code
	}
	if code := a.ProfileGate(stderr); code != 0 {
		return code
	}
	if err := printConfig(stdout, a.Config); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}
	return 0
}

// sandboxCommand manages the Docker containers Zero keeps per workspace.
func sandboxCommand(args []string, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	all := false
	extra := func(fs *flag.FlagSet) {
		if sub == "rm" || sub == "" {
			fs.BoolVar(&all, "all", false, "rm: remove the containers of every workspace, not only this one's")
		}
	}
	if sub != "ls" && sub != "rm" {
		if sub == "" && helpAsked(args) {
			openApp("zero sandbox", args, false, sandboxHelp, stdout, stderr, extra)
			return 0
		}
		if sub == "" {
			fmt.Fprintln(stderr, "zero sandbox: want ls or rm")
		} else {
			fmt.Fprintf(stderr, "zero sandbox: unknown subcommand %q: want ls or rm\n", sub)
		}
		fmt.Fprintf(stderr, "\nUsage:\n%s\n(zero sandbox --help says more)\n", sandboxHelp.usage)
		return 2
	}
	a, code := openApp("zero sandbox "+sub, args, false, sandboxHelp, stdout, stderr, extra)
	if a == nil {
		return code
	}
	d, err := a.Docker()
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
	if len(list) == 0 {
		if sub == "ls" {
			fmt.Fprintln(stdout, "no sandbox containers")
		} else {
			fmt.Fprintln(stdout, "no sandbox container to remove")
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tIMAGE\tWORKSPACE")
	for _, c := range list {
		state := c.State
		if sub == "rm" { // what it is now, and what it was
			state = "removed (was " + cmp.Or(c.State, "unknown") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, state, c.Image, c.Workspace)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}
