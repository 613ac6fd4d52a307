package app

import (
	"log/slog"
	"path/filepath"

	"github.com/zeroagent/zero/commands"
	"github.com/zeroagent/zero/server"
)

// commandBook finds the saved prompts of a workspace for the faces: the
// user's own first (~/.config/zero/commands, then Claude Code's
// ~/.claude/commands and Gemini CLI's ~/.gemini/commands), so that a
// cloned repository cannot take the name of one the user relies on, then
// the workspace's (.zero/commands, .claude/commands, .gemini/commands). The folders are read on every use: a command added
// shows at once.
type commandBook struct {
	userDir, home string
	logger        *slog.Logger
}

func newCommandBook(env Env, logger *slog.Logger) commandBook {
	return commandBook{userDir: env.UserConfigDir(), home: env.Home(), logger: logger}
}

func (b commandBook) dirs(roots []string) []commands.Dir {
	var dirs []commands.Dir
	if b.userDir != "" {
		label := filepath.Join(b.userDir, "commands")
		if rel, err := filepath.Rel(b.home, label); b.home != "" && err == nil && filepath.IsLocal(rel) {
			label = "~/" + filepath.ToSlash(rel)
		}
		dirs = append(dirs, commands.Dir{Base: b.userDir, Sub: "commands", Label: label})
	}
	if b.home != "" {
		dirs = append(dirs,
			commands.Dir{Base: b.home, Sub: ".claude/commands", Label: "~/.claude/commands"},
			commands.Dir{Base: b.home, Sub: ".gemini/commands", Label: "~/.gemini/commands"})
	}
	if len(roots) > 0 {
		dirs = append(dirs,
			commands.Dir{Base: roots[0], Sub: ".zero/commands", Label: ".zero/commands"},
			commands.Dir{Base: roots[0], Sub: ".claude/commands", Label: ".claude/commands"},
			commands.Dir{Base: roots[0], Sub: ".gemini/commands", Label: ".gemini/commands"})
	}
	return dirs
}

func (b commandBook) load(roots []string) []commands.Command {
	cmds, warns := commands.Load(server.Builtin, b.dirs(roots)...)
	for _, w := range warns {
		b.logger.Debug("command file skipped", "file", w.Source, "reason", w.Reason)
	}
	return cmds
}

// List implements server.Commands.
func (b commandBook) List(roots []string) []server.Command {
	var out []server.Command
	for _, c := range b.load(roots) {
		out = append(out, server.Command{Name: c.Name, Description: c.Description, Hint: c.ArgumentHint, Source: c.Source})
	}
	return out
}

// Expand implements server.Commands.
func (b commandBook) Expand(roots []string, name, args string) (server.Expansion, bool) {
	c, ok := commands.Find(b.load(roots), name)
	if !ok {
		return server.Expansion{}, false
	}
	return server.Expansion{Text: c.Expand(args), Tools: c.Tools()}, true
}
