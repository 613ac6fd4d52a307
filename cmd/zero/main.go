// Command zero is Agent Zero's agent as one binary that editors drive.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zeroagent/zero/server/term"

	"github.com/zeroagent/zero/app"
)

func main() {
	app.Harden()
	app.Version = buildInfo().version
	code := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	for _, stop := range atExit {
		stop()
	}
	os.Exit(code)
}

// atExit are what a profiling build (profile_on.go) finishes before the
// process exits.
var atExit []func()

const usage = `zero: Agent Zero's agent for editors and terminals.

Usage:
  zero chat [flags]          talk with the agent in the terminal, message after message
                             (zero alone on a terminal does the same, and zero [flags] with chat's flags)
  zero run [flags] MESSAGE   run one task in the current directory and watch it work
  zero acp                   serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs)
  zero mcp [--http ADDR]     serve MCP on stdio, or streamable HTTP on loopback (Claude, Cursor, VS Code)
  zero mcp login|logout NAME log in to (or out of) an MCP server of yours that is behind OAuth
  zero lsp                   serve the LSP-style session on stdio (the VS Code extension)
  zero profiles              list the agent profiles and where they come from
  zero prompt [--profile P]  print the system prompt a profile's agent is given
  zero config                print the effective configuration and where each value came from
  zero trust [--yes|--revoke] show the workspace's code (extensions, tools) and ask to trust exactly that content
  zero doctor                check the model endpoint, the sandbox, the profiles and the config
  zero sandbox [ls|rm [--all]] list or remove the Docker containers Zero keeps per workspace
  zero sessions [ls|show|export|rm|checkpoints|undo|rewind|fork|compact] list, read, delete, rewind or fork the stored sessions
  zero memory [ls|search|save|rm|import|export] the agent's memory and knowledge
  zero store [check|recover] check the session store for damage, or recover a damaged one (kept aside)
  zero --version             print the version, the commit and its date

Run 'zero COMMAND --help' for the flags of a command.

The model is any OpenAI-compatible endpoint (or models.chat in ~/.config/zero/config.yaml):
  ZERO_MODEL       the chat model (for example gpt-4.1-mini, or qwen2.5-coder:14b on Ollama)
  OPENAI_API_KEY   the API key (not needed for a local server)
  OPENAI_BASE_URL  the endpoint (default https://api.openai.com/v1; Ollama: http://localhost:11434/v1)
`

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if app.IsTerminalIn(stdin) && term.IsTTY(stdout) {
			return chatCommand(ctx, nil, stdin, stdout, stderr)
		}
		fmt.Fprint(stderr, usage)
		return 2
	}
	if isChatFlag(args[0]) {
		// zero --sandbox local: the chat with flags, as zero alone is the chat.
		return chatCommand(ctx, args, stdin, stdout, stderr)
	}
	if cmd, ok := faceHelp[args[0]]; ok && helpAsked(args[1:]) && !isMCPAuth(args) {
		return cmd.print(ctx, args[0], stdin, stdout)
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, buildInfo())
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "run":
		return runCommand(ctx, args[1:], stdin, stdout, stderr)
	case "chat":
		return chatCommand(ctx, args[1:], stdin, stdout, stderr)
	case "profiles":
		return profilesCommand(args[1:], stdout, stderr)
	case "prompt":
		return promptCommand(ctx, args[1:], stdout, stderr)
	case "config":
		return configCommand(args[1:], stdout, stderr)
	case "trust":
		return trustCommand(args[1:], stdin, stdout, stderr)
	case "doctor":
		return doctorCommand(ctx, args[1:], stdout, stderr)
	case "sandbox":
		return sandboxCommand(args[1:], stdout, stderr)
	case "sessions":
		return sessionsCommand(ctx, args[1:], stdin, stdout, stderr)
	case "memory":
		return memoryCommand(args[1:], stdout, stderr)
	case "store":
		return storeCommand(args[1:], stdout, stderr)
	case "acp", "mcp", "lsp":
		if face := faces[args[0]]; face != nil {
			return face(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "zero: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// isChatFlag reports whether a first argument is a flag of the chat rather
// than one of zero's own (--version, --help).
func isChatFlag(arg string) bool {
	if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
		return false
	}
	switch arg {
	case "-h", "-help", "--help", "-version", "--version":
		return false
	}
	return true
}

// helpAsked reports whether args ask for help (-h, -help, --help) before
// a "--" that would make the rest a message.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// helpOutput is where a command's flags print: stdout when the person asked
// for help (it is the answer), stderr when the usage follows a mistake.
func helpOutput(fs *flag.FlagSet, args []string, stdout io.Writer) {
	if helpAsked(args) {
		fs.SetOutput(stdout)
	}
}

// printUsage writes a help page: the usage lines, what the command does,
// each flag with what it does, and examples. It writes to the flag set's
// output (see helpOutput).
func printUsage(fs *flag.FlagSet, usage, about, examples string) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage:\n%s\n\n%s\n", strings.TrimRight(usage, "\n"), strings.TrimRight(about, "\n"))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(examples, "\n"))
}

// facePage is the help of a command whose flags another file defines (the
// chat and the editor faces): what it does and examples, around the flag
// list the command itself prints.
type facePage struct{ about, examples string }

var faceHelp = map[string]facePage{
	"chat": {
		about: "Talks with the agent in the terminal, message after message; /help at the prompt lists the commands.\n" +
			"zero alone on a terminal starts it too, and so does zero with chat's flags (zero --sandbox local).",
		examples: "  zero chat                          talk in the current directory\n" +
			"  zero --sandbox local --continue    go on with this workspace's last session, commands on this machine",
	},
	"acp": {
		about: "Serves the Agent Client Protocol on stdin and stdout, for editors that start agents (Zed, JetBrains,\n" +
			"Neovim, Emacs). Logs go to stderr; stdout carries only the protocol.",
		examples: "  zero acp --workspace ~/src/project    what an editor runs (editors/ holds each editor's entry)",
	},
	"mcp": {
		about: "Serves the Model Context Protocol on stdin and stdout (or streamable HTTP on loopback with --http),\n" +
			"so an MCP client (Claude, Cursor, VS Code) can give the agent tasks. Logs go to stderr.\n\n" +
			"zero mcp login [--scope S]... NAME logs in to an MCP server of yours behind OAuth (mcp_servers in\n" +
			"config.yaml): the authorization page opens in your browser and the sessions then use the tokens;\n" +
			"zero mcp logout NAME forgets them. They say everything on stderr.",
		examples: "  zero mcp --workspace ~/src/project\n  zero mcp --http 127.0.0.1:7777\n  zero mcp login github",
	},
	"lsp": {
		about:    "Serves the LSP-style session on stdin and stdout for the VS Code extension. Logs go to stderr.",
		examples: "  zero lsp --workspace ~/src/project",
	},
}

// print writes the page of command name: its description, the flags as
// the command lists them (its own -h, which ends there), and examples.
func (p facePage) print(ctx context.Context, name string, stdin io.Reader, stdout io.Writer) int {
	var flags bytes.Buffer
	switch name {
	case "chat":
		chatCommand(ctx, []string{"-h"}, stdin, io.Discard, &flags)
	default:
		if face := faces[name]; face != nil {
			face(ctx, []string{"-h"}, stdin, io.Discard, &flags)
		}
	}
	// Only the flag lines: the command's own header would repeat the
	// description.
	text := flags.String()
	if i := strings.Index(text, "\n  -"); i >= 0 {
		text = text[i+1:]
	} else {
		text = ""
	}
	fmt.Fprintf(stdout, "Usage:\n  zero %s [flags]\n\n%s\n", name, p.about)
	if text != "" {
		fmt.Fprintf(stdout, "\nFlags:\n%s", text)
	}
	fmt.Fprintf(stdout, "\nExamples:\n%s\n", p.examples)
	return 0
}
