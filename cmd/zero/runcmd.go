package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server/term"
	"github.com/zeroagent/zero/termsafe"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/server"
)

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zero run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	common := addCommonFlags(fs, true)
	jsonOut := fs.Bool("json", false, "print one JSON event per line instead of the live view")
	trustCode := fs.Bool("trust", false, "trust the workspace's code (extensions, tools) as it is now without asking, listing it on stderr (zero trust shows each file and asks)")
	cont := fs.Bool("continue", false, "continue the last session of this workspace (zero sessions lists them)")
	sessionID := fs.String("session", "", "continue the stored session with this id, or a prefix of it that names one session (zero sessions lists them)")
	var attach attachFlag
	fs.Var(&attach, "attach", "attach the image `FILE` of the workspace (PNG, JPEG, GIF, WebP or BMP; relative to the workspace) to the message; repeat it for several")
	helpOutput(fs, args, stdout)
	fs.Usage = func() {
		printUsage(fs, "  zero run [flags] MESSAGE",
			"Runs one task in the workspace and shows it live: the agent's thoughts, its commands and their output,\n"+
				"and its answer. Exits 0 when the agent answered, 1 when the run failed, 130 when cancelled (Ctrl-C).\n"+
				"Flags may stand before or after the message; after -- everything is the message.",
			"  zero run \"list the Go files here and count their lines\"\n"+
				"  zero run --sandbox local --continue \"now add a test for it\"\n"+
				"  zero run --attach screenshot.png \"why is the button cut off?\"\n"+
				"  zero run --json \"what does main.go do?\" | jq -c 'select(.type == \"response\")'")
	}
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	message := strings.TrimSpace(strings.Join(words, " "))
	if message == "" && len(attach) == 0 {
		fmt.Fprintln(stderr, "zero run: no message: say what the agent should do, e.g. zero run \"list the Go files here\"")
		return 2
	}
	llm.WarmTokenizer() // on the other core while the app and sandbox open
	a, err := newApp(common, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	// The images are read before anything else is done: a file that is no
	// image, or not the workspace's, ends the command before a question, a
	// sandbox or a model call.
	input, err := attachInput(a.Workspace, message, attach)
	if err != nil {
		fmt.Fprintln(stderr, "zero run:", termsafe.Visible(err.Error()))
		a.Close()
		return app.ExitUsage
	}
	if code := a.Preflight(common.explicit("workspace"), stdin, stderr); code != 0 {
		return code
	}
	interactive := app.IsTerminalIn(stdin)
	if a.Config.Approval == "ask" && !interactive {
		// Running without asking when the user asked to be asked would be
		// worse than not running.
		fmt.Fprintf(stderr, "zero: approval \"ask\" (%s): zero run asks on the terminal, and stdin is not one; use an editor (zero acp, mcp or lsp) or --approval auto\n", a.Config.Origin("approval"))
		return 2
	}
	if *trustCode {
		if st, err := a.TrustState(); err != nil {
			fmt.Fprintln(stderr, "zero:", err)
			return 1
		} else if !st.Runs() && !st.Manifest.Empty() {
			printManifest(stderr, st)
			if _, err := a.TrustDigest(st.Manifest.Digest); err != nil {
				fmt.Fprintln(stderr, "zero:", err)
				return 1
			}
			fmt.Fprintf(stderr, "zero: trusted this workspace's code (%s)\n", app.Short(st.Manifest.Digest))
		}
	}
	a.AskWindow("", "") // while the sandbox opens
	if err := a.OpenSandbox(ctx); err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 1
	}

	if *cont && *sessionID != "" {
		fmt.Fprintln(stderr, "zero run: --continue and --session both choose a session; give one")
		return 2
	}
	h := app.NewHostWith(ctx, a) // closes a
	defer h.Close(closeGrace)
	sess, since, err := term.RunSession(ctx, h.Manager, h.Workspace, *cont, *sessionID)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		if errors.Is(err, app.ErrNoModel) || errors.Is(err, app.ErrNoKey) || errors.Is(err, profiles.ErrNoProfile) || errors.Is(err, server.ErrNotFound) || errors.Is(err, server.ErrAmbiguous) {
			return 2
		}
		return 1
	}
	return term.Run{Manager: h.Manager, Session: sess, Since: since, JSON: *jsonOut, Interactive: interactive, Color: app.IsTerminal(stdout),
		In: stdin, Out: stdout, Err: stderr, Logger: a.Logger}.PromptInput(ctx, input)
}

// attachFlag is --attach, given once per file.
type attachFlag []string

func (f *attachFlag) String() string { return strings.Join(*f, ", ") }

func (f *attachFlag) Set(path string) error {
	if strings.TrimSpace(path) == "" {
		return errors.New("no file named")
	}
	*f = append(*f, path)
	return nil
}

// attachInput is the message of zero run: its text and the images of
// files, each read from the workspace ws (a path relative to it; a link
// leading out is refused) and prepared for the model. The error names the
// file and says what is wrong with it.
func attachInput(ws, text string, files []string) (loop.Input, error) {
	if len(files) == 0 {
		return loop.Input{Text: text}, nil
	}
	if len(files) > loop.MaxInputImages {
		return loop.Input{}, fmt.Errorf("--attach: %d files, at most %d images go with one message", len(files), loop.MaxInputImages)
	}
	atts := make([]server.Attachment, 0, len(files))
	for _, f := range files {
		att, err := server.AttachFile([]string{ws}, f)
		if err != nil {
			return loop.Input{}, err
		}
		atts = append(atts, att)
	}
	in, err := server.Attach(text, atts)
	if err != nil {
		return loop.Input{}, fmt.Errorf("--attach: %w", err)
	}
	return in, nil
}

// parseInterspersed parses flags wherever they stand, so that
// `zero run "task" --json` works as people type it; after "--" everything
// is message.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if args = fs.Args(); len(args) == 0 {
			return append(words, tail...), nil
		}
		words, args = append(words, args[0]), args[1:]
	}
}
