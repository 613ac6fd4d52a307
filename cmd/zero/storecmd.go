package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/zeroagent/zero/app"

	"github.com/zeroagent/zero/store"
)

const storeUsage = `  zero store [check]            read every page of the session store and say whether it is sound
  zero store recover [--empty]  move a damaged store aside (it is kept) and start a new one
                                with the sessions and memories that can still be read`

const storeAbout = `The session store is one SQLite file: $ZERO_STORE, else $XDG_DATA_HOME/zero/zero.db
(~/.local/share/zero/zero.db). It keeps the sessions (their events and histories) and the
memory. A disk or file system fault, a copy taken while it was written, or garbage written
over it can damage it: every command then says that it is damaged and names this command;
zero run, zero chat and the editors go on without a store (their sessions end with the
process), and zero doctor reports it.

zero store recover never deletes anything. It checks the file, renames it, with its -wal and
-shm files, to zero.db.damaged-<UTC time> beside it, starts a new store in its place, and
copies into it, row by row, every session (with its events and histories), memory and
behaviour rule that SQLite can still read from the damaged file, skipping the damaged pages.
It says how many sessions and memories were saved, and how many are known to be lost (rows
on damaged pages that no index names are not counted). A damaged header leaves nothing to
read: the new store starts empty, and the damaged file stays for a specialist tool
(sqlite3's .recover). --empty copies nothing. Close the editors that run Zero first: a store
one of their sessions holds is refused. A store that is not damaged is left as it is.`

const storeExamples = `  zero store
  zero store recover
  ZERO_STORE=/tmp/copy.db zero store check`

// storeCommand checks the session store or recovers a damaged one.
func storeCommand(args []string, stdout, stderr io.Writer) int {
	sub := "check"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	name := "zero store " + sub
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	empty := flags.Bool("empty", false, "recover: start the new store empty, copying nothing from the damaged file")
	helpOutput(flags, args, stdout)
	flags.Usage = func() { printUsage(flags, storeUsage, storeAbout, storeExamples) }
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n\nUsage:\n%s\n", name, flags.Arg(0), storeUsage)
		return 2
	}
	if sub != "check" && sub != "recover" {
		fmt.Fprintf(stderr, "zero store: unknown subcommand %q\n\nUsage:\n%s\n", sub, storeUsage)
		return 2
	}
	if *empty && sub != "recover" {
		fmt.Fprintln(stderr, "zero store check: --empty is a flag of zero store recover")
		return 2
	}
	path, err := app.StorePath()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if sub == "check" {
		return checkStoreFile(path, stdout, stderr)
	}
	return recoverStore(path, *empty, stdout, stderr)
}

// checkStoreFile is zero store check.
func checkStoreFile(path string, stdout, stderr io.Writer) int {
	t0 := time.Now()
	err := store.Check(path)
	took := time.Since(t0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stdout, "zero store: there is no store at %s yet (the first session makes it)\n", path)
		return 0
	case store.IsDamaged(err):
		fmt.Fprintln(stderr, "zero store:", app.DamagedStore(path, err))
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "zero store:", err)
		return 1
	}
	st, err := store.Open(path)
	if err != nil {
		printStoreErr(stderr, "zero store", path, err)
		return 1
	}
	defer st.Close()
	list, err := st.Sessions(store.ListOptions{})
	if err != nil {
		printStoreErr(stderr, "zero store", path, err)
		return 1
	}
	mems, err := st.CountMemories(nil)
	if err != nil {
		printStoreErr(stderr, "zero store", path, err)
		return 1
	}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(stdout, "zero store: %s is sound: %s, %s, %.1f MB (every page read in %s)\n",
		path, countOf(len(list), "session"), countOf(mems, "memory"), float64(size)/(1<<20), took.Round(time.Millisecond))
	return 0
}

// recoverStore is zero store recover.
func recoverStore(path string, empty bool, stdout, stderr io.Writer) int {
	rec, err := store.Recover(path, store.RecoverOptions{Empty: empty})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stdout, "zero store recover: there is no store at %s: nothing to recover\n", path)
		return 0
	case errors.Is(err, store.ErrNotDamaged):
		fmt.Fprintf(stdout, "zero store recover: %s is not damaged (every page reads): nothing to do, the store is left as it is\n", rec.Path)
		return 0
	case errors.Is(err, store.ErrBusy):
		fmt.Fprintf(stderr, "zero store recover: %s is in use: a session of it is open in another zero process (an editor, or another terminal); close that, then run zero store recover again; nothing was changed\n", rec.Path)
		return 1
	case err != nil && rec.Damaged == "":
		fmt.Fprintf(stderr, "zero store recover: %v; nothing was changed\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "zero store recover: %s was damaged (%s)\n", rec.Path, rec.Reason)
	fmt.Fprintf(stdout, "  kept as  %s (with its -wal and -shm files, if any): nothing was deleted\n", rec.Damaged)
	if err != nil {
		fmt.Fprintf(stderr, "zero store recover: %v\n", err)
		return 1
	}
	switch {
	case empty:
		fmt.Fprintf(stdout, "  new      %s, empty (--empty: nothing was copied)\n", rec.Path)
	case rec.Unreadable != "":
		fmt.Fprintf(stdout, "  new      %s, empty: nothing could be read from the damaged file (%s)\n", rec.Path, rec.Unreadable)
	default:
		fmt.Fprintf(stdout, "  new      %s\n", rec.Path)
		fmt.Fprintf(stdout, "  saved    %s (%d events, %d history messages) and %s\n", countOf(rec.Sessions, "session"),
			rec.Copied["events"], rec.Copied["messages"], countOf(rec.Memories, "memory"))
		fmt.Fprintf(stdout, "  lost     %s and %s that could not be read\n", countOf(rec.SessionsLost, "session"), countOf(rec.MemoriesLost, "memory"))
	}
	return 0
}

// countOf is n things, in words.
func countOf(n int, thing string) string {
	plural := thing + "s"
	if thing == "memory" {
		plural = "memories"
	}
	switch n {
	case 0:
		return "no " + plural
	case 1:
		return "1 " + thing
	}
	return fmt.Sprintf("%d %s", n, plural)
}

// printStoreErr prints the error of a command on the store at path: the
// clear message when it says the file is damaged.
func printStoreErr(stderr io.Writer, name, path string, err error) {
	if store.IsDamaged(err) {
		fmt.Fprintf(stderr, "%s: %s\n", name, app.DamagedStore(path, err))
		return
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
}
