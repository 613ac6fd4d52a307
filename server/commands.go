package server

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// Command is a saved prompt offered as a slash command (a workspace's
// .claude/commands/review.md is /review), as the faces list it.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Hint        string `json:"hint,omitempty"`   // what the arguments are ("[file] [focus]")
	Source      string `json:"source,omitempty"` // the file it comes from
}

// Expansion is a command made a message: the text the agent gets, and
// the tools it may use for it (nil: any; the command narrows, never
// widens, and the approval policy still decides each call).
type Expansion struct {
	Text  string
	Tools []string
}

// Commands finds the saved prompts of a workspace (Options.Commands).
// Builtin names the faces' own commands, which win over a file.
type Commands interface {
	// List is the commands of the workspace roots (the first the main
	// one), sorted by name.
	List(roots []string) []Command
	// Expand is the command name of roots with args in place; ok is false
	// when there is no such command.
	Expand(roots []string, name, args string) (e Expansion, ok bool)
}

// Builtin are the slash commands the faces handle themselves; a saved
// prompt of one of these names is not offered.
var Builtin = []string{"reset", "profile", "plan", "act", "pause", "resume", "trust", "memory",
	"undo", "rewind", "compact", "fork",
	"help", "quit", "exit", "q", "new", "clear", "sessions", "cost", "usage", "load"} // the last are zero chat's

// Commands lists the saved prompts of the session's workspace (none
// without Options.Commands).
func (s *Session) Commands() []Command {
	if s.commands == nil {
		return nil
	}
	return s.commands.List(s.Spec().Roots)
}

// RunCommand runs the saved prompt name with args as the user's message,
// the agent limited for that run to the tools the command names (if it
// names any): the broker refuses any other call before every rule. It
// does not intervene in a run going on (loop.ErrBusy): a narrowing cannot
// apply to half a run. ok is false when there is no such command.
func (s *Session) RunCommand(ctx context.Context, name, args string) (res RunResult, ok bool, err error) {
	run, _, ok, err := s.startCommand(ctx, name, args)
	if run == nil {
		return RunResult{}, ok, err
	}
	return run(), true, nil
}

// SendCommand is RunCommand without waiting, as Send is Prompt: it starts
// the run in the background and returns its number.
func (s *Session) SendCommand(name, args string) (n int, ok bool, err error) {
	run, n, ok, err := s.startCommand(context.Background(), name, args)
	if run == nil {
		return 0, ok, err
	}
	go run() // owned by s.wg (begin added it), awaited by close
	return n, true, nil
}

// ExpandCommand is the saved command name of the session's workspace
// with args in place; ok is false when there is no such command.
func (s *Session) ExpandCommand(name, args string) (e Expansion, ok bool) {
	if s.commands == nil {
		return Expansion{}, false
	}
	return s.commands.Expand(s.Spec().Roots, name, args)
}

// SendExpansion is SendCommand for a command already expanded (a face
// that must know the text the run starts with).
func (s *Session) SendExpansion(name string, e Expansion) (n int, err error) {
	run, n, err := s.startExpansion(context.Background(), name, e)
	if err != nil {
		return 0, err
	}
	go run() // owned by s.wg (begin added it), awaited by close
	return n, nil
}

// startCommand begins the run of a saved command and returns what runs
// it (nil when it does not run: no such command, or err).
func (s *Session) startCommand(ctx context.Context, name, args string) (run func() RunResult, n int, ok bool, err error) {
	e, ok := s.ExpandCommand(name, args)
	if !ok {
		return nil, 0, false, nil
	}
	run, n, err = s.startExpansion(ctx, name, e)
	return run, n, true, err
}

func (s *Session) startExpansion(ctx context.Context, name string, e Expansion) (run func() RunResult, n int, err error) {
	if e.Tools != nil && s.broker == nil {
		return nil, 0, fmt.Errorf("session %s: /%s names its tools: %w without an approval broker", s.spec.ID, name, ErrUnsupported)
	}
	rctx, cancel, n, err := s.begin(ctx, loop.Input{Text: e.Text}, true)
	if err != nil {
		return nil, 0, fmt.Errorf("/%s: %w (send it when the run ends)", name, err)
	}
	if s.broker != nil && e.Tools != nil {
		s.broker.setOnly(s.spec.ID, n, e.Tools)
	}
	s.persist()
	return func() RunResult {
		if s.broker != nil && e.Tools != nil {
			// Run n's limit only: once run ends, the next run may have begun
			// with a limit of its own, which must stay.
			defer s.broker.clearOnly(s.spec.ID, n)
		}
		return s.run(rctx, cancel, n, loop.Input{Text: e.Text})
	}, n, nil
}

// OnlyRefusal is what the model is told of a call a command's
// allowed-tools left out.
func OnlyRefusal(tools []string) string {
	return "Refused: the command the user ran allows only these tools for this message: " + strings.Join(tools, ", ") + "."
}

// onlyTools is the limit of one run of a session.
type onlyTools struct {
	run   int
	tools []string
}

// setOnly limits session's calls in run to tools.
func (b *Broker) setOnly(session string, run int, tools []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.only[session] = onlyTools{run: run, tools: slices.Clone(tools)}
}

// clearOnly lifts run's limit, if it is still the one in force.
func (b *Broker) clearOnly(session string, run int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.only[session]; ok && o.run == run {
		delete(b.only, session)
	}
}

// clearOnlyBefore lifts the limit of a run before run, which begins: the
// ended run's own clearOnly may not have come yet.
func (b *Broker) clearOnlyBefore(session string, run int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.only[session]; ok && o.run < run {
		delete(b.only, session)
	}
}

// CommandCall splits a message that calls a slash command ("/review
// main.go") into its name and arguments; ok is false for any other.
func CommandCall(msg string) (name, args string, ok bool) {
	msg = strings.TrimSpace(msg)
	rest, ok := strings.CutPrefix(msg, "/")
	if !ok {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// Commands lists the saved prompts of the workspace roots (none without
// Options.Commands), for a face that has no session yet (MCP's prompts).
func (m *Manager) Commands(roots []string) []Command {
	if m.opts.Commands == nil {
		return nil
	}
	return m.opts.Commands.List(roots)
}

// ExpandCommand is the saved prompt name of roots with args in place, for
// a face that hands the text to its client's own agent (MCP's
// prompts/get); ok is false when there is no such command.
func (m *Manager) ExpandCommand(roots []string, name, args string) (Expansion, bool) {
	if m.opts.Commands == nil {
		return Expansion{}, false
	}
	return m.opts.Commands.Expand(roots, name, args)
}
