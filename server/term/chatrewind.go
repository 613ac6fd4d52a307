package term

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
)

// The chat's /undo, /rewind, /compact and /fork. Each runs off the event
// loop (a rewind restores files, a compaction asks the model, a fork
// copies the stored session) and its outcome comes back as a message;
// what a rewind did is said by its rewound event, as in every face. A
// rewind that meets files the person changed outside the agent asks, as an
// approval is asked, whether to keep them, overwrite them or cancel.

// rewindTool is the Tool of the chat's own question about the files a
// rewind found changed outside the agent.
const rewindTool = "/rewind"

// ownQuestion reports whether r is one of the chat's own questions (not
// a run's approval): they outlive the run.
func ownQuestion(r server.Request) bool { return r.Tool == trustTool || r.Tool == rewindTool }

// rewoundMsg is the outcome of a rewind.
type rewoundMsg struct {
	session string
	opts    server.RewindOptions
	err     error
}

// compactedMsg is the outcome of /compact.
type compactedMsg struct {
	session string
	change  server.TokenChange
	err     error
}

// forkedMsg is the outcome of /fork.
type forkedMsg struct {
	info server.Info
	err  error
}

// undoCommand is /undo [keep|overwrite]: back to before the last run (or
// compaction).
func (m *chatUI) undoCommand(arg string) tea.Cmd {
	o, err := undoArgs(arg)
	if err != nil {
		m.say(m.view.style(err.Error(), yellow))
		return nil
	}
	return m.rewind(o)
}

// undoArgs parses "[keep|overwrite]".
func undoArgs(arg string) (server.RewindOptions, error) {
	var o server.RewindOptions
	for _, w := range strings.Fields(arg) {
		switch w = strings.ToLower(w); w {
		case server.ConflictsKeep, server.ConflictsOverwrite:
			o.Conflicts = w
		default:
			return server.RewindOptions{}, errors.New("/undo [keep|overwrite] takes back the last run (or /compact); keep or overwrite says what to do with files you changed since; /rewind N goes further back")
		}
	}
	return o, nil
}

// rewindCommand is /rewind: with no argument the checkpoints, else
// /rewind N [files|conversation] [keep|overwrite] goes back to checkpoint N.
func (m *chatUI) rewindCommand(arg string) tea.Cmd {
	if m.sess == nil {
		return nil
	}
	if arg == "" {
		m.listCheckpoints()
		return nil
	}
	o, err := rewindArgs(arg)
	if err != nil {
		m.say(m.view.style(err.Error(), yellow))
		return nil
	}
	return m.rewind(o)
}

// rewindArgs parses "N [files|conversation] [keep|overwrite]".
func rewindArgs(arg string) (server.RewindOptions, error) {
	usage := errors.New("/rewind N [files|conversation] [keep|overwrite]: N is a checkpoint's id (/rewind lists them); files or conversation takes back only that; keep or overwrite says what to do with files you changed since")
	f := strings.Fields(arg)
	n, err := strconv.Atoi(strings.TrimPrefix(f[0], "#"))
	if err != nil || n <= 0 {
		return server.RewindOptions{}, usage
	}
	o := server.RewindOptions{To: n}
	for _, w := range f[1:] {
		switch w = strings.ToLower(w); w {
		case "files":
			o.Files = true
		case "conversation":
			o.Conversation = true
		case server.ConflictsKeep, server.ConflictsOverwrite:
			o.Conflicts = w
		default:
			return server.RewindOptions{}, usage
		}
	}
	return o, nil
}

// listCheckpoints shows the session's checkpoints, and how to go back.
func (m *chatUI) listCheckpoints() {
	cps := m.sess.Checkpoints()
	if len(cps) == 0 {
		m.say("no checkpoints yet: one is taken before each run (and before /compact)")
		return
	}
	now := time.Now()
	for _, l := range CheckpointTable(cps, func(t time.Time) string { return ago(now, t) }) {
		if m.width > 1 {
			l = ansi.Truncate(l, m.width-1, "…")
		}
		m.view.line(l)
	}
	m.say(m.view.style("/rewind N goes back to before checkpoint N (/rewind N files or /rewind N conversation: only that); /undo to before the last", dim))
}

// rewind starts a rewind of the session.
func (m *chatUI) rewind(o server.RewindOptions) tea.Cmd {
	if m.sess == nil {
		return nil
	}
	if m.doing != "" {
		m.say(m.view.style("wait: "+m.doing, yellow))
		return nil
	}
	sess, ctx := m.sess, m.ctx
	m.doing = "rewinding"
	return func() tea.Msg {
		_, err := sess.Rewind(ctx, o)
		return rewoundMsg{session: sess.ID(), opts: o, err: err}
	}
}

// rewound shows a rewind's failure, or asks about the files changed
// outside the agent; what a rewind did is its event's to say.
func (m *chatUI) rewound(msg rewoundMsg) {
	m.doing = ""
	var ce *server.ConflictError
	switch {
	case msg.err == nil:
	case m.sess == nil || msg.session != m.sess.ID():
		m.say(m.view.style("the session left was not rewound: "+termsafe.Visible(msg.err.Error()), yellow))
	case errors.As(msg.err, &ce):
		for _, l := range ConflictLines(ce) {
			m.say(m.view.style(l, yellow))
		}
		m.asked++
		id := fmt.Sprintf("rewind:%d", m.asked)
		o := msg.opts
		o.To = ce.To // an undo's newest stays the one asked about
		m.rewinds[id] = o
		m.asks = append(m.asks, server.Request{ID: id, Tool: rewindTool, Session: msg.session,
			Title: fmt.Sprintf("checkpoint %d", ce.To), Subject: strings.Join(ce.Paths, ", ")})
	case errors.Is(msg.err, server.ErrNoCheckpoint):
		m.say(m.view.style(termsafe.Visible(msg.err.Error()), yellow))
	default:
		m.say(m.view.style("error: "+termsafe.Visible(msg.err.Error()), red))
	}
}

// answerRewind carries out the answer to a rewind's question.
func (m *chatUI) answerRewind(req server.Request, said string) tea.Cmd {
	o, ok := m.rewinds[req.ID]
	delete(m.rewinds, req.ID)
	if said == "cancel" || !ok || m.sess == nil || req.Session != m.sess.ID() {
		m.say(m.view.style("not rewound: nothing was changed", dim))
		return nil
	}
	o.Conflicts = said
	return m.rewind(o)
}

// compactCommand is /compact [focus].
func (m *chatUI) compactCommand(focus string, busy func() bool) tea.Cmd {
	if m.sess == nil || busy() {
		return nil
	}
	if m.doing != "" {
		m.say(m.view.style("wait: "+m.doing, yellow))
		return nil
	}
	sess, ctx := m.sess, m.ctx
	m.doing = "compacting the conversation"
	return func() tea.Msg {
		ch, err := sess.Compact(ctx, focus)
		return compactedMsg{session: sess.ID(), change: ch, err: err}
	}
}

func (m *chatUI) compacted(msg compactedMsg) {
	m.doing = ""
	switch {
	case msg.err == nil:
		m.say(m.view.style(fmt.Sprintf("compacted: %d → %d tokens; /undo takes it back", msg.change.Before, msg.change.After), dim))
	case errors.Is(msg.err, loop.ErrBusy):
		m.say(m.view.style("a run is going on: /compact when it ended", yellow))
	case errors.Is(msg.err, loop.ErrNothingToCompact), errors.Is(msg.err, loop.ErrSummaryNotShorter):
		m.say(m.view.style("not compacted: "+termsafe.Visible(msg.err.Error()), yellow))
	default:
		m.say(m.view.style("error: "+termsafe.Visible(msg.err.Error()), red))
	}
}

// forkCommand is /fork [RUN]: a new session with this one's conversation
// up to the end of run RUN (all runs that ended without it).
func (m *chatUI) forkCommand(arg string) tea.Cmd {
	if m.sess == nil {
		return nil
	}
	run := 0
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			m.say(m.view.style("/fork [RUN]: RUN is the number of the last run the new session keeps (/rewind lists them); without it, all that ended", yellow))
			return nil
		}
		run = n
	}
	mgr, ctx, id := m.c.Manager, m.ctx, m.sess.ID()
	return func() tea.Msg {
		info, err := mgr.Fork(ctx, id, run)
		return forkedMsg{info: info, err: err}
	}
}

func (m *chatUI) forked(msg forkedMsg) {
	if msg.err != nil {
		m.say(m.view.style("error: "+termsafe.Visible(msg.err.Error()), red))
		return
	}
	id := msg.info.ID
	m.say(fmt.Sprintf("forked: session %s holds this conversation up to run %d; this one goes on as it was", id, msg.info.Runs))
	if m.c.Persistent {
		m.say(m.view.style(fmt.Sprintf("continue it with /load %s here, or zero chat --session %s (zero run --session %s \"…\")", id, id, id), dim))
		return
	}
	m.say(m.view.style(fmt.Sprintf("continue it with /load %s (sessions are not stored: it lasts as long as this chat)", id), dim))
}

// rewindQuestion is how the chat asks about the files a rewind found
// changed outside the agent.
func rewindQuestion(r server.Request) string {
	return "Rewind to " + r.Title + ": keep your changes to " + termsafe.Reviewable(cut.Clip(r.Subject, 200)) + "? [k]eep them/[o]verwrite them/[c]ancel"
}
