package term

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/server"
)

// The live view and the chat's transcript show a checkpoint, a rewind and
// a fork as short lines: what a checkpoint covers and leaves out, what a
// rewind restored, removed, kept and could not restore, each named, and
// the processes still running that Zero cannot undo (in yellow, the rest
// dim). A path's control characters are shown, never let act.
func TestRenderCheckpointRewoundForked(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	r := newRenderer(&b, false)
	for _, e := range []server.Event{
		{Type: server.EventCheckpoint, Checkpoint: &server.CheckpointRef{ID: 3, Run: 3, Kind: server.CheckpointRun, Title: "fix it",
			Files: 14, Bytes: 3277, Skipped: []string{"build: ignored", "big.bin: larger than 10 MiB"}}},
		{Type: server.EventCheckpoint, Checkpoint: &server.CheckpointRef{ID: 4, Run: 3, Kind: server.CheckpointCompact}},
		{Type: server.EventCheckpoint, Checkpoint: &server.CheckpointRef{ID: 5, Run: 4, Kind: server.CheckpointRun, Error: "no snapshot store: only the conversation is kept"}},
		{Type: server.EventRewound, Rewind: &server.RewindReport{To: 3, Run: 3, Files: true, Conversation: true, Cancelled: true,
			Restored: []string{"a.go", "b\x1b[2J.go"}, Deleted: []string{"out/", "out/x"}, Kept: []string{"mine.txt"},
			Failed: []string{"ro.txt: permission denied"}, Messages: 6, Running: []string{"shell 0: 1234 sleep 300"}}},
		{Type: server.EventRewound, Rewind: &server.RewindReport{To: 2, Run: 2, Conversation: true, Messages: 1}},
		{Type: server.EventRewound, Rewind: &server.RewindReport{To: 4, Run: 3, Files: true, Conversation: true, Messages: -3}},
		{Type: server.EventForked, Fork: &server.ForkRef{From: "3f2a9c", Run: 2}},
		{Type: server.EventRewound, Text: "rewound (an older event)"},
	} {
		r.event(e)
	}
	want := `checkpoint 3 before run 3: the conversation and 14 files (3.2 KiB); 2 left out: build: ignored, big.bin: larger than 10 MiB
checkpoint 4 before compacting: the conversation
checkpoint 5 before run 4: the conversation only (no snapshot store: only the conversation is kept)
rewound to checkpoint 3: the run going on was cancelled; 2 files restored, 2 removed; 6 messages left the conversation
  restored: a.go, b␛[2J.go
  removed: out/, out/x
  kept as you changed them: mine.txt
  not restored: ro.txt: permission denied
  still running in the sandbox (Zero cannot undo what they do from now on): shell 0: 1234 sleep 300
rewound to checkpoint 2: the files left as they are; 1 message left the conversation
rewound to checkpoint 4: no file to restore; the conversation back as it was then
forked from session 3f2a9c after run 2
rewound (an older event)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("live view (-want +got):\n%s", diff)
	}
	b.Reset()
	r = newRenderer(&b, true)
	r.event(server.Event{Type: server.EventRewound, Rewind: &server.RewindReport{To: 1, Files: true, Running: []string{"shell 0: 9 make"}}})
	if lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], dim) || !strings.HasPrefix(lines[1], yellow) {
		t.Errorf("colored: %q, want the report dim and the running processes yellow", lines)
	}
}

// /rewind and zero sessions checkpoints list the checkpoints: id, before
// what, when, the files covered and the run's message.
func TestCheckpointTable(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cps := []server.Checkpoint{
		{ID: 1, Run: 1, Kind: server.CheckpointRun, Title: "make the mess", Created: at,
			Files: []server.RootSnapshot{{Files: 3, Bytes: 44, SkippedCount: 1}}},
		{ID: 2, Run: 1, Kind: server.CheckpointCompact, Title: "/compact the parser", Created: at},
		{ID: 3, Run: 2, Kind: server.CheckpointRun, Title: "again\x1b]0;x\x07", Created: at, Error: "no snapshot store"},
		{ID: 4, Run: 3, Kind: server.CheckpointRun, Title: "big", Created: at,
			Files: []server.RootSnapshot{{Files: 1000, Bytes: 5 << 20, Partial: true}, {Files: 1, Bytes: 1}}},
	}
	got := strings.Join(CheckpointTable(cps, func(t time.Time) string { return t.Format("15:04") }), "\n")
	want := `ID  BEFORE      TAKEN  FILES                          TITLE
1   run 1       03:04  3 files, 44 bytes, 1 left out  make the mess
2   compacting  03:04  none                           /compact the parser
3   run 2       03:04  none (conversation only)       again␛]0;x\x07
4   run 3       03:04  1001 files, 5.0 MiB, partly    big`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

// The chat's /rewind arguments: a checkpoint's id, then files or
// conversation, keep or overwrite; /undo's: keep or overwrite; anything
// else is told how to say it.
func TestRewindArgs(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]server.RewindOptions{
		"2":                    {To: 2},
		"#2 files":             {To: 2, Files: true},
		"3 conversation keep":  {To: 3, Conversation: true, Conflicts: server.ConflictsKeep},
		"1 OVERWRITE":          {To: 1, Conflicts: server.ConflictsOverwrite},
		"1 files conversation": {To: 1, Files: true, Conversation: true},
	} {
		if got, err := rewindArgs(arg); err != nil || got != want {
			t.Errorf("rewindArgs(%q) = %+v, %v; want %+v", arg, got, err, want)
		}
	}
	for _, arg := range []string{"x", "0", "-1", "2 everything", "2 3"} {
		if _, err := rewindArgs(arg); err == nil || !strings.Contains(err.Error(), "/rewind N [files|conversation] [keep|overwrite]") {
			t.Errorf("rewindArgs(%q) = %v, want the usage", arg, err)
		}
	}
	for arg, want := range map[string]server.RewindOptions{"": {}, "keep": {Conflicts: server.ConflictsKeep}, "Overwrite": {Conflicts: server.ConflictsOverwrite}} {
		if got, err := undoArgs(arg); err != nil || got != want {
			t.Errorf("undoArgs(%q) = %+v, %v; want %+v", arg, got, err, want)
		}
	}
	if _, err := undoArgs("2"); err == nil || !strings.Contains(err.Error(), "/undo [keep|overwrite]") {
		t.Errorf("undoArgs(2) = %v, want the usage", err)
	}
}

// zero sessions undo on a terminal names the files changed outside the
// agent and takes k, o or c; another answer is asked again once, and no
// answer (stdin closed) cancels.
func TestAskConflicts(t *testing.T) {
	t.Parallel()
	ce := &server.ConflictError{To: 2, Paths: []string{"kept.txt", "mine\x1b[2K.txt"}}
	for typed, want := range map[string]string{"k\n": "keep", "KEEP\n": "keep", "o\n": "overwrite", "c\n": "", "n\n": "",
		"": "", "what\n": "", "what\no\n": "overwrite", "what\nhuh\nk\n": ""} {
		var out strings.Builder
		if got := AskConflicts(strings.NewReader(typed), &out, ce); got != want {
			t.Errorf("typed %q: %q, want %q", typed, got, want)
		}
		if !strings.HasPrefix(out.String(), "2 files changed outside the agent since checkpoint 2 (nothing was rewound yet):\n  kept.txt\n  mine␛[2K.txt\n[k]eep your changes") {
			t.Errorf("typed %q: shown %q", typed, out.String())
		}
	}
}
