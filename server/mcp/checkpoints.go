package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Checkpoints in MCP: zero_undo takes back a session's last run (or
// compaction), zero_rewind lists the checkpoints or goes back to one,
// zero_fork branches a session and zero_compact summarises its history.
// Before a rewind changes files the user changed since the checkpoint,
// the user is asked (elicitation) whether to keep or overwrite them; a
// client that cannot ask gets an error naming the files and the call to
// make again with conflicts set. Nothing is changed until then.

type (
	undoArgs struct {
		Session   string `json:"session" jsonschema:"Session id, from zero_start, zero_run or zero_sessions."`
		Conflicts string `json:"conflicts,omitempty" jsonschema:"What to do with files changed outside the agent since the checkpoint (the user's own edits): keep leaves them as they are, overwrite restores them too (the user's changes to them are lost). Omit it: the user is asked, or the call fails naming the files, with nothing changed."`
	}
	rewindArgs struct {
		Session string `json:"session" jsonschema:"Session id, from zero_start, zero_run or zero_sessions."`
		// To, Files and Conversation are pointers to tell a value from a
		// missing one.
		To           *int   `json:"to,omitempty" jsonschema:"Id of the checkpoint to go back to (the state just before its run). Omit it to list the checkpoints, changing nothing."`
		Files        *bool  `json:"files,omitempty" jsonschema:"Put the workspace's files back as they were at the checkpoint. Default: true, unless conversation alone is set."`
		Conversation *bool  `json:"conversation,omitempty" jsonschema:"Take the messages since the checkpoint out of the conversation. Default: true, unless files alone is set."`
		Conflicts    string `json:"conflicts,omitempty" jsonschema:"What to do with files changed outside the agent since the checkpoint (the user's own edits): keep leaves them as they are, overwrite restores them too (the user's changes to them are lost). Omit it: the user is asked, or the call fails naming the files, with nothing changed."`
	}
	forkArgs struct {
		Session string `json:"session" jsonschema:"Id of the session to fork, from zero_start, zero_run or zero_sessions."`
		AtRun   *int   `json:"at_run,omitempty" jsonschema:"The fork holds the conversation up to the end of this run (1 is the first). Default: every run that ended."`
	}
	compactArgs struct {
		Session string `json:"session" jsonschema:"Session id, from zero_start, zero_run or zero_sessions."`
		Focus   string `json:"focus,omitempty" jsonschema:"What the summary should keep (a file, a decision, an error being chased). Default: the summary decides."`
	}

	// rewoundOut is what a rewind did (zero_undo's result, and zero_rewind's
	// with to).
	rewoundOut struct {
		Session      string   `json:"session"`
		Checkpoint   int      `json:"checkpoint" jsonschema:"the checkpoint gone back to"`
		Run          int      `json:"run" jsonschema:"the run it was taken before: that run and those after it are taken back"`
		Files        bool     `json:"files" jsonschema:"the files went back"`
		Conversation bool     `json:"conversation" jsonschema:"the conversation went back"`
		RunCancelled bool     `json:"run_cancelled,omitempty" jsonschema:"a run was going on: it was cancelled first"`
		Restored     []string `json:"restored,omitempty" jsonschema:"files written back as they were (relative to the workspace)"`
		Removed      []string `json:"removed,omitempty" jsonschema:"files created since, removed"`
		Kept         []string `json:"kept,omitempty" jsonschema:"files changed outside the agent, left as they are"`
		Failed       []string `json:"failed,omitempty" jsonschema:"files that could not be restored, with why"`
		Messages     int      `json:"messages_removed" jsonschema:"messages that left the conversation"`
		StillRunning []string `json:"still_running,omitempty" jsonschema:"processes still running in the sandbox: Zero cannot undo what they do from now on"`
	}
	rewindOut struct {
		Session     string          `json:"session"`
		Checkpoints []checkpointOut `json:"checkpoints" jsonschema:"the session's checkpoints, oldest first (after the rewind, when there was one)"`
		Rewound     *rewoundOut     `json:"rewound,omitempty" jsonschema:"what the rewind did (with to)"`
	}
	checkpointOut struct {
		ID      int    `json:"id" jsonschema:"pass to zero_rewind as to"`
		Run     int    `json:"run" jsonschema:"the run it was taken before"`
		Kind    string `json:"kind" jsonschema:"run: taken before a run; compact: before a zero_compact (conversation only)"`
		Title   string `json:"title,omitempty" jsonschema:"the run's message, cut"`
		Created string `json:"created" jsonschema:"when it was taken (RFC 3339)"`
		Files   int    `json:"files" jsonschema:"files of the workspace it covers"`
		Bytes   int64  `json:"bytes,omitempty"`
		// Skipped names what the snapshot left out: at most 20, the rest
		// counted in SkippedMore.
		Skipped     []string `json:"skipped,omitempty" jsonschema:"what it does not cover, and why (.gitignore'd folders, large files): a rewind leaves them as they are"`
		SkippedMore int      `json:"skipped_more,omitempty" jsonschema:"more paths not covered, not listed"`
		Partial     bool     `json:"partial,omitempty" jsonschema:"the workspace was too large: some files are not covered"`
		Error       string   `json:"error,omitempty" jsonschema:"why the files are not covered: only the conversation goes back"`
	}
	forkOut struct {
		Session   string `json:"session" jsonschema:"the new session's id: continue it with zero_reply or zero_start like any session"`
		From      string `json:"from" jsonschema:"the session it was forked from, which is left as it was"`
		Run       int    `json:"run" jsonschema:"the fork holds the conversation up to the end of this run"`
		Title     string `json:"title,omitempty"`
		Workspace string `json:"workspace,omitempty"`
	}
	compactOut struct {
		Session    string `json:"session"`
		Before     int    `json:"tokens_before" jsonschema:"the history's size in tokens before"`
		After      int    `json:"tokens_after" jsonschema:"its size after"`
		Checkpoint int    `json:"checkpoint,omitempty" jsonschema:"the checkpoint taken before: zero_undo takes the compaction back"`
	}
)

// conflictChoices are the answers to the question about files changed
// outside the agent: the two resolutions, and cancel.
var conflictChoices = []string{server.ConflictsKeep, server.ConflictsOverwrite, "cancel"}

// checkConflicts checks a conflicts argument.
func checkConflicts(c string) error {
	switch c {
	case "", server.ConflictsKeep, server.ConflictsOverwrite:
		return nil
	}
	return badArg("conflicts", "must be %q or %q, not %q", server.ConflictsKeep, server.ConflictsOverwrite, c)
}

func (f *face) handleUndo(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a undoArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	if err := checkConflicts(a.Conflicts); err != nil {
		return toolError(err), nil
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	rep, res := f.rewind(ctx, req, s, server.RewindOptions{Conflicts: a.Conflicts}, "zero_undo")
	if res != nil {
		return res, nil
	}
	out := newRewound(s, rep)
	return result(out, rewoundSummary(out)), nil
}

func (f *face) handleRewind(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a rewindArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	if err := checkConflicts(a.Conflicts); err != nil {
		return toolError(err), nil
	}
	if a.To == nil && (a.Files != nil || a.Conversation != nil || a.Conflicts != "") {
		return toolError(badArg("to", "required with files, conversation or conflicts: call zero_rewind with the session alone to list the checkpoints, or zero_undo to take back the last run")), nil
	}
	if a.To != nil && *a.To < 1 {
		return toolError(badArg("to", "must be a checkpoint id (1 or more), not %d: call zero_rewind with the session alone to list them", *a.To)), nil
	}
	files, conv := a.Files != nil && *a.Files, a.Conversation != nil && *a.Conversation
	if a.Files != nil && a.Conversation != nil && !files && !conv {
		return toolError(badArg("files", "files and conversation are both false: nothing would go back")), nil
	}
	// One of them set false alone means the other alone.
	if a.Files != nil && !files && a.Conversation == nil {
		conv = true
	}
	if a.Conversation != nil && !conv && a.Files == nil {
		files = true
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	if a.To == nil {
		out := rewindOut{Session: s.ID(), Checkpoints: checkpointList(s.Checkpoints())}
		return result(out, listSummary(out)), nil
	}
	o := server.RewindOptions{To: *a.To, Files: files, Conversation: conv, Conflicts: a.Conflicts}
	rep, res := f.rewind(ctx, req, s, o, "zero_rewind")
	if res != nil {
		return res, nil
	}
	rw := newRewound(s, rep)
	out := rewindOut{Session: s.ID(), Checkpoints: checkpointList(s.Checkpoints()), Rewound: &rw}
	return result(out, rewoundSummary(rw)), nil
}

// maxAsks bounds how often one call asks the user about files changed
// outside the agent: each answer is checked against the files changed by
// then, and files that changed again meanwhile are asked about again.
const maxAsks = 3

// rewind rewinds s as o says. When files changed outside the agent since
// the checkpoint and o does not say what to do with them, the user is
// asked when the client can elicit: before 2026-07-28 by elicitation/create
// from here, from then on by an input-required result (res) the client
// calls again with the answer. Otherwise res is the error that names the
// files and the call to make again. An answer holds only for the files the
// user was shown: those changed since are asked about again. res is the
// result to give instead of the report: the question, or an error.
func (f *face) rewind(ctx context.Context, req mcp.CallToolRequest, s *server.Session, o server.RewindOptions, tool string) (rep server.RewindReport, res *mcp.CallToolResult) {
	var (
		shown     *shownConflict // what the user was shown, and their answer
		choice    string
		cancelled bool // a run was cancelled by a call that changed nothing
	)
	if st := req.Params.RequestState; st != "" {
		sc, ok := openConflictState(st)
		if !ok {
			return rep, toolError(badArg("requestState", "not a state this server gave"))
		}
		shown, cancelled = &sc, sc.Cancelled
		choice = conflictAnswer(mcpserver.ElicitationResponse(req.Params.InputResponses, conflictInput))
		if choice == "" {
			return rep, userCancelled(s, cancelled)
		}
	}
	modern := mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx))
	elicits := clientCaps(ctx).Elicitation != nil
	for asked := 0; ; asked++ {
		var err error
		rep, err = s.Rewind(ctx, o)
		cancelled = cancelled || rep.Cancelled
		var ce *server.ConflictError
		if errors.As(err, &ce) && shown != nil && shown.covers(ce) {
			// The user answered about exactly these files (or more).
			o2 := o
			o2.Conflicts = choice
			rep, err = s.Rewind(ctx, o2)
			cancelled = cancelled || rep.Cancelled
			if errors.As(err, &ce) { // cannot be: a choice settles conflicts
				return rep, toolError(err)
			}
		}
		rep.Cancelled = cancelled
		switch {
		case err == nil:
			return rep, nil
		case !errors.As(err, &ce):
			return rep, rewindError(s, o, rep, err)
		case !elicits || asked == maxAsks:
			return rep, conflictResult(s, ce, tool, cancelled, "")
		case modern:
			next := shownConflict{To: ce.To, Paths: ce.Paths, Cancelled: cancelled}
			return rep, mcpserver.NewInputRequestBuilder(next.seal()).Elicit(conflictInput, conflictQuestion(s, ce)).ToolResult()
		}
		answer, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params:  conflictQuestion(s, ce),
		})
		if err != nil {
			return rep, conflictResult(s, ce, tool, cancelled, "the user could not be asked ("+err.Error()+")")
		}
		if choice = conflictAnswer(answer); choice == "" {
			return rep, userCancelled(s, cancelled)
		}
		shown = &shownConflict{To: ce.To, Paths: ce.Paths}
	}
}

// conflictInput keys the question about files changed outside the agent
// among a call's input requests.
const conflictInput = "conflicts"

// conflictQuestion asks the user what to do with the files ce names.
func conflictQuestion(s *server.Session, ce *server.ConflictError) mcp.ElicitationParams {
	var b strings.Builder
	fmt.Fprintf(&b, "Zero is rewinding session %s to checkpoint %d%s. These files changed since, not by the agent (you or another program changed them):\n\n",
		s.ID(), ce.To, checkpointWhat(s, ce.To))
	shown := ce.Paths
	if len(shown) > 50 {
		shown = shown[:50]
	}
	for _, p := range shown {
		b.WriteString("  " + p + "\n")
	}
	if n := len(ce.Paths) - len(shown); n > 0 {
		fmt.Fprintf(&b, "  and %d more\n", n)
	}
	b.WriteString("\nKeep my changes: they stay as they are; everything else goes back.\n" +
		"Overwrite them: they go back to the checkpoint too; your changes to them are lost.\n" +
		"Cancel: nothing changes.")
	return mcp.ElicitationParams{
		Message: b.String(),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"choice": map[string]any{
					"type": "string", "title": "Your changes to these files",
					"enum":      conflictChoices,
					"enumNames": []string{"Keep my changes", "Overwrite them", "Cancel"},
					"default":   server.ConflictsKeep,
				},
			},
			"required": []string{"choice"},
		},
	}
}

// checkpointWhat says what checkpoint id of s was taken before.
func checkpointWhat(s *server.Session, id int) string {
	for _, c := range s.Checkpoints() {
		if c.ID != id {
			continue
		}
		if c.Kind == server.CheckpointCompact {
			return " (before compacting)"
		}
		if c.Title != "" {
			return fmt.Sprintf(" (before run %d: %q)", c.Run, c.Title)
		}
		return fmt.Sprintf(" (before run %d)", c.Run)
	}
	return ""
}

// conflictAnswer is the resolution the user chose, or "" when they
// cancelled (or did not answer).
func conflictAnswer(res *mcp.ElicitationResult) string {
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return ""
	}
	m, _ := res.Content.(map[string]any)
	switch c, _ := m["choice"].(string); c {
	case server.ConflictsKeep, server.ConflictsOverwrite:
		return c
	}
	return ""
}

// conflictResult is the error of a rewind that stopped at files changed
// outside the agent: it names them and the call to make again. why says
// why the user was not asked ("" for a client that cannot ask).
func conflictResult(s *server.Session, ce *server.ConflictError, tool string, cancelled bool, why string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Files changed outside the agent since checkpoint %d%s: %s. Nothing was changed.", ce.To, checkpointWhat(s, ce.To), nameList(ce.Paths, 50))
	if cancelled {
		b.WriteString(" The run in progress was cancelled.")
	}
	if why != "" {
		b.WriteString(" " + strings.ToUpper(why[:1]) + why[1:] + ".")
	}
	fmt.Fprintf(&b, " Ask the user, then call %s again with conflicts %q (their changes stay as they are, everything else goes back) or %q (those files go back too: their changes are lost).",
		tool, server.ConflictsKeep, server.ConflictsOverwrite)
	return mcp.NewToolResultError(b.String())
}

func userCancelled(s *server.Session, cancelled bool) *mcp.CallToolResult {
	msg := "The user cancelled the rewind of session " + s.ID() + ": nothing was changed."
	if cancelled {
		msg += " The run in progress was cancelled."
	}
	return mcp.NewToolResultError(msg)
}

// rewindError is the result of a rewind that failed otherwise: what it did
// before it failed is said too.
func rewindError(s *server.Session, o server.RewindOptions, rep server.RewindReport, err error) *mcp.CallToolResult {
	var msg error
	switch {
	case errors.Is(err, server.ErrNoCheckpoint) && o.To == 0:
		msg = fmt.Errorf("nothing to undo: session %s has no checkpoint yet (one is taken before each run)", s.ID())
	case errors.Is(err, server.ErrNoCheckpoint):
		msg = badArg("to", "session %s has no checkpoint %d; it has %s (zero_rewind with the session alone lists them)", s.ID(), o.To, idList(s.Checkpoints()))
	case errors.Is(err, server.ErrUnsupported):
		msg = fmt.Errorf("%w; rewind the conversation alone (conversation: true)", err)
	default:
		msg = err
	}
	text := msg.Error()
	if len(rep.Restored)+len(rep.Deleted)+len(rep.Kept)+len(rep.Failed) > 0 {
		// It failed halfway: what it did so far is said too.
		text += "\nWhat was done before it failed: " + rewoundSummary(newRewound(s, rep))
	} else if rep.Cancelled {
		text += "\nThe run in progress was cancelled."
	}
	return mcp.NewToolResultError(text)
}

func idList(cps []server.Checkpoint) string {
	if len(cps) == 0 {
		return "none"
	}
	ids := make([]string, len(cps))
	for i, c := range cps {
		ids[i] = fmt.Sprint(c.ID)
	}
	return "checkpoints " + strings.Join(ids, ", ")
}

// nameList names paths, at most limit of them, and how many more.
func nameList(paths []string, limit int) string {
	shown := paths
	if len(shown) > limit {
		shown = shown[:limit]
	}
	s := strings.Join(shown, ", ")
	if n := len(paths) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// shownConflict is what the question about files changed outside the
// agent showed the user: the checkpoint and the files. It is the request
// state of a 2026-07-28 call. It needs no seal: the caller may set
// conflicts itself, and an answer only settles the files the state names
// (covers).
type shownConflict struct {
	To        int      `json:"to"`
	Paths     []string `json:"paths"`
	Cancelled bool     `json:"cancelled,omitempty"` // the first call cancelled a run
}

const conflictStatePrefix = "zero-rewind:"

func (c shownConflict) seal() string {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // plain fields
	}
	return conflictStatePrefix + base64.RawURLEncoding.EncodeToString(b)
}

func openConflictState(state string) (shownConflict, bool) {
	rest, ok := strings.CutPrefix(state, conflictStatePrefix)
	if !ok {
		return shownConflict{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return shownConflict{}, false
	}
	var c shownConflict
	if err := json.Unmarshal(b, &c); err != nil || c.To < 1 {
		return shownConflict{}, false
	}
	return c, true
}

// covers reports whether the user was shown every file ce names, for its
// checkpoint: their answer then settles it.
func (c *shownConflict) covers(ce *server.ConflictError) bool {
	if c.To != ce.To {
		return false
	}
	for _, p := range ce.Paths {
		if !slices.Contains(c.Paths, p) {
			return false
		}
	}
	return true
}

func newRewound(s *server.Session, r server.RewindReport) rewoundOut {
	return rewoundOut{Session: s.ID(), Checkpoint: r.To, Run: r.Run, Files: r.Files, Conversation: r.Conversation,
		RunCancelled: r.Cancelled, Restored: r.Restored, Removed: r.Deleted, Kept: r.Kept, Failed: r.Failed,
		Messages: r.Messages, StillRunning: r.Running}
}

// rewoundSummary says what a rewind did.
func rewoundSummary(o rewoundOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound session %s to checkpoint %d (before run %d).", o.Session, o.Checkpoint, o.Run)
	if o.RunCancelled {
		b.WriteString(" The run in progress was cancelled first.")
	}
	if o.Files {
		var parts []string
		if len(o.Restored) > 0 {
			parts = append(parts, fmt.Sprintf("%d restored (%s)", len(o.Restored), nameList(o.Restored, 20)))
		}
		if len(o.Removed) > 0 {
			parts = append(parts, fmt.Sprintf("%d removed (%s)", len(o.Removed), nameList(o.Removed, 20)))
		}
		if len(parts) == 0 {
			parts = append(parts, "none had changed")
		}
		b.WriteString("\nFiles: " + strings.Join(parts, "; ") + ".")
		if len(o.Kept) > 0 {
			b.WriteString("\nKept as the user changed them: " + nameList(o.Kept, 20) + ".")
		}
		if len(o.Failed) > 0 {
			b.WriteString("\nCould not be restored: " + nameList(o.Failed, 20) + ".")
		}
	} else {
		b.WriteString("\nThe files were left as they are.")
	}
	if o.Conversation {
		fmt.Fprintf(&b, "\nConversation: %s removed; the next run does not see them.", plural(o.Messages, "message"))
	} else {
		b.WriteString("\nThe conversation was left as it is.")
	}
	if len(o.StillRunning) > 0 {
		b.WriteString("\nStill running in the sandbox (Zero cannot undo what they do from now on): " + strings.Join(o.StillRunning, "; ") + ".")
	}
	return b.String()
}

func checkpointList(cps []server.Checkpoint) []checkpointOut {
	out := make([]checkpointOut, 0, len(cps))
	for _, c := range cps {
		co := checkpointOut{ID: c.ID, Run: c.Run, Kind: c.Kind, Title: c.Title, Created: c.Created.UTC().Format(time.RFC3339), Error: c.Error}
		for _, f := range c.Files {
			co.Files += f.Files
			co.Bytes += f.Bytes
			co.Partial = co.Partial || f.Partial
			co.SkippedMore += f.SkippedCount
			for _, sk := range f.Skipped {
				if len(co.Skipped) < 20 {
					co.Skipped = append(co.Skipped, sk.Path+": "+sk.Why)
				} else {
					co.SkippedMore++
				}
			}
		}
		out = append(out, co)
	}
	return out
}

func listSummary(o rewindOut) string {
	if len(o.Checkpoints) == 0 {
		return fmt.Sprintf("Session %s has no checkpoint yet: one is taken before each run.", o.Session)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s has %s, oldest first. zero_rewind {session, to: id} goes back to one (the state just before its run); zero_undo takes back the newest.", o.Session, plural(len(o.Checkpoints), "checkpoint"))
	for _, c := range o.Checkpoints {
		what := fmt.Sprintf("before run %d", c.Run)
		if c.Kind == server.CheckpointCompact {
			what = "before compacting"
		}
		fmt.Fprintf(&b, "\n%d: %s", c.ID, what)
		if c.Title != "" {
			fmt.Fprintf(&b, " %q", c.Title)
		}
		fmt.Fprintf(&b, ", %s", c.Created)
		switch {
		case c.Error != "":
			b.WriteString("; the conversation only: " + c.Error)
		case c.Kind == server.CheckpointCompact:
			b.WriteString("; the conversation")
		default:
			fmt.Fprintf(&b, "; %d files", c.Files)
			if c.Partial {
				b.WriteString(" (partial: the workspace is too large)")
			}
			if len(c.Skipped) > 0 {
				b.WriteString("; not covered: " + strings.Join(c.Skipped, ", "))
				if c.SkippedMore > 0 {
					fmt.Fprintf(&b, " and %d more", c.SkippedMore)
				}
			}
		}
	}
	return b.String()
}

func (f *face) handleFork(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a forkArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	at := 0
	if a.AtRun != nil {
		if *a.AtRun < 1 {
			return toolError(badArg("at_run", "must be a run number (1 or more), not %d; omit it to fork after the last run", *a.AtRun)), nil
		}
		at = *a.AtRun
	}
	// The original is not opened here: with a store, another process may
	// hold it, and the fork is read from the store.
	info, err := f.mgr.Fork(context.WithoutCancel(ctx), a.Session, at)
	switch {
	case errors.Is(err, server.ErrNotFound):
		return toolError(badArg("session", "no session %q (zero_sessions lists them)", a.Session)), nil
	case errors.Is(err, server.ErrInvalid) && a.AtRun == nil:
		return toolError(badArg("session", "%v", err)), nil
	case errors.Is(err, server.ErrInvalid):
		return toolError(badArg("at_run", "%v", err)), nil
	case err != nil:
		return toolError(fmt.Errorf("fork: %w", err)), nil
	}
	out := forkOut{Session: info.ID, From: a.Session, Run: info.Runs, Title: info.Title}
	if len(info.Roots) > 0 {
		out.Workspace = info.Roots[0]
	}
	summary := fmt.Sprintf("Forked session %s after run %d: the new session is %s. Continue it with zero_reply {session: %q, message: ...} (or zero_start, zero_run with session); %s is left as it was.",
		a.Session, out.Run, info.ID, info.ID, a.Session)
	return result(out, summary), nil
}

func (f *face) handleCompact(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a compactArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	ch, err := s.Compact(ctx, strings.TrimSpace(a.Focus))
	switch {
	case errors.Is(err, loop.ErrBusy):
		return toolError(fmt.Errorf("session %s is running: wait for the run to end (zero_status) or cancel it (zero_cancel), then compact", s.ID())), nil
	case errors.Is(err, loop.ErrNothingToCompact), errors.Is(err, loop.ErrSummaryNotShorter):
		return toolError(fmt.Errorf("session %s: %w", s.ID(), err)), nil
	case err != nil:
		return toolError(fmt.Errorf("compact: %w", err)), nil
	}
	out := compactOut{Session: s.ID(), Before: ch.Before, After: ch.After}
	if cps := s.Checkpoints(); len(cps) > 0 && cps[len(cps)-1].Kind == server.CheckpointCompact {
		out.Checkpoint = cps[len(cps)-1].ID
	}
	summary := fmt.Sprintf("Compacted the history of session %s from %d to %d tokens; zero_undo takes it back.", s.ID(), ch.Before, ch.After)
	return result(out, summary), nil
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
