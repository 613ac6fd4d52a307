package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/store"
)

const sessionsUsage = `  zero sessions [ls] [--all] [--workspace DIR]   list the stored sessions of this workspace (or of all)
  zero sessions show ID                          print a session as a readable transcript
  zero sessions export ID                        print a session (settings, events, histories) as JSON
  zero sessions rm ID...                         delete sessions and their spilled output`

const sessionsAbout = `Lists, shows, exports and deletes the sessions Zero keeps, in $ZERO_STORE, else
$XDG_DATA_HOME/zero/zero.db (~/.local/share/zero/zero.db). An ID may be shortened to any prefix that
names one session, as zero sessions lists them. Continue one with zero run --continue (the last of this
workspace) or --session ID, or load it in an editor (ACP session/load, LSP zero/loadSession, MCP
zero_start with session).`

const sessionsExamples = `  zero sessions
  zero sessions show 3f2a         the session whose id starts with 3f2a
  zero sessions export 3f2a > session.json
  zero sessions rm 3f2a 9c01`

// sessionsCommand lists, shows, exports and removes stored sessions.
func sessionsCommand(args []string, stdout, stderr io.Writer) int {
	sub := "ls"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("zero sessions "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "ls: list the sessions of every workspace")
	wsFlag := fs.String("workspace", "", "ls: the workspace whose sessions to list (default: the current directory)")
	helpOutput(fs, args, stdout)
	fs.Usage = func() { printUsage(fs, sessionsUsage, sessionsAbout, sessionsExamples) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	st, code := openStoreFor("zero sessions", stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	switch sub {
	case "ls", "list":
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "zero sessions ls: unexpected argument %q\n", fs.Arg(0))
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
		if fs.NArg() != 1 {
			fmt.Fprintf(stderr, "zero sessions %s: want one session id\n", sub)
			return 2
		}
		id, err := app.ResolveStored(st, fs.Arg(0))
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		return showSession(st, id, sub == "export", stdout, stderr)
	case "rm", "delete":
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "zero sessions rm: want the ids of the sessions to delete (zero sessions lists them)")
			return 2
		}
		code := 0
		for _, arg := range fs.Args() {
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
	fmt.Fprintf(stderr, "zero sessions: unknown subcommand %q\n\nUsage:\n%s\n", sub, sessionsUsage)
	return 2
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
