package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroagent/zero/checkpoint"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/rootfs"
	"github.com/zeroagent/zero/store"
)

// Checkpoints: before every run the session notes where its conversation
// is (agent 0's history mark) and, with Options.Checkpoints, snapshots its
// workspace roots (package checkpoint: every file the agent could change,
// by a tool or by a command, .gitignore'd trees and the user's .git left
// out); when the run ends it snapshots them again, so that a rewind can
// tell what changed outside the agent since. Undo and Rewind go back to a
// checkpoint (its files, its conversation or both), Fork copies a session
// up to one, and Compact takes one before it summarises. Each is an event
// in the session's log, and the checkpoints are stored with the session.

const (
	// EventCheckpoint: a checkpoint was taken (Checkpoint says which and
	// what it covers). Taken before run_started.
	EventCheckpoint loop.EventType = "checkpoint"
	// EventRewound: the session went back to a checkpoint (Rewind says
	// what changed).
	EventRewound loop.EventType = "rewound"
	// EventForked: the first event of a session forked from another after
	// the events it copied (Fork names the original).
	EventForked loop.EventType = "forked"
)

// Kinds of checkpoint.
const (
	CheckpointRun     = "run"     // before a run
	CheckpointCompact = "compact" // before a compaction (conversation only)
)

// Checkpoint is a point the session can go back to.
type Checkpoint struct {
	ID      int    `json:"id"`
	Run     int    `json:"run"`
	Kind    string `json:"kind"`
	Title   string `json:"title,omitempty"` // the run's message, cut
	Created time.Time
	// History is agent 0's history at the checkpoint; Seq the last event
	// logged before it.
	History loop.HistoryMark `json:"history"`
	Seq     int64            `json:"seq"`
	// Files are the workspace roots' snapshots (none for a compaction, or
	// without a snapshot store); Error says why the files are not covered.
	Files []RootSnapshot `json:"files,omitempty"`
	Error string         `json:"error,omitempty"`
	// Undone is set on the checkpoints a rewind of the conversation took
	// back: they are kept (their ids are never given again) but offered
	// no more.
	Undone bool `json:"undone,omitempty"`
}

// RootSnapshot is one workspace root at a checkpoint: its snapshot before
// the run and, once the run ended, after it.
type RootSnapshot struct {
	Root         string            `json:"root"`
	Before       string            `json:"before"`
	After        string            `json:"after,omitempty"`
	Files        int               `json:"files"`
	Bytes        int64             `json:"bytes"`
	Skipped      []checkpoint.Skip `json:"skipped,omitempty"`
	SkippedCount int               `json:"skipped_count,omitempty"`
	Partial      bool              `json:"partial,omitempty"`
	Took         time.Duration     `json:"took"`
	// Outside are paths changed outside the agent in the gaps of
	// checkpoints a partial rewind folded into this one: a later rewind
	// still asks about them.
	Outside []string `json:"outside,omitempty"`
}

// CheckpointRef is what a checkpoint event says of its checkpoint.
type CheckpointRef struct {
	ID    int    `json:"id"`
	Run   int    `json:"run"`
	Kind  string `json:"kind"`
	Title string `json:"title,omitempty"`
	// Files and Bytes are what the snapshots cover; Skipped names what
	// they leave out and why (ignored trees, large files), at most 20.
	Files   int      `json:"files,omitempty"`
	Bytes   int64    `json:"bytes,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	Partial bool     `json:"partial,omitempty"`
	// Error says why the files are not covered (only the conversation is).
	Error string `json:"error,omitempty"`
}

// RewindReport is what a rewind did (the rewound event's, and Rewind's
// result).
type RewindReport struct {
	To           int    `json:"to"`   // the checkpoint
	Run          int    `json:"run"`  // the run it was taken before
	Kind         string `json:"kind"` // the checkpoint's: CheckpointRun or CheckpointCompact
	Files        bool   `json:"files"`
	Conversation bool   `json:"conversation"`
	// Cancelled is set when a run was going on and was cancelled first.
	Cancelled bool `json:"cancelled,omitempty"`
	// Restored were written back, Deleted were created since and removed,
	// Kept were changed outside the agent and left as they are, Failed
	// could not be restored ("path: why").
	Restored []string `json:"restored,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	Kept     []string `json:"kept,omitempty"`
	Failed   []string `json:"failed,omitempty"`
	// Messages is how many messages left the conversation.
	Messages int `json:"messages,omitempty"`
	// Running names the processes still running in the sandbox: what they
	// do from now on is not undone.
	Running []string `json:"running,omitempty"`
}

// ForkRef names the session a fork came from.
type ForkRef struct {
	From string `json:"from"`
	Run  int    `json:"run"` // the history is the original's up to this run's end
}

// RewindOptions chooses what a rewind takes back.
type RewindOptions struct {
	// To is the checkpoint to go back to; 0 is the newest (undo).
	To int
	// Files and Conversation choose what goes back; neither means both.
	Files, Conversation bool
	// Conflicts decides the files changed outside the agent since the
	// checkpoint: "" fails with a *ConflictError naming them (ask the
	// person), ConflictsKeep leaves them as they are, ConflictsOverwrite
	// restores them too.
	Conflicts string
}

// Conflict resolutions (RewindOptions.Conflicts).
const (
	ConflictsKeep      = "keep"
	ConflictsOverwrite = "overwrite"
)

// ErrConflict is matched by a *ConflictError.
var ErrConflict = errors.New("files changed outside the agent")

// ErrNoCheckpoint is the error of a rewind with no checkpoint to go to.
var ErrNoCheckpoint = errors.New("no such checkpoint")

// ConflictError is a rewind's when files changed outside the agent since
// the checkpoint: nothing was changed; ask the person whether to keep them
// (RewindOptions.Conflicts).
type ConflictError struct {
	To    int
	Paths []string
}

func (e *ConflictError) Error() string {
	shown := e.Paths
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if n := len(e.Paths) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%v since checkpoint %d: %s%s; nothing was changed: rewind again keeping them (%q) or overwriting them (%q)",
		ErrConflict, e.To, strings.Join(shown, ", "), more, ConflictsKeep, ConflictsOverwrite)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Checkpoints are the session's checkpoints, oldest first (those a
// rewind took back left out).
func (s *Session) Checkpoints() []Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return offered(s.cps)
}

// offered are cps without the undone ones.
func offered(cps []Checkpoint) []Checkpoint {
	return slices.DeleteFunc(slices.Clone(cps), func(c Checkpoint) bool { return c.Undone })
}

// setCheckpoint replaces the checkpoint with c's id, in memory and in the
// store.
func (s *Session) setCheckpoint(c Checkpoint) {
	s.mu.Lock()
	if i := slices.IndexFunc(s.cps, func(o Checkpoint) bool { return o.ID == c.ID }); i >= 0 {
		s.cps[i] = c
	}
	s.mu.Unlock()
	s.storeCheckpoint(c)
}

// takeCheckpoint notes the conversation and, with files, snapshots the
// roots; it is logged and stored. Called with the session held (a run
// about to start, or hold).
func (s *Session) takeCheckpoint(ctx context.Context, run int, kind, title string, files bool) Checkpoint {
	c := s.newCheckpoint(ctx, run, kind, title, files)
	s.commitCheckpoint(c)
	return c
}

// newCheckpoint is takeCheckpoint's checkpoint, not yet logged.
func (s *Session) newCheckpoint(ctx context.Context, run int, kind, title string, files bool) Checkpoint {
	s.mu.Lock()
	id := 1
	if n := len(s.cps); n > 0 {
		id = s.cps[n-1].ID + 1
	}
	roots := slices.Clone(s.spec.Roots)
	s.mu.Unlock()
	c := Checkpoint{ID: id, Run: run, Kind: kind, Title: cut.Line(title, 80), Created: s.now(),
		History: s.ls.Mark(), Seq: s.Cursor()}
	if files && s.snaps != nil {
		for _, root := range roots {
			if why := tooBroad(root); why != "" {
				c.Error, c.Files = why, nil
				break
			}
			snap, err := s.snaps.Take(ctx, root)
			if err != nil {
				c.Error = cmp.Or(c.Error, fmt.Sprintf("snapshot of %s: %v", root, err))
				c.Files = nil
				break
			}
			c.Files = append(c.Files, RootSnapshot{Root: root, Before: snap.ID, Files: snap.Files, Bytes: snap.Bytes,
				Skipped: snap.Skipped, SkippedCount: snap.SkippedCount, Partial: snap.Partial, Took: snap.Took})
		}
	} else if files {
		c.Error = "no snapshot store: only the conversation is kept"
	}
	return c
}

// commitCheckpoint keeps c, stores it and logs it.
func (s *Session) commitCheckpoint(c Checkpoint) {
	s.mu.Lock()
	s.cps = append(s.cps, c)
	s.mu.Unlock()
	s.storeCheckpoint(c)
	s.emit(Event{Type: EventCheckpoint, Time: s.now(), Text: c.describe(), Checkpoint: c.ref()})
}

// tooBroad says why root's files are not snapshotted: it is the file
// system's root, or holds the user's home (every file of the user's would
// be walked, and copied, before each run). "" when it is a workspace.
func tooBroad(root string) string {
	clean := filepath.Clean(root)
	if filepath.Dir(clean) == clean {
		return "the workspace " + clean + " is the file system's root; its files are not snapshotted"
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) && rootfs.Within(clean, filepath.Clean(home)) {
		return "the workspace " + clean + " holds your home folder; its files are not snapshotted"
	}
	return ""
}

// endCheckpoint finishes the checkpoint of the run going on, once.
func (s *Session) endCheckpoint() {
	s.mu.Lock()
	id := s.runCP
	s.runCP = 0
	s.mu.Unlock()
	if id != 0 {
		s.finishCheckpoint(context.Background(), id)
	}
}

// finishCheckpoint snapshots the roots again when checkpoint id's run has
// ended, to tell later what changed outside the agent.
func (s *Session) finishCheckpoint(ctx context.Context, id int) {
	if s.snaps == nil {
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.cps, func(c Checkpoint) bool { return c.ID == id })
	if i < 0 || len(s.cps[i].Files) == 0 {
		s.mu.Unlock()
		return
	}
	c := s.cps[i]
	c.Files = slices.Clone(c.Files)
	s.mu.Unlock()
	for j := range c.Files {
		snap, err := s.snaps.Take(ctx, c.Files[j].Root)
		if err != nil {
			s.emit(Event{Type: loop.EventWarning, Text: fmt.Sprintf("snapshot of %s after run %d: %v (a rewind will not tell what changed outside the agent since)", c.Files[j].Root, c.Run, err)})
			return
		}
		c.Files[j].After = snap.ID
	}
	s.setCheckpoint(c)
}

func (s *Session) storeCheckpoint(c Checkpoint) {
	if s.store == nil {
		return
	}
	data, _ := json.Marshal(c) // plain fields: always marshals
	s.store.PutCheckpoint(s.spec.ID, store.Checkpoint{ID: c.ID, Run: c.Run, Created: c.Created, Data: data})
}

// loadCheckpoints reads a stored session's checkpoints.
func loadCheckpoints(st *store.Store, id string) ([]Checkpoint, error) {
	stored, err := st.Checkpoints(id)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, 0, len(stored))
	for _, sc := range stored {
		var c Checkpoint
		if err := json.Unmarshal(sc.Data, &c); err != nil {
			continue // damaged: that point is lost, the others stay
		}
		c.ID, c.Run = sc.ID, sc.Run
		out = append(out, c)
	}
	return out, nil
}

func (c Checkpoint) ref() *CheckpointRef {
	r := &CheckpointRef{ID: c.ID, Run: c.Run, Kind: c.Kind, Title: c.Title, Error: c.Error}
	for _, f := range c.Files {
		r.Files += f.Files
		r.Bytes += f.Bytes
		r.Partial = r.Partial || f.Partial
		for _, sk := range f.Skipped {
			if len(r.Skipped) < 20 {
				r.Skipped = append(r.Skipped, sk.Path+": "+sk.Why)
			}
		}
	}
	return r
}

func (c Checkpoint) describe() string {
	what := fmt.Sprintf("checkpoint %d before run %d", c.ID, c.Run)
	if c.Kind == CheckpointCompact {
		what = fmt.Sprintf("checkpoint %d before compacting", c.ID)
	}
	r := c.ref()
	switch {
	case c.Error != "":
		return what + ": the conversation only (" + c.Error + ")"
	case len(c.Files) == 0:
		return what + ": the conversation"
	}
	return fmt.Sprintf("%s: the conversation and %d files (%s)", what, r.Files, Size(r.Bytes))
}

// Size says a number of bytes for people: "1.5 MiB", "12 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// hold waits until no run goes on (cancelling the one going on when
// cancel is set, else failing with loop.ErrBusy) and keeps runs from
// starting until release is called: a prompt sent meanwhile waits.
func (s *Session) hold(ctx context.Context, cancel bool) (release func(), cancelled bool, err error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, cancelled, fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
		case !s.busy:
			s.busy, s.live = true, false
			s.mu.Unlock()
			return func() {
				s.mu.Lock()
				s.busy = false
				s.cond.Broadcast()
				s.mu.Unlock()
			}, cancelled, nil
		case !cancel && s.last.Run < s.runs:
			s.mu.Unlock()
			return nil, false, fmt.Errorf("session %s: %w", s.spec.ID, loop.ErrBusy)
		}
		// A run that ended (run_ended was heard, and a face may already
		// have answered its client) has only its snapshot left to take:
		// wait for it rather than call the session busy.
		stop := s.cancel
		if s.last.Run >= s.runs {
			stop = nil // it ended (run_ended): only its snapshot is left to take
		}
		s.mu.Unlock()
		if stop != nil {
			stop(loop.ErrCancelled)
			cancelled = true
		}
		if err := s.WaitIdle(ctx); err != nil {
			return nil, cancelled, err
		}
	}
}

// Undo takes back the newest checkpoint's run (or compaction): its file
// changes and its part of the conversation. See Rewind.
func (s *Session) Undo(ctx context.Context, conflicts string) (RewindReport, error) {
	return s.Rewind(ctx, RewindOptions{Conflicts: conflicts})
}

// Rewind goes back to a checkpoint: the workspace's files as they were
// then (what tools and commands changed since, created or deleted), and
// the conversation (the messages since leave agent 0's history, so the
// next request no longer holds them; the checkpoints since go with them).
// A run going on is cancelled first. Files changed outside the agent
// since the checkpoint are a *ConflictError unless o.Conflicts decides
// them. Processes still running in the sandbox are named in the report.
func (s *Session) Rewind(ctx context.Context, o RewindOptions) (RewindReport, error) {
	if !o.Files && !o.Conversation {
		o.Files, o.Conversation = true, true
	}
	switch o.Conflicts {
	case "", ConflictsKeep, ConflictsOverwrite:
	default:
		return RewindReport{}, fmt.Errorf("rewind: %w: conflicts must be %q or %q, not %q", ErrInvalid, ConflictsKeep, ConflictsOverwrite, o.Conflicts)
	}
	release, cancelled, err := s.hold(ctx, true)
	if err != nil {
		return RewindReport{}, fmt.Errorf("rewind: %w", err)
	}
	defer release()
	cps := s.Checkpoints()
	i := len(cps) - 1
	if o.To != 0 {
		i = slices.IndexFunc(cps, func(c Checkpoint) bool { return c.ID == o.To })
	}
	if i < 0 {
		if o.To == 0 {
			return RewindReport{}, fmt.Errorf("rewind: %w: the session has no checkpoint yet (one is taken before each run)", ErrNoCheckpoint)
		}
		return RewindReport{}, fmt.Errorf("rewind to checkpoint %d: %w (the session has %s)", o.To, ErrNoCheckpoint, listIDs(cps))
	}
	c := cps[i]
	rep := RewindReport{To: c.ID, Run: c.Run, Kind: c.Kind, Files: o.Files, Conversation: o.Conversation, Cancelled: cancelled}
	if o.Files && len(c.Files) > 0 {
		if s.snaps == nil {
			return rep, fmt.Errorf("rewind files: %w: no snapshot store in this process", ErrUnsupported)
		}
		changed, err := s.changedOutside(ctx, cps[i:])
		if err != nil {
			return rep, fmt.Errorf("rewind: %w", err)
		}
		if len(changed) > 0 && o.Conflicts == "" {
			return rep, &ConflictError{To: c.ID, Paths: changed}
		}
		var keep func(string) bool
		if o.Conflicts == ConflictsKeep {
			set := make(map[string]bool, len(changed))
			for _, p := range changed {
				set[p] = true
			}
			keep = func(p string) bool { return set[p] }
		}
		for _, f := range c.Files {
			name := rootName(f.Root, len(c.Files))
			res, err := s.snaps.Restore(ctx, f.Root, f.Before, prefixed(keep, name))
			rep.Restored = append(rep.Restored, named(name, res.Restored)...)
			rep.Deleted = append(rep.Deleted, named(name, res.Deleted)...)
			rep.Kept = append(rep.Kept, named(name, res.Kept)...)
			for _, sk := range res.Failed {
				rep.Failed = append(rep.Failed, name+sk.Path+": "+sk.Why)
			}
			if err != nil {
				return rep, fmt.Errorf("rewind files of %s: %w", f.Root, err)
			}
		}
	} else if o.Files && c.Error != "" {
		rep.Failed = append(rep.Failed, "files: "+c.Error)
	}
	if o.Conversation {
		before := s.ls.Mark()
		if err := s.ls.RewindHistory(c.History); err != nil {
			return rep, err
		}
		rep.Messages = before.Messages - c.History.Messages
		if s.store != nil {
			s.store.TruncateHistory(s.spec.ID, 0, c.History.Messages, c.History.Summaries)
		}
		if !o.Files && i > 0 {
			// The files stay as the undone runs left them: the checkpoint
			// before now ends where the last of them ended, and keeps
			// what the person changed in between.
			if err := s.fold(ctx, cps[i-1], cps[i:]); err != nil {
				s.emit(Event{Type: loop.EventWarning, Time: s.now(), Text: "rewind: " + err.Error()})
			}
		}
		for _, u := range cps[i:] {
			u.Undone = true
			s.setCheckpoint(u)
		}
	} else if o.Files && len(c.Files) > 0 {
		// The conversation stays, the files went back: the newest
		// checkpoint ends now, and what the person kept stays theirs.
		last := cps[len(cps)-1]
		if err := s.rebase(ctx, last, rep.Kept); err != nil {
			s.emit(Event{Type: loop.EventWarning, Time: s.now(), Text: "rewind: " + err.Error()})
		}
	}
	rep.Running = s.ls.Activities()
	s.emit(Event{Type: EventRewound, Time: s.now(), Text: rep.describe(), Rewind: &rep})
	return rep, nil
}

// fold makes prev end where the last of dropped ended (their runs' files
// stay), keeping the paths changed outside the agent in the gaps between
// them.
func (s *Session) fold(ctx context.Context, prev Checkpoint, dropped []Checkpoint) error {
	if s.snaps == nil || len(prev.Files) == 0 {
		return nil
	}
	chain := append([]Checkpoint{prev}, dropped...)
	prev.Files = slices.Clone(prev.Files)
	for j := range prev.Files {
		f := &prev.Files[j]
		after := f.After
		outside := slices.Clone(f.Outside)
		for _, c := range chain[1:] {
			for _, g := range c.Files {
				if g.Root != f.Root {
					continue
				}
				if after != "" {
					chs, err := s.snaps.Between(after, g.Before)
					if err != nil {
						return err
					}
					for _, ch := range chs {
						outside = append(outside, ch.Path)
					}
				}
				outside = append(outside, g.Outside...)
				after = g.After
			}
		}
		slices.Sort(outside)
		f.After, f.Outside = after, slices.Compact(outside)
	}
	s.setCheckpoint(prev)
	return nil
}

// rebase makes last end now (after a rewind of the files only, which
// changed them), keeping kept (root-prefixed as reported) as changed
// outside the agent.
func (s *Session) rebase(ctx context.Context, last Checkpoint, kept []string) error {
	if s.snaps == nil || len(last.Files) == 0 {
		return nil
	}
	last.Files = slices.Clone(last.Files)
	for j := range last.Files {
		f := &last.Files[j]
		snap, err := s.snaps.Take(ctx, f.Root)
		if err != nil {
			return err
		}
		name := rootName(f.Root, len(last.Files))
		outside := slices.Clone(f.Outside)
		for _, p := range kept {
			if rel, ok := strings.CutPrefix(p, name); ok {
				outside = append(outside, rel)
			}
		}
		slices.Sort(outside)
		f.After, f.Outside = snap.ID, slices.Compact(outside)
	}
	s.setCheckpoint(last)
	return nil
}

// changedOutside names the paths changed outside the agent since the
// first of cps: between one run's end and the next one's start, and since
// the last run's end. A run that did not live to end its snapshot leaves
// its gap unknown.
func (s *Session) changedOutside(ctx context.Context, cps []Checkpoint) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(name string, chs []checkpoint.Change) {
		for _, ch := range chs {
			if p := name + ch.Path; !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	roots := map[string]int{}
	for _, c := range cps {
		for _, f := range c.Files {
			roots[f.Root] = max(roots[f.Root], len(c.Files))
		}
	}
	for root, n := range roots {
		name := rootName(root, n)
		var after string // the last run's snapshot at its end
		for _, c := range cps {
			for _, f := range c.Files {
				if f.Root != root {
					continue
				}
				if after != "" {
					chs, err := s.snaps.Between(after, f.Before)
					if err != nil {
						return nil, err
					}
					add(name, chs)
				}
				for _, p := range f.Outside {
					add(name, []checkpoint.Change{{Path: p}})
				}
				after = f.After
			}
		}
		if after != "" {
			chs, err := s.snaps.Changes(ctx, root, after)
			if err != nil {
				return nil, err
			}
			add(name, chs)
		}
	}
	slices.Sort(out)
	return out, nil
}

// rootName prefixes paths of one of n roots: nothing for a single root,
// else the root's folder name and a slash.
func rootName(root string, n int) string {
	if n <= 1 {
		return ""
	}
	return filepath.Base(root) + "/"
}

func prefixed(keep func(string) bool, name string) func(string) bool {
	if keep == nil {
		return nil
	}
	return func(p string) bool { return keep(name + p) }
}

func named(name string, paths []string) []string {
	if name == "" {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = name + p
	}
	return out
}

func listIDs(cps []Checkpoint) string {
	if len(cps) == 0 {
		return "none"
	}
	ids := make([]string, len(cps))
	for i, c := range cps {
		ids[i] = fmt.Sprint(c.ID)
	}
	return "checkpoints " + strings.Join(ids, ", ")
}

func (r RewindReport) describe() string {
	var parts []string
	if r.Cancelled {
		parts = append(parts, "the run going on was cancelled")
	}
	if r.Files {
		parts = append(parts, fmt.Sprintf("%d files restored, %d removed", len(r.Restored), len(r.Deleted)))
		if len(r.Kept) > 0 {
			parts = append(parts, fmt.Sprintf("%d changed outside the agent kept", len(r.Kept)))
		}
		if len(r.Failed) > 0 {
			parts = append(parts, fmt.Sprintf("%d could not be restored", len(r.Failed)))
		}
	}
	if r.Conversation {
		parts = append(parts, fmt.Sprintf("%d messages left the conversation", r.Messages))
	}
	before := fmt.Sprintf("before run %d", r.Run)
	if r.Kind == CheckpointCompact {
		before = "before compacting"
	}
	text := fmt.Sprintf("rewound to checkpoint %d (%s): %s", r.To, before, strings.Join(parts, "; "))
	if len(r.Running) > 0 {
		text += fmt.Sprintf("; still running in the sandbox, not undone: %s", strings.Join(r.Running, "; "))
	}
	return text
}

// Compact summarises agent 0's history now (loop.Session.Compact, focus
// guiding the summary), after a checkpoint of the conversation that a
// rewind goes back to. It fails with loop.ErrBusy during a run.
func (s *Session) Compact(ctx context.Context, focus string) (TokenChange, error) {
	release, _, err := s.hold(ctx, false)
	if err != nil {
		return TokenChange{}, fmt.Errorf("compact: %w", err)
	}
	defer release()
	s.mu.Lock()
	run := s.runs
	s.mu.Unlock()
	c := s.newCheckpoint(ctx, run, CheckpointCompact, strings.TrimSpace("/compact "+s.ls.Mask(focus)), false)
	ch, err := s.ls.Compact(ctx, focus)
	if err != nil {
		return TokenChange{}, err
	}
	s.commitCheckpoint(c) // after history_compressed: its Seq is before it
	return TokenChange{Before: ch.Before, After: ch.After}, nil
}

// PruneSnapshots removes the snapshots no checkpoint names any more (a
// deleted session's, a rewind's dropped ones): those of the stored
// sessions and of the sessions open here are kept.
func (m *Manager) PruneSnapshots() error {
	snaps := m.opts.Checkpoints
	if snaps == nil {
		return nil
	}
	var keep []string
	add := func(c Checkpoint) {
		for _, f := range c.Files {
			keep = append(keep, f.Before)
			if f.After != "" {
				keep = append(keep, f.After)
			}
		}
	}
	if st := m.opts.Store; st != nil {
		all, err := st.AllCheckpoints()
		if err != nil {
			return fmt.Errorf("prune snapshots: %w", err)
		}
		for _, data := range all {
			var c Checkpoint
			if json.Unmarshal(data, &c) == nil {
				add(c)
			}
		}
	}
	m.mu.Lock()
	open := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		open = append(open, s)
	}
	m.mu.Unlock()
	for _, s := range open {
		for _, c := range s.Checkpoints() {
			add(c)
		}
	}
	manifests, objects, freed, err := snaps.Prune(keep)
	if err != nil {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	m.opts.Logger.Info("snapshots pruned", "manifests", manifests, "objects", objects, "freed", freed)
	return nil
}
