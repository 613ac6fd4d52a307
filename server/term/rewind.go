package term

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
)

// What the terminal faces say of checkpoints, rewinds and forks: the
// chat's transcript and zero run's view (the checkpoint, rewound and
// forked events), the chat's /rewind and `zero sessions checkpoints`
// (the list), /undo and `zero sessions undo` at a conflict (the question).
// Paths are the workspace's names, which the agent may have chosen: their
// control and format characters are shown, never let act on the terminal.

// listedPaths is how many paths a line names before "and N more".
const listedPaths = 10

// CheckpointLine is one line for a checkpoint event: which checkpoint,
// before what, and what it covers ("checkpoint 2 before run 2: the
// conversation and 14 files (3.2 KiB); 1 left out: build/: ignored").
func CheckpointLine(c *server.CheckpointRef) string {
	what := fmt.Sprintf("checkpoint %d before run %d", c.ID, c.Run)
	if c.Kind == server.CheckpointCompact {
		what = fmt.Sprintf("checkpoint %d before compacting", c.ID)
	}
	switch {
	case c.Error != "":
		return what + ": the conversation only (" + termsafe.Visible(c.Error) + ")"
	case c.Kind == server.CheckpointCompact || c.Files == 0 && c.Bytes == 0:
		return what + ": the conversation"
	}
	line := fmt.Sprintf("%s: the conversation and %s (%s)", what, filesCount(c.Files), server.Size(c.Bytes))
	if c.Partial {
		line += ", partly"
	}
	if n := len(c.Skipped); n > 0 {
		line += fmt.Sprintf("; %d left out: %s", n, termsafe.Visible(joinShown(c.Skipped, 3)))
	}
	return line
}

// RewoundLines say what a rewind did: a headline, then the files restored,
// removed, kept and not restored, each named, and the processes still
// running in the sandbox, whose doing from now on Zero cannot undo. The
// last line is that warning when there is one (warning reports it).
func RewoundLines(r *server.RewindReport) (lines []string, warning bool) {
	var parts []string
	if r.Cancelled {
		parts = append(parts, "the run going on was cancelled")
	}
	switch {
	case !r.Files:
		parts = append(parts, "the files left as they are")
	case len(r.Restored)+len(r.Deleted)+len(r.Kept)+len(r.Failed) == 0:
		parts = append(parts, "no file to restore")
	default:
		parts = append(parts, fmt.Sprintf("%s restored, %d removed", filesCount(len(r.Restored)), len(r.Deleted)))
	}
	switch {
	case !r.Conversation:
		parts = append(parts, "the conversation kept")
	case r.Messages > 0:
		parts = append(parts, fmt.Sprintf("%s left the conversation", messagesCount(r.Messages)))
	default: // a compaction taken back gives messages back
		parts = append(parts, "the conversation back as it was then")
	}
	// The report does not say whether the checkpoint was a run's or a
	// compaction's (whose Run is the runs before it): the run is not named.
	lines = append(lines, fmt.Sprintf("rewound to checkpoint %d: %s", r.To, strings.Join(parts, "; ")))
	for _, l := range []struct {
		label string
		paths []string
	}{
		{"restored", r.Restored},
		{"removed", r.Deleted},
		{"kept as you changed them", r.Kept},
		{"not restored", r.Failed},
	} {
		if len(l.paths) > 0 {
			lines = append(lines, "  "+l.label+": "+termsafe.Visible(joinShown(l.paths, listedPaths)))
		}
	}
	if len(r.Running) > 0 {
		lines = append(lines, "  still running in the sandbox (Zero cannot undo what they do from now on): "+
			termsafe.Visible(strings.Join(r.Running, "; ")))
		return lines, true
	}
	return lines, false
}

// ForkedLine is the line of a forked event.
func ForkedLine(f *server.ForkRef) string {
	return fmt.Sprintf("forked from session %s after run %d", termsafe.Visible(f.From), f.Run)
}

// checkpointEvent shows a checkpoint, rewound or forked event in the live
// view (dim lines; a warning in yellow); it reports false for any other
// event.
func (r *renderer) checkpointEvent(e server.Event) bool {
	switch {
	case e.Type == server.EventCheckpoint && e.Checkpoint != nil:
		r.line(r.style(CheckpointLine(e.Checkpoint), dim))
	case e.Type == server.EventRewound && e.Rewind != nil:
		lines, warning := RewoundLines(e.Rewind)
		for i, l := range lines {
			if warning && i == len(lines)-1 {
				r.line(r.style(l, yellow))
				continue
			}
			r.line(r.style(l, dim))
		}
	case e.Type == server.EventForked && e.Fork != nil:
		r.line(r.style(ForkedLine(e.Fork), dim))
	case e.Type == server.EventCheckpoint, e.Type == server.EventRewound, e.Type == server.EventForked:
		r.line(r.style(e.Text, dim)) // an event of an older shape: its text says it
	default:
		return false
	}
	return true
}

// CheckpointTable lists checkpoints as the chat's /rewind and `zero
// sessions checkpoints` show them: id, before what, when (as when says),
// what files they cover, and the run's message.
func CheckpointTable(cps []server.Checkpoint, when func(time.Time) string) []string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tBEFORE\tTAKEN\tFILES\tTITLE")
	for _, c := range cps {
		before := fmt.Sprintf("run %d", c.Run)
		if c.Kind == server.CheckpointCompact {
			before = "compacting"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.ID, before, when(c.Created), checkpointFiles(c), termsafe.Visible(c.Title))
	}
	tw.Flush()
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

// checkpointFiles says what files a checkpoint covers.
func checkpointFiles(c server.Checkpoint) string {
	switch {
	case c.Error != "":
		return "none (conversation only)"
	case len(c.Files) == 0:
		return "none"
	}
	n, size, skipped, partial := 0, int64(0), 0, false
	for _, f := range c.Files {
		n += f.Files
		size += f.Bytes
		skipped += max(f.SkippedCount, len(f.Skipped))
		partial = partial || f.Partial
	}
	s := fmt.Sprintf("%s, %s", filesCount(n), server.Size(size))
	if skipped > 0 {
		s += fmt.Sprintf(", %d left out", skipped)
	}
	if partial {
		s += ", partly"
	}
	return s
}

// ConflictLines say what a rewind found changed outside the agent, one
// file a line, and what the person may choose.
func ConflictLines(ce *server.ConflictError) []string {
	lines := []string{fmt.Sprintf("%s changed outside the agent since checkpoint %d (nothing was rewound yet):", filesCount(len(ce.Paths)), ce.To)}
	shown := ce.Paths
	if len(shown) > 20 {
		shown = shown[:20]
	}
	for _, p := range shown {
		lines = append(lines, "  "+termsafe.Visible(p))
	}
	if n := len(ce.Paths) - len(shown); n > 0 {
		lines = append(lines, fmt.Sprintf("  and %d more", n))
	}
	return lines
}

// ConflictAnswer is a choice typed at a conflict question: "keep" (k),
// "overwrite" (o), "cancel" (c, n, or no answer) or "" for none of them.
func ConflictAnswer(typed string) string {
	switch strings.ToLower(strings.TrimSpace(typed)) {
	case "k", "keep":
		return server.ConflictsKeep
	case "o", "overwrite":
		return server.ConflictsOverwrite
	case "c", "cancel", "n", "no":
		return "cancel"
	}
	return ""
}

// AskConflicts asks on a terminal (in, out) what to do with the files a
// rewind found changed outside the agent: it returns server.ConflictsKeep,
// server.ConflictsOverwrite, or "" to cancel (stdin closed, or an answer
// that is none of them after asking again once).
func AskConflicts(in io.Reader, out io.Writer, ce *server.ConflictError) string {
	for _, l := range ConflictLines(ce) {
		fmt.Fprintln(out, l)
	}
	r := bufio.NewReader(in)
	for range 2 {
		fmt.Fprint(out, "[k]eep your changes (the rest is rewound), [o]verwrite them too, or [c]ancel? ")
		line, err := r.ReadString('\n')
		switch a := ConflictAnswer(line); a {
		case server.ConflictsKeep, server.ConflictsOverwrite:
			return a
		case "cancel":
			return ""
		}
		if err != nil {
			fmt.Fprintln(out)
			return ""
		}
		fmt.Fprintln(out, "answer k, o or c")
	}
	return ""
}

// joinShown joins the first n of items, saying how many more there are.
func joinShown(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// messagesCount says how many messages, for people.
func messagesCount(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}
