package servertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zeroagent/zero/server"
)

// ToolReply is a model reply asking for a tool, in the agent's JSON
// protocol; the headline is "H: " + thought.
func ToolReply(thought, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"thoughts": []string{thought}, "headline": "H: " + thought, "tool_name": tool, "tool_args": args})
	return string(b)
}

// Answer is a model reply that ends the run with text.
func Answer(text string) string {
	return ToolReply("answering", "response", map[string]any{"text": text})
}

// Command is a model reply running code in the terminal.
func Command(thought, code string) string {
	return ToolReply(thought, "code_execution_tool", map[string]any{"runtime": "terminal", "code": code})
}

// AskCommands is a policy that asks before every command.
func AskCommands() *server.Policy {
	return &server.Policy{Default: server.Auto, Rules: []server.Rule{{Tool: "code_execution_tool", Decision: server.Ask}}}
}

// Running reports whether a process whose command line holds arg runs on
// this machine, in a sandbox's namespaces or not (its pid there is not the
// host's): tests give the commands they watch an argument of their own.
func Running(arg string) bool {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), arg) {
			return true
		}
	}
	return false
}
