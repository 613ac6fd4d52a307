package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/store"
)

// ErrForkPoint is Fork's error for a run it cannot cut the session at.
var ErrForkPoint = fmt.Errorf("%w: no such run to fork at", ErrInvalid)

// Fork makes a new session holding session id's conversation up to the
// end of run atRun (0: all of it, up to the last run that ended): agent
// 0's history, the events, the checkpoints and the settings, under an id
// of its own. The original is untouched. With a store the fork is stored
// and continues in any face or process like any session (Get); without
// one, id must be open in this process. It returns the fork's Info.
func (m *Manager) Fork(ctx context.Context, id string, atRun int) (Info, error) {
	m.mu.Lock()
	live := m.sessions[id]
	m.mu.Unlock()
	if st := m.opts.Store; st != nil {
		return m.forkStored(st, id, atRun, live)
	}
	if live == nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, ErrNotFound)
	}
	return m.forkLive(ctx, live, atRun)
}

// forkCut is where a fork cuts its original: the history's mark and the
// log's last event, and the checkpoints before.
type forkCut struct {
	run     int
	all     bool // the whole history: no mark
	mark    loop.HistoryMark
	seq     int64
	keepCps []Checkpoint
}

// cutAt finds the end of run atRun in a session of runs runs (running:
// the last one has not ended) with checkpoints cps and last event seq.
func cutAt(id string, atRun, runs int, running bool, cps []Checkpoint, seq int64) (forkCut, error) {
	ended := runs
	if running {
		ended--
	}
	if atRun == 0 {
		atRun = ended
	}
	if ended <= 0 {
		return forkCut{}, fmt.Errorf("fork session %s: %w: no run has ended yet", id, ErrForkPoint)
	}
	if atRun < 0 || atRun > ended {
		return forkCut{}, fmt.Errorf("fork session %s at run %d: %w (its runs that ended are 1 to %d)", id, atRun, ErrForkPoint, ended)
	}
	if slices.ContainsFunc(cps, func(c Checkpoint) bool { return c.Undone && c.Kind == CheckpointRun && c.Run == atRun }) {
		return forkCut{}, fmt.Errorf("fork session %s at run %d: %w: that run was undone", id, atRun, ErrForkPoint)
	}
	cps = offered(cps)
	i := slices.IndexFunc(cps, func(c Checkpoint) bool { return c.Run > atRun })
	if i >= 0 {
		return forkCut{run: atRun, mark: cps[i].History, seq: cps[i].Seq, keepCps: slices.Clone(cps[:i])}, nil
	}
	if atRun < ended || running {
		// Nothing marks where the run ended: it ran before Zero kept
		// checkpoints, or a rewind took its successors back.
		return forkCut{}, fmt.Errorf("fork session %s at run %d: %w: no checkpoint marks the end of that run", id, atRun, ErrForkPoint)
	}
	return forkCut{run: atRun, all: true, seq: seq, keepCps: slices.Clone(cps)}, nil
}

// upTo is st without what came after m.
func upTo(st loop.HistoryState, c forkCut) loop.HistoryState {
	if c.all {
		return st
	}
	out := loop.HistoryState{Messages: st.Messages[:min(c.mark.Messages, len(st.Messages))]}
	for _, s := range st.Summaries {
		if s.ID <= c.mark.Summaries {
			out.Summaries = append(out.Summaries, s)
		}
	}
	return out
}

func (m *Manager) forkStored(st *store.Store, id string, atRun int, live *Session) (Info, error) {
	running := false
	if live != nil {
		running = live.Running()
	}
	if err := st.Flush(); err != nil {
		m.opts.Logger.Warn("flush before a fork", "session", id, "err", err)
	}
	rec, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return Info{}, fmt.Errorf("fork session %q: %w", id, ErrNotFound)
	} else if err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	cps, err := loadCheckpoints(st, id)
	if err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	c, err := cutAt(id, atRun, rec.Runs, running, cps, rec.LastSeq)
	if err != nil {
		return Info{}, err
	}
	h, err := st.History(id, 0)
	if err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	hist := upTo(HistoryState(h), c)
	evs, err := st.Events(id, 0, 0)
	if err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	nid := newID()
	fork := store.Session{ID: nid, Workspace: rec.Workspace, Roots: rec.Roots, Profile: rec.Profile, Model: rec.Model,
		Title: rec.Title, Created: m.opts.Now(), Runs: c.run, Settings: rec.Settings}
	if err := st.CreateSession(fork); err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	last := int64(0)
	for _, se := range evs {
		if se.Seq > c.seq {
			break
		}
		e, err := decodeEvent(se)
		if err != nil {
			continue
		}
		e.Session = nid
		data, _ := json.Marshal(e)
		st.AppendEvent(nid, store.Event{Seq: se.Seq, Type: se.Type, Agent: se.Agent, Data: data})
		last = se.Seq
	}
	j := journal{st: st, id: nid}
	for _, msg := range hist.Messages {
		j.AddMessage(0, msg)
	}
	for _, s := range hist.Summaries {
		j.AddSummary(0, s)
	}
	for _, cp := range c.keepCps {
		data, _ := json.Marshal(cp)
		st.PutCheckpoint(nid, store.Checkpoint{ID: cp.ID, Run: cp.Run, Created: cp.Created, Data: data})
	}
	e := forkedEvent(nid, id, c.run, last+1, m.opts.Now())
	data, _ := json.Marshal(e)
	st.AppendEvent(nid, store.Event{Seq: e.Seq, Type: string(e.Type), Data: data})
	if err := st.Flush(); err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	frec, err := st.Session(nid)
	if err != nil {
		return Info{}, fmt.Errorf("fork session %q: %w", id, err)
	}
	m.opts.Logger.Info("session forked", "session", id, "fork", nid, "run", c.run)
	return infoOf(frec), nil
}

func forkedEvent(session, from string, run int, seq int64, at time.Time) Event {
	return Event{V: EventVersion, Seq: seq, Session: session, Type: EventForked, Time: at,
		Text: fmt.Sprintf("forked from session %s after run %d", from, run), Fork: &ForkRef{From: from, Run: run}}
}

// forkLive forks a session open in this process, without a store: the
// fork lives in memory too.
func (m *Manager) forkLive(ctx context.Context, s *Session, atRun int) (Info, error) {
	s.mu.Lock()
	runs, running := s.runs, s.busy
	s.mu.Unlock()
	s.mu.Lock()
	all := slices.Clone(s.cps)
	s.mu.Unlock()
	c, err := cutAt(s.spec.ID, atRun, runs, running, all, s.Cursor())
	if err != nil {
		return Info{}, err
	}
	hist := upTo(s.ls.Agent0().History.State(), c)
	evs, _ := s.Events(0)
	spec := s.Spec()
	fork, err := m.Create(ctx, SessionSpec{Roots: spec.Roots, Profile: spec.Profile, Model: spec.Model, Mode: spec.Mode})
	if err != nil {
		return Info{}, fmt.Errorf("fork session %s: %w", s.spec.ID, err)
	}
	if err := fork.ls.RestoreHistory(0, hist); err != nil {
		_ = m.Delete(fork.ID())
		return Info{}, fmt.Errorf("fork session %s: %w", s.spec.ID, err)
	}
	for _, e := range evs {
		if e.Seq > c.seq {
			break
		}
		fork.emit(e)
	}
	fork.mu.Lock()
	fork.runs, fork.title, fork.cps = c.run, s.Info().Title, c.keepCps
	fork.mu.Unlock()
	fork.ls.ContinueItems(int(fork.Cursor()) + int(c.seq))
	fork.emit(Event{Type: EventForked, Time: m.opts.Now(), Text: fmt.Sprintf("forked from session %s after run %d", s.spec.ID, c.run),
		Fork: &ForkRef{From: s.spec.ID, Run: c.run}})
	return fork.Info(), nil
}
