package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/server/term"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/termsafe"
)

const sessionsUsage = `  zero sessions [ls] [--all] [--workspace DIR]   list the stored sessions of this workspace (or of all)
  zero sessions show ID                          print a session as a readable transcript
  zero sessions export ID                        print a session (settings, events, histories) as JSON
  zero sessions rm ID...                         delete sessions and their spilled output
  zero sessions checkpoints ID [--json]          list a session's checkpoints (one is taken before each run)
  zero sessions undo ID [--keep|--overwrite]     take back the last run: its file changes and its part of the conversation
  zero sessions rewind ID [--to N] [--files|--conversation] [--keep|--overwrite]
                                                 go back to before checkpoint N (the newest by default)
  zero sessions fork ID [--at RUN] [--json]      a new session holding ID's conversation up to run RUN (prints its id)
  zero sessions compact ID [FOCUS...] [--json]   summarise a session's conversation now, FOCUS saying what to keep`

const sessionsAbout = `Lists, shows, exports and deletes the sessions Zero keeps, in $ZERO_STORE, else
$XDG_DATA_HOME/zero/zero.db (~/.local/share/zero/zero.db). An ID may be shortened to any prefix that
names one session, as zero sessions lists them. Continue one with zero run --continue (the last of this
workspace) or --session ID, or load it in an editor (ACP session/load, LSP zero/loadSession, MCP
zero_start with session).

Before each run Zero takes a checkpoint: the conversation's place and a snapshot of the workspace's files
(.gitignore'd trees and .git left out). undo and rewind go back to one: the files the agent changed, by a
tool or by a command, are restored, those it made removed, and the conversation loses what came after.
Files you changed yourself since then are never overwritten unasked: on a terminal you are asked,
elsewhere the command fails naming them, and --keep (keep your changes, rewind the rest) or --overwrite
decides. Processes still running in the sandbox are named: Zero cannot undo what they do later. A session
open in another zero process is rewound there (/undo in its chat).`

const sessionsExamples = `  zero sessions
  zero sessions show 3f2a         the session whose id starts with 3f2a
  zero sessions export 3f2a > session.json
  zero sessions rm 3f2a 9c01
  zero sessions undo 3f2a --keep
  zero sessions rewind 3f2a --to 2 --files
  zero sessions fork 3f2a --at 1  then: zero run --session NEW "try it the other way"`

// sessionsFlags are the flags each subcommand takes.
var sessionsFlags = map[string][]string{
	"ls": {"all", "workspace"}, "list": {"all", "workspace"},
	"show": nil, "export": nil, "rm": nil, "delete": nil,
	"checkpoints": {"json"},
	"undo":        {"json", "keep", "overwrite"},
	"rewind":      {"json", "to", "files", "conversation", "keep", "overwrite"},
	"fork":        {"json", "at"},
	"compact":     {"json"},
}

// editOptions are what undo, rewind, fork and compact were asked.
type editOptions struct {
	json   bool
	rewind server.RewindOptions
	at     int
	focus  string
}

// sessionsCommand lists, shows, exports and removes stored sessions, and
// takes them back to a checkpoint, forks and compacts them.
func sessionsCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sub := "ls"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("zero sessions "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "ls: list the sessions of every workspace")
	wsFlag := fs.String("workspace", "", "ls: the workspace whose sessions to list (default: the current directory)")
	jsonOut := fs.Bool("json", false, "checkpoints, undo, rewind, fork, compact: print JSON")
	to := fs.Int("to", 0, "rewind: the checkpoint `N` to go back to, as zero sessions checkpoints lists them (default: the newest)")
	files := fs.Bool("files", false, "rewind: take back the files only; the conversation stays")
	conversation := fs.Bool("conversation", false, "rewind: take back the conversation only; the files stay")
	keep := fs.Bool("keep", false, "undo, rewind: keep the files changed outside the agent since the checkpoint as they are, rewind the rest")
	overwrite := fs.Bool("overwrite", false, "undo, rewind: restore the files changed outside the agent since the checkpoint too")
	at := fs.Int("at", 0, "fork: the last `RUN` the new session holds (default: every run that ended)")
	helpOutput(fs, args, stdout)
	fs.Usage = func() { printUsage(fs, sessionsUsage, sessionsAbout, sessionsExamples) }
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	allowed, ok := sessionsFlags[sub]
	if !ok {
		fmt.Fprintf(stderr, "zero sessions: unknown subcommand %q\n\nUsage:\n%s\n", sub, sessionsUsage)
		return 2
	}
	bad := ""
	fs.Visit(func(f *flag.Flag) {
		if bad == "" && !slices.Contains(allowed, f.Name) {
			bad = f.Name
		}
	})
	if bad != "" {
		fmt.Fprintf(stderr, "zero sessions %s: --%s is not one of its flags (zero sessions --help says which command takes it)\n", sub, bad)
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *keep && *overwrite:
		fmt.Fprintf(stderr, "zero sessions %s: --keep and --overwrite exclude each other: give one\n", sub)
		return 2
	case *files && *conversation:
		fmt.Fprintf(stderr, "zero sessions %s: --files and --conversation exclude each other: give one, or neither to take back both\n", sub)
		return 2
	case set["to"] && *to <= 0:
		fmt.Fprintf(stderr, "zero sessions %s: --to %d: a checkpoint's id is 1 or more (zero sessions checkpoints ID lists them)\n", sub, *to)
		return 2
	case set["at"] && *at <= 0:
		fmt.Fprintf(stderr, "zero sessions %s: --at %d: a run's number is 1 or more\n", sub, *at)
		return 2
	}
	edit := editOptions{json: *jsonOut, at: *at,
		rewind: server.RewindOptions{To: *to, Files: *files, Conversation: *conversation}}
	switch {
	case *keep:
		edit.rewind.Conflicts = server.ConflictsKeep
	case *overwrite:
		edit.rewind.Conflicts = server.ConflictsOverwrite
	}
	switch sub {
	case "checkpoints", "undo", "rewind", "fork":
		if len(words) != 1 {
			fmt.Fprintf(stderr, "zero sessions %s: want one session id (zero sessions lists them)\n", sub)
			return 2
		}
	case "compact":
		if len(words) == 0 {
			fmt.Fprintln(stderr, "zero sessions compact: want a session id (zero sessions lists them), then what the summary should keep, if anything")
			return 2
		}
		edit.focus = strings.Join(words[1:], " ")
	}
	st, code := openStoreFor("zero sessions", stderr)
	if st == nil {
		return code
	}
	switch sub {
	case "checkpoints", "undo", "rewind", "fork", "compact":
		id, err := app.ResolveStored(st, words[0])
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			st.Close()
			return 1
		}
		if sub == "checkpoints" {
			defer st.Close()
			return listCheckpoints(st, id, *jsonOut, stdout, stderr)
		}
		rec, err := st.Session(id)
		st.Close() // the host opens it again
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		return editSession(ctx, sub, rec, edit, stdin, stdout, stderr)
	}
	defer st.Close()
	switch sub {
	case "ls", "list":
		if len(words) > 0 {
			fmt.Fprintf(stderr, "zero sessions ls: unexpected argument %q\n", words[0])
			return 2
		}
		ws := ""
		if !*all {
			dir, err := app.ResolveWorkspace(*wsFlag)
			if err != nil {
				fmt.Fprintln(stderr, "zero:", err)
				return 2
			}
			ws = dir
		}
		return listSessions(st, ws, stdout, stderr)
	case "show", "export":
		if len(words) != 1 {
			fmt.Fprintf(stderr, "zero sessions %s: want one session id\n", sub)
			return 2
		}
		id, err := app.ResolveStored(st, words[0])
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		return showSession(st, id, sub == "export", stdout, stderr)
	}
	// rm, delete
	if len(words) == 0 {
		fmt.Fprintln(stderr, "zero sessions rm: want the ids of the sessions to delete (zero sessions lists them)")
		return 2
	}
	code = 0
	for _, arg := range words {
		id, err := app.ResolveStored(st, arg)
		if err == nil {
			err = app.RemoveSession(st, id)
		}
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "deleted %s\n", id)
	}
	return code
}

// listCheckpoints prints a stored session's checkpoints, oldest first.
func listCheckpoints(st *store.Store, id string, asJSON bool, stdout, stderr io.Writer) int {
	stored, err := st.Checkpoints(id)
	if err != nil {
		printStoreErr(stderr, "zero", st.Path(), err)
		return 1
	}
	cps := make([]server.Checkpoint, 0, len(stored))
	for _, sc := range stored {
		var c server.Checkpoint
		if json.Unmarshal(sc.Data, &c) != nil || c.Undone {
			continue // damaged, or taken back by a rewind: not offered
		}
		c.ID, c.Run = sc.ID, sc.Run
		cps = append(cps, c)
	}
	if asJSON {
		return printJSON(stdout, cps)
	}
	if len(cps) == 0 {
		fmt.Fprintf(stdout, "session %s has no checkpoints: one is taken before each run\n", id)
		return 0
	}
	for _, l := range term.CheckpointTable(cps, func(t time.Time) string { return t.Local().Format(time.DateTime) }) {
		fmt.Fprintln(stdout, l)
	}
	return 0
}

// editSession is undo, rewind, fork and compact: the session is opened
// through a host of its workspace, as zero run --session opens it (its
// workspace's configuration, snapshots and sandbox), and closed again.
func editSession(ctx context.Context, sub string, rec store.Session, o editOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "zero sessions " + sub
	ws := rec.Workspace
	if ws == "" && len(rec.Roots) > 0 {
		ws = rec.Roots[0]
	}
	// Ctrl-C ends what is going on (a compaction waits for the model) and
	// the host still closes: the store keeps what was done.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, err := app.NewHost(ctx, app.Options{Workspace: ws, Named: true, Logger: newLogger(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "%s: session %s: %v\n", name, rec.ID, err)
		return 2
	}
	defer h.Close(closeGrace)
	if h.Store == nil {
		fmt.Fprintf(stderr, "%s: the session store could not be opened\n", name)
		return 1
	}
	if sub == "fork" {
		info, err := h.Manager.Fork(ctx, rec.ID, o.at)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		if o.json {
			return printJSON(stdout, info)
		}
		fmt.Fprintf(stdout, "forked session %s up to run %d as %s\n", rec.ID, info.Runs, info.ID)
		fmt.Fprintf(stdout, "continue it: zero run --session %s \"…\", or zero chat --session %s\n", info.ID, info.ID)
		return 0
	}
	s, err := h.Manager.Get(rec.ID)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		switch {
		case errors.Is(err, server.ErrHeld):
			fmt.Fprintln(stderr, "  (in its chat: /undo, /rewind, /compact)")
		case !errors.Is(err, server.ErrNotFound):
			fmt.Fprintf(stderr, "  (%s opens the session as zero run --session does: with its workspace's model configuration and sandbox)\n", name)
		}
		return 1
	}
	if sub == "compact" {
		ch, err := s.Compact(ctx, o.focus)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		if o.json {
			return printJSON(stdout, ch)
		}
		fmt.Fprintf(stdout, "compacted session %s: %d → %d tokens (zero sessions undo %s takes it back)\n", rec.ID, ch.Before, ch.After, rec.ID)
		return 0
	}
	opts := o.rewind
	if sub == "undo" {
		opts = server.RewindOptions{Conflicts: opts.Conflicts}
	}
	rep, err := s.Rewind(ctx, opts)
	var ce *server.ConflictError
	if errors.As(err, &ce) {
		if !app.IsTerminalIn(stdin) {
			fmt.Fprintf(stderr, "%s: nothing was changed: %s changed outside the agent since checkpoint %d: %s\n",
				name, plural(len(ce.Paths), "file"), ce.To, termsafe.Visible(strings.Join(ce.Paths, ", ")))
			fmt.Fprintf(stderr, "  run it again with --keep to keep your changes and rewind the rest, or --overwrite to restore them too\n")
			return 1
		}
		said := term.AskConflicts(stdin, stderr, ce)
		if said == "" {
			fmt.Fprintln(stderr, "zero: not rewound: nothing was changed")
			return 1
		}
		opts.Conflicts, opts.To = said, ce.To
		rep, err = s.Rewind(ctx, opts)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if o.json {
		return printJSON(stdout, rep)
	}
	lines, _ := term.RewoundLines(&rep)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return 0
}

// printJSON prints v as indented JSON.
func printJSON(stdout io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return 1
	}
	return 0
}

// plural says n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// openStoreFor opens the session store for a command that needs it; a
// damaged one is refused with the message that says what to do.
func openStoreFor(name string, stderr io.Writer) (*store.Store, int) {
	path, err := app.StorePath()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, 1
	}
	st, err := store.Open(path)
	if err != nil {
		printStoreErr(stderr, name, path, err)
		return nil, 1
	}
	return st, 0
}

func listSessions(st *store.Store, ws string, stdout, stderr io.Writer) int {
	list, err := st.Sessions(store.ListOptions{Workspace: ws})
	if err != nil {
		printStoreErr(stderr, "zero", st.Path(), err)
		return 1
	}
	if len(list) == 0 {
		where := "this workspace (" + ws + ")"
		if ws == "" {
			where = "any workspace"
		}
		fmt.Fprintf(stdout, "no sessions in %s; --all lists every workspace's\n", where)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	head := "ID\tUPDATED\tRUNS\tPROFILE\tTITLE"
	if ws == "" {
		head += "\tWORKSPACE"
	}
	fmt.Fprintln(tw, head)
	for _, s := range list {
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", s.ID, s.Updated.Local().Format(time.DateTime), s.Runs, s.Profile, cut.Clip(s.Title, 60))
		if ws == "" {
			line += "\t" + s.Workspace
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}

// sessionExport is `zero sessions export`'s JSON.
type sessionExport struct {
	Session   store.Session                `json:"session"`
	Events    []json.RawMessage            `json:"events"`
	Histories map[string]loop.HistoryState `json:"histories"`
}

func showSession(st *store.Store, id string, asJSON bool, stdout, stderr io.Writer) int {
	rec, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(stderr, "zero: no session %q (zero sessions --all lists them)\n", id)
		return 1
	} else if err != nil {
		printStoreErr(stderr, "zero", st.Path(), err)
		return 1
	}
	stored, err := st.Events(id, 0, 0)
	if err != nil {
		printStoreErr(stderr, "zero", st.Path(), err)
		return 1
	}
	if asJSON {
		out := sessionExport{Session: rec, Events: make([]json.RawMessage, 0, len(stored)), Histories: map[string]loop.HistoryState{}}
		for _, e := range stored {
			out.Events = append(out.Events, json.RawMessage(e.Data))
		}
		agents, err := st.Agents(id)
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		for _, n := range agents {
			h, err := st.History(id, n)
			if err != nil {
				printStoreErr(stderr, "zero", st.Path(), err)
				return 1
			}
			out.Histories[fmt.Sprint(n)] = server.HistoryState(h)
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return 1
		}
		return 0
	}
	evs := make([]server.Event, 0, len(stored))
	for _, se := range stored {
		if e, err := server.DecodeEvent(se.Data); err == nil {
			evs = append(evs, e)
		}
	}
	info := server.Info{ID: rec.ID, Roots: rec.Roots, Profile: rec.Profile, Model: rec.Model, Title: rec.Title,
		Created: rec.Created, Updated: rec.Updated, Runs: rec.Runs, LastSeq: rec.LastSeq, Usage: server.UsageOf(evs)}
	fmt.Fprint(stdout, server.Transcript(info, evs))
	return 0
}
