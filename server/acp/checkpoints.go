package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Checkpoints in ACP: the slash commands /undo, /rewind, /compact and
// /fork, the unstable session/fork, and the question a rewind puts to the
// user (session/request_permission) when files changed outside the agent
// since the checkpoint. What a rewind did is said by the rewound event (see
// mapper.text), live and in a replay alike.

// Options of the question about files changed outside the agent.
const (
	optKeep      = "keep"
	optOverwrite = "overwrite"
	optCancel    = "cancel"
)

// undoCommand answers /undo [keep|overwrite].
func (a *agent) undoCommand(ctx context.Context, st *sessState, args []string) string {
	var o server.RewindOptions
	for _, w := range args {
		switch w = strings.ToLower(w); w {
		case server.ConflictsKeep, server.ConflictsOverwrite:
			o.Conflicts = w
		default:
			return fmt.Sprintf("/undo takes back the last run (or /compact); it takes no argument but keep or overwrite (what to do with files you changed since), not %q.", w)
		}
	}
	return a.rewind(ctx, st, o, "/undo")
}

// rewindCommand answers /rewind (the checkpoints) and
// /rewind N [files|conversation] [keep|overwrite].
func (a *agent) rewindCommand(ctx context.Context, st *sessState, args []string) string {
	if len(args) == 0 {
		return checkpointList(st.sess.Checkpoints())
	}
	n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
	if err != nil || n < 1 {
		return fmt.Sprintf("%q is not a checkpoint number: /rewind alone lists them, /rewind N [files | conversation] goes back to checkpoint N.", args[0])
	}
	o := server.RewindOptions{To: n}
	for _, w := range args[1:] {
		switch w = strings.ToLower(w); w {
		case "files":
			o.Files = true
		case "conversation":
			o.Conversation = true
		case "both":
			o.Files, o.Conversation = true, true
		case server.ConflictsKeep, server.ConflictsOverwrite:
			o.Conflicts = w
		default:
			return fmt.Sprintf("/rewind %d takes files or conversation (neither: both), and keep or overwrite for files you changed since; not %q.", n, w)
		}
	}
	again := fmt.Sprintf("/rewind %d", n)
	switch {
	case o.Files && !o.Conversation:
		again += " files"
	case o.Conversation && !o.Files:
		again += " conversation"
	}
	return a.rewind(ctx, st, o, again)
}

// rewind rewinds st's session, asking the user about files changed outside
// the agent since the checkpoint. Its reply is empty when it worked: the
// rewound event says what went back. again is the command that does the
// same (for the user to send again with keep or overwrite).
func (a *agent) rewind(ctx context.Context, st *sessState, o server.RewindOptions, again string) string {
	rep, err := st.sess.Rewind(ctx, o)
	var ce *server.ConflictError
	if errors.As(err, &ce) && o.Conflicts == "" {
		choice, reply := a.askConflict(ctx, st, ce, again)
		if choice == "" {
			return reply
		}
		o.Conflicts = choice
		rep, err = st.sess.Rewind(ctx, o)
	}
	if err == nil {
		return ""
	}
	var msg string
	switch {
	case errors.Is(err, server.ErrNoCheckpoint) && o.To == 0:
		msg = "There is nothing to undo: the session has no checkpoint yet (one is taken before each run)."
	case errors.Is(err, server.ErrNoCheckpoint):
		msg = fmt.Sprintf("There is no checkpoint %d: /rewind lists them.", o.To)
		if len(st.sess.Checkpoints()) == 0 {
			msg = fmt.Sprintf("There is no checkpoint %d: the session has none yet (one is taken before each run).", o.To)
		}
	case errors.As(err, &ce):
		msg = "Files changed outside the agent again meanwhile: " + ce.Error() + "."
	default:
		msg = "Could not rewind: " + err.Error() + "."
	}
	if len(rep.Restored)+len(rep.Deleted)+len(rep.Kept)+len(rep.Failed) > 0 {
		// It failed halfway: what it did so far is said too.
		msg = rewindReport(rep) + "\n\n" + msg
	}
	return msg
}

// askConflict asks the user, with session/request_permission, what to do
// with the files changed outside the agent since the checkpoint: choice is
// server.ConflictsKeep or server.ConflictsOverwrite, or "" with the reply
// to give (the user cancelled, or the editor could not ask).
func (a *agent) askConflict(ctx context.Context, st *sessState, ce *server.ConflictError, again string) (choice, reply string) {
	id := sdk.ToolCallId(fmt.Sprintf("zero-rewind-%d", a.rewinds.Add(1)))
	title := fmt.Sprintf("Rewind to checkpoint %d: %s changed outside the agent since", ce.To, nameList(ce.Paths, 3, false))
	var b strings.Builder
	fmt.Fprintf(&b, "These files changed since the checkpoint, not by the agent (you or another program changed them):\n\n")
	for _, p := range ce.Paths {
		fmt.Fprintf(&b, "- `%s`\n", p)
	}
	b.WriteString("\n**Keep my changes**: they stay as they are; everything else goes back.\n" +
		"**Overwrite them**: they go back to the checkpoint too; your changes to them are lost.\n" +
		"**Cancel**: nothing changes.")
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(b.String()))}
	var locs []sdk.ToolCallLocation
	for _, p := range ce.Paths {
		locs = append(locs, sdk.ToolCallLocation{Path: absPath(st.sess.Spec().Roots, p)})
	}
	kind := sdk.ToolKindEdit
	idx := st.enqueue(item{update: sdkPtr(sdk.StartToolCall(id, title, sdk.WithStartKind(kind),
		sdk.WithStartStatus(sdk.ToolCallStatusPending), sdk.WithStartContent(content), sdk.WithStartLocations(locs)))})
	if err := st.waitSent(ctx, idx); err != nil {
		return "", "Nothing was changed: " + err.Error() + "."
	}
	end := func(status sdk.ToolCallStatus, text string) {
		st.enqueue(item{update: sdkPtr(sdk.UpdateToolCall(id, sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent(append(slices.Clip(content), sdk.ToolContent(sdk.TextBlock(text))))))})
	}
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(st.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: &kind, Status: sdk.Ptr(sdk.ToolCallStatusPending),
			Content: content, Locations: locs},
		Options: []sdk.PermissionOption{
			{OptionId: optKeep, Name: "Keep my changes", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optOverwrite, Name: "Overwrite them", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: optCancel, Name: "Cancel", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	switch {
	case err != nil && ctx.Err() == nil:
		a.opts.Logger.Warn("permission request failed", "session", st.id, "err", err)
		end(sdk.ToolCallStatusFailed, "The editor could not ask: "+err.Error())
		return "", fmt.Sprintf("Files changed outside the agent since checkpoint %d: %s. Nothing was changed. "+
			"Send `%s keep` to keep your changes and take back the rest, or `%s overwrite` to take them back too (your changes to them are lost).",
			ce.To, nameList(ce.Paths, 20, true), again, again)
	case err == nil && resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optKeep:
		end(sdk.ToolCallStatusCompleted, "Keeping your changes.")
		return server.ConflictsKeep, ""
	case err == nil && resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == optOverwrite:
		end(sdk.ToolCallStatusCompleted, "Overwriting your changes.")
		return server.ConflictsOverwrite, ""
	}
	end(sdk.ToolCallStatusFailed, "Cancelled: nothing was changed.")
	return "", "Cancelled: nothing was changed."
}

func sdkPtr(u sdk.SessionUpdate) *sdk.SessionUpdate { return &u }

// absPath makes a path of a rewind (relative to the one root, or, with
// several, starting with its root's folder name) absolute: ACP paths are.
func absPath(roots []string, p string) string {
	if filepath.IsAbs(p) || len(roots) == 0 {
		return p
	}
	if len(roots) > 1 {
		first, rest, _ := strings.Cut(p, "/")
		for _, r := range roots {
			if filepath.Base(r) == first {
				return filepath.Join(r, rest)
			}
		}
	}
	return filepath.Join(roots[0], p)
}

// nameList names paths, at most max of them, and how many more.
func nameList(paths []string, max int, code bool) string {
	shown := paths
	if len(shown) > max {
		shown = shown[:max]
	}
	out := make([]string, len(shown))
	for i, p := range shown {
		if code {
			p = "`" + p + "`"
		}
		out[i] = p
	}
	s := strings.Join(out, ", ")
	if n := len(paths) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// counted says how many files and folders (paths ending in a slash) paths
// hold: "2 files", "1 file and 1 folder".
func counted(paths []string) string {
	dirs := 0
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			dirs++
		}
	}
	files := len(paths) - dirs
	switch {
	case dirs == 0:
		return plural(files, "file", "files")
	case files == 0:
		return plural(dirs, "folder", "folders")
	}
	return plural(files, "file", "files") + " and " + plural(dirs, "folder", "folders")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// rewoundText is what a rewound event says to the user.
func rewoundText(e server.Event) string {
	if e.Rewind != nil {
		return rewindReport(*e.Rewind)
	}
	if e.Text == "" {
		return ""
	}
	return strings.ToUpper(e.Text[:1]) + e.Text[1:] + "."
}

// rewindReport says what a rewind did: the files restored, removed, kept
// and failed (counts and names), the messages that left the conversation,
// and the processes still running in the sandbox, which Zero cannot undo.
func rewindReport(r server.RewindReport) string {
	var b strings.Builder
	what := "the files and the conversation"
	switch {
	case r.Files && !r.Conversation:
		what = "the files"
	case r.Conversation && !r.Files:
		what = "the conversation"
	}
	fmt.Fprintf(&b, "**Rewound** %s to checkpoint %d.\n", what, r.To)
	if r.Cancelled {
		b.WriteString("- The run that was going on was cancelled first.\n")
	}
	if r.Files {
		if len(r.Restored) > 0 {
			fmt.Fprintf(&b, "- Restored %s: %s\n", counted(r.Restored), nameList(r.Restored, 20, true))
		}
		if len(r.Deleted) > 0 {
			fmt.Fprintf(&b, "- Removed %s made since: %s\n", counted(r.Deleted), nameList(r.Deleted, 20, true))
		}
		if len(r.Kept) > 0 {
			fmt.Fprintf(&b, "- Kept %s changed outside the agent: %s\n", counted(r.Kept), nameList(r.Kept, 20, true))
		}
		if len(r.Failed) > 0 {
			fmt.Fprintf(&b, "- Could not restore %s: %s\n", plural(len(r.Failed), "file", "files"), nameList(r.Failed, 20, false))
		}
		if len(r.Restored)+len(r.Deleted)+len(r.Kept)+len(r.Failed) == 0 {
			b.WriteString("- No file had changed.\n")
		}
	}
	if r.Conversation {
		fmt.Fprintf(&b, "- %s left the conversation: the agent no longer sees them (this editor still shows them).\n",
			plural(r.Messages, "message", "messages"))
	}
	if len(r.Running) > 0 {
		fmt.Fprintf(&b, "- Still running in the sandbox: %s. Zero cannot undo what they do from now on.\n", strings.Join(r.Running, "; "))
	}
	return b.String()
}

// checkpointList answers /rewind: the checkpoints, oldest first.
func checkpointList(cps []server.Checkpoint) string {
	if len(cps) == 0 {
		return "There is no checkpoint yet: one is taken before each run (and each /compact)."
	}
	var b strings.Builder
	b.WriteString("Checkpoints (the newest last):\n\n")
	for _, c := range cps {
		what := fmt.Sprintf("before run %d", c.Run)
		if c.Kind == server.CheckpointCompact {
			what = "before /compact"
		}
		fmt.Fprintf(&b, "- **%d** · %s · %s", c.ID, what, c.Created.Local().Format(time.DateTime))
		if c.Title != "" {
			fmt.Fprintf(&b, " · %q", c.Title)
		}
		b.WriteString(" · " + covered(c) + "\n")
	}
	b.WriteString("\n`/rewind N` goes back to checkpoint N (files and conversation); `/rewind N files` or `/rewind N conversation` takes back one of them; `/undo` goes back to the newest.")
	return b.String()
}

// covered says what a checkpoint's snapshots cover.
func covered(c server.Checkpoint) string {
	switch {
	case c.Error != "":
		return "the conversation only (" + c.Error + ")"
	case len(c.Files) == 0:
		return "the conversation"
	}
	files, skipped, partial := 0, 0, false
	var bytes int64
	for _, f := range c.Files {
		files += f.Files
		bytes += f.Bytes
		skipped += max(f.SkippedCount, len(f.Skipped))
		partial = partial || f.Partial
	}
	s := fmt.Sprintf("the conversation and %s (%s)", plural(files, "file", "files"), server.Size(bytes))
	if skipped > 0 {
		s += fmt.Sprintf(", %d left out", skipped)
	}
	if partial {
		s += ", partial"
	}
	return s
}

// compactCommand answers /compact [focus].
func (a *agent) compactCommand(ctx context.Context, st *sessState, focus string) string {
	ch, err := st.sess.Compact(ctx, focus)
	switch {
	case errors.Is(err, loop.ErrBusy):
		return "A run is in progress: /compact when it ends (or cancel it first)."
	case errors.Is(err, loop.ErrNothingToCompact):
		return "Nothing to compact yet: " + loop.ErrNothingToCompact.Error() + "."
	case errors.Is(err, loop.ErrSummaryNotShorter):
		return fmt.Sprintf("The summary was not shorter than the conversation (%d tokens): nothing was changed.", ch.Before)
	case err != nil:
		return "Could not compact: " + err.Error() + "."
	}
	return fmt.Sprintf("Compacted the conversation: %d → %d tokens. /undo takes the compaction back.", ch.Before, ch.After)
}

// forkCommand answers /fork [RUN]: a new session holding this one's
// conversation up to the end of run RUN (the last run that ended when
// none is given).
func (a *agent) forkCommand(ctx context.Context, st *sessState, args []string) string {
	run := 0
	if len(args) > 0 {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
		if err != nil || n < 1 || len(args) > 1 {
			return fmt.Sprintf("/fork takes the number of the run to fork after (empty: the last that ended), not %q.", strings.Join(args, " "))
		}
		run = n
	}
	info, err := a.opts.Manager.Fork(ctx, st.id, run)
	switch {
	case errors.Is(err, server.ErrInvalid):
		return "Cannot fork there: " + err.Error() + "."
	case err != nil:
		return "Could not fork: " + err.Error() + "."
	}
	if info.Runs == 0 {
		return fmt.Sprintf("No run has ended yet: the fork starts empty, as a new session: `%s`. This session is unchanged.", info.ID)
	}
	return fmt.Sprintf("Forked the conversation up to the end of run %d as a new session: `%s`. "+
		"It is in this workspace's session list: load it (session/load) to go on there. This session is unchanged.", info.Runs, info.ID)
}

// UnstableForkSession implements ACP's session/fork (unstable, advertised
// as sessionCapabilities.fork): a new session with the session's
// conversation up to its last run that ended (server.Manager.Fork), in the
// same folders, that goes on like a resumed session: its log is not
// replayed (the client has the conversation; session/load replays it). A
// fork into another cwd, or other additional directories when they are
// given, is refused: the conversation was had there. The editor's MCP
// servers are the fork's when it is loaded from the store.
func (a *agent) UnstableForkSession(ctx context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	id := string(p.SessionId)
	if id == "" {
		return sdk.UnstableForkSessionResponse{}, invalidParams("sessionId", "is required")
	}
	rs, err := roots(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	var mcp []sdk.McpServer
	if err := convert(p.McpServers, &mcp); err != nil {
		return sdk.UnstableForkSessionResponse{}, invalidParams("mcpServers", err.Error())
	}
	orig, _, err := a.opts.Manager.Peek(id)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, rpcError(id, err)
	}
	if len(orig.Roots) > 0 && rs[0] != orig.Roots[0] {
		return sdk.UnstableForkSessionResponse{}, invalidParams("cwd", fmt.Sprintf("the session works in %s: Zero forks a session in its own folder only", orig.Roots[0]))
	}
	if len(p.AdditionalDirectories) > 0 && len(orig.Roots) > 0 && !slices.Equal(rs[1:], orig.Roots[1:]) {
		return sdk.UnstableForkSessionResponse{}, invalidParams("additionalDirectories",
			fmt.Sprintf("the session's are %q: Zero forks a session with its own folders only (omit them to keep them)", orig.Roots[1:]))
	}
	info, err := a.opts.Manager.Fork(ctx, id, 0)
	if errors.Is(err, server.ErrInvalid) {
		return sdk.UnstableForkSessionResponse{}, invalidParams("sessionId", err.Error())
	} else if err != nil {
		return sdk.UnstableForkSessionResponse{}, rpcError(id, err)
	}
	sess, err := a.opts.Manager.GetWith(info.ID, server.GetOptions{MCPServers: mcpServers(mcp)})
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, rpcError(info.ID, err)
	}
	// The client learns the fork's id from this answer: its notifications
	// wait until the answer is on the wire.
	gate := a.out.watch(fmt.Sprintf(`"sessionId":%q`, info.ID))
	st, _, err := a.attachWith(sess, gate, false)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	st.enqueue(item{update: commandsUpdate(a.opts.Catalog, sess.Commands())})
	if msg := trustNotice(sess); msg != "" {
		st.enqueue(item{message: msg})
	}
	var opts []sdk.UnstableSessionConfigOption
	if err := convert(a.configOptions(sess), &opts); err != nil {
		return sdk.UnstableForkSessionResponse{}, rpcError(info.ID, err)
	}
	return sdk.UnstableForkSessionResponse{SessionId: sdk.SessionId(info.ID), ConfigOptions: opts, Modes: modeState(sess)}, nil
}

// convert copies in into out through JSON: the SDK's stable and unstable
// twins of a type (config options, MCP servers) have the same shape.
func convert(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}
