// Command zero is Agent Zero's agent as one binary that editors drive.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	harden()
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `zero: Agent Zero's agent for editors and terminals.

Usage:
  zero chat [flags]          talk with the agent in the terminal, message after message
                             (zero alone on a terminal does the same)
  zero run [flags] MESSAGE   run one task in the current directory and watch it work
  zero acp                   serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs)
  zero mcp [--http ADDR]     serve MCP on stdio, or streamable HTTP on loopback (Claude, Cursor, VS Code)
  zero lsp                   serve the LSP-style session on stdio (the VS Code extension)
  zero profiles              list the agent profiles and where they come from
  zero prompt [--profile P]  print the system prompt a profile's agent is given
  zero config                print the effective configuration and where each value came from
  zero trust [--revoke]      list the workspace's code (extensions, tools) and trust exactly that content
  zero doctor                check the model endpoint, the sandbox, the profiles and the config
  zero sandbox ls|rm [--all] list or remove the Docker containers Zero keeps per workspace
  zero sessions [ls|show|export|rm] list, read or delete the stored sessions
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
		if isTerminalIn(stdin) && isTTY(stdout) {
			return chatCommand(ctx, nil, stdin, stdout, stderr)
		}
		fmt.Fprint(stderr, usage)
		return 2
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
		return trustCommand(args[1:], stdout, stderr)
	case "doctor":
		return doctorCommand(ctx, args[1:], stdout, stderr)
	case "sandbox":
		return sandboxCommand(args[1:], stdout, stderr)
	case "sessions":
		return sessionsCommand(args[1:], stdout, stderr)
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
