package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/memory"
)

const memoryUsage = `  zero memory [ls] [--area A] [--limit N] [--workspace DIR]   the newest memories of this workspace and your own
  zero memory search QUERY [--limit N] [--workspace DIR]      the memories most relevant to QUERY
  zero memory save [--user] [--area A] TEXT                   remember TEXT (in this workspace's memory, or --user: yours)
  zero memory rm ID...                                        forget memories by id
  zero memory import DIR [--user] [--workspace DIR]           import a folder of documents as knowledge
  zero memory export [--workspace DIR]                        print the memories as JSON lines`

const memoryAbout = `Reads and changes the agent's memory. The agent saves and recalls memories (memory_save,
memory_load, recall every few turns, memorizing at the end of a task) in the memory of its workspace;
your own memory (--user) is searched in every workspace, and only you change it. Memories live in the
session store ($ZERO_STORE, else $XDG_DATA_HOME/zero/zero.db).`

const memoryExamples = `  zero memory
  zero memory search "how to run the tests"
  zero memory save --user "I prefer tabs over spaces"
  zero memory import ./docs`

// memoryCommand lists, searches, saves, removes, imports and exports memories.
func memoryCommand(args []string, stdout, stderr io.Writer) int {
	sub := "ls"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("zero memory "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	wsFlag := fs.String("workspace", "", "the workspace whose memory it is (default: the current directory)")
	area := fs.String("area", "", "the memory area to list or save in: main, fragments, solutions (default: all; save: main)")
	limit := fs.Int("limit", 20, "ls, search: how many memories to show")
	user := fs.Bool("user", false, "save, import: your own memory, searched in every workspace")
	helpOutput(fs, args, stdout)
	fs.Usage = func() { printUsage(fs, memoryUsage, memoryAbout, memoryExamples) }
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ws, err := app.ResolveWorkspace(*wsFlag)
	if err != nil {
		fmt.Fprintln(stderr, "zero:", err)
		return 2
	}
	st, code := openStoreFor("zero memory", stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	svc := memory.New(memory.Options{Store: st})
	ctx := context.Background()
	scope := ws
	if *user {
		scope = ""
	}
	switch sub {
	case "ls", "list", "search":
		query := strings.Join(words, " ")
		if sub == "search" && strings.TrimSpace(query) == "" {
			fmt.Fprintln(stderr, "zero memory search: what should it look for?")
			return 2
		}
		if sub != "search" && query != "" {
			fmt.Fprintf(stderr, "zero memory ls: unexpected argument %q (zero memory search QUERY searches)\n", words[0])
			return 2
		}
		list, err := app.WorkspaceMemories(ctx, svc, app.MemorySecrets(ws), ws, query, *area, max(1, *limit))
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		if len(list) == 0 {
			fmt.Fprintln(stderr, "no memories")
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAREA\tSCOPE\tSAVED\tTEXT")
		for _, m := range list {
			text := strings.Join(strings.Fields(m.Text), " ")
			if m.Source != "" {
				text = "[" + m.Source + "] " + text
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Area, m.Scope, m.Timestamp, cut.Clip(text, 100))
		}
		tw.Flush()
		return 0
	case "save":
		text := strings.TrimSpace(strings.Join(words, " "))
		if text == "" {
			fmt.Fprintln(stderr, "zero memory save: what should be remembered?")
			return 2
		}
		saved, err := svc.Save(ctx, memory.Memory{Scope: scope, Area: *area, Text: text, Meta: map[string]any{"source": "user"}})
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		fmt.Fprintf(stdout, "saved %s\n", saved[0].ID)
		return 0
	case "rm", "delete":
		if len(words) == 0 {
			fmt.Fprintln(stderr, "zero memory rm: want the ids of the memories to forget (zero memory ls lists them)")
			return 2
		}
		gone, err := svc.Delete(words)
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		found := map[string]bool{}
		for _, m := range gone {
			found[m.ID] = true
			fmt.Fprintf(stdout, "deleted %s\n", m.ID)
		}
		code := 0
		for _, id := range words {
			if !found[id] {
				fmt.Fprintf(stderr, "zero: no memory %q\n", id)
				code = 1
			}
		}
		return code
	case "export":
		list, err := svc.List([]string{ws, ""}, *area, 0)
		if err != nil {
			printStoreErr(stderr, "zero", st.Path(), err)
			return 1
		}
		set := app.MemorySecrets(ws) // a value in the store is exported as its alias
		enc := json.NewEncoder(stdout)
		for _, m := range list {
			m = app.MaskMemory(set, m)
			_ = enc.Encode(map[string]any{"id": m.ID, "scope": m.Scope, "area": m.Area, "text": m.Text,
				"timestamp": m.Created.Local().Format(memory.TimeFormat), "source": m.Source, "meta": m.Meta})
		}
		return 0
	case "import":
		return importCommand(ctx, svc, scope, words, stdout, stderr)
	}
	fmt.Fprintf(stderr, "zero memory: unknown subcommand %q\n\nUsage:\n%s\n", sub, memoryUsage)
	return 2
}
