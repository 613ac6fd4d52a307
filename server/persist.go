package server

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/store"
)

// Persistence: with Options.Store set, a session is written to the store as
// it happens (its settings, every event, every change to its agents'
// histories) and a session of an earlier process is loaded from the store
// the first time a face asks for it. The store queues writes, so the run
// never waits for the disk; a kill loses at most the last few milliseconds.

// storeLog is a Log that keeps the newest events in memory, for the faces
// that follow the run, and every event in the store, for replays after a
// restart and for followers that fell behind the memory.
type storeLog struct {
	mem *memLog
	st  *store.Store
	id  string
}

// newStoreLog returns the log of session id whose newest stored events are
// tail (oldest first) and whose last Seq is last. The memory holds only a
// gapless run of Seqs ending at last (a write the store failed leaves a
// hole); Since reads anything older from the store.
func newStoreLog(st *store.Store, id string, limit int, tail []Event, last int64) *storeLog {
	mem := NewMemLog(limit).(*memLog)
	if n := len(tail); n > 0 {
		last = tail[n-1].Seq
	}
	i := len(tail)
	for i > 0 && len(tail)-i < mem.limit && tail[i-1].Seq == last-int64(len(tail)-i) {
		i--
	}
	mem.buf = append(mem.buf, tail[i:]...)
	mem.last = last
	return &storeLog{mem: mem, st: st, id: id}
}

func (l *storeLog) Append(e Event) Event {
	e = l.mem.Append(e)
	data, err := json.Marshal(e)
	if err != nil { // an Event always marshals; keep the record anyway
		data, _ = json.Marshal(Event{V: e.V, Seq: e.Seq, Session: e.Session, Agent: e.Agent, Type: e.Type, Time: e.Time, Text: err.Error()})
	}
	l.st.AppendEvent(l.id, store.Event{Seq: e.Seq, Type: string(e.Type), Agent: e.Agent, Data: data})
	return e
}

func (l *storeLog) Since(since int64) ([]Event, int64) {
	evs, last := l.mem.Since(since)
	if len(evs) == 0 || evs[0].Seq <= since+1 {
		return evs, last
	}
	// The memory no longer holds the oldest wanted: read them from the
	// store (they were written long ago, but the queue may still hold some).
	_ = l.st.Flush() // to wait: its error may be any session's, and is logged
	old, err := l.st.Events(l.id, since, int(evs[0].Seq-since-1))
	if err != nil {
		return evs, last
	}
	out := make([]Event, 0, len(old)+len(evs))
	for _, se := range old {
		if se.Seq >= evs[0].Seq {
			break
		}
		e, err := decodeEvent(se)
		if err != nil {
			continue
		}
		out = append(out, e)
	}
	return append(out, evs...), last
}

func decodeEvent(se store.Event) (Event, error) {
	e, err := DecodeEvent(se.Data)
	if err != nil {
		return Event{}, fmt.Errorf("event %d: %w", se.Seq, err)
	}
	e.Seq = se.Seq
	return e, nil
}

// Peek describes a session and returns its events without opening it:
// a live one's from memory, a stored one's from the store, where it stays
// free for another process to open.
func (m *Manager) Peek(id string) (Info, []Event, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		evs, _ := s.Events(0)
		return s.Info(), evs, nil
	}
	st := m.opts.Store
	if st == nil {
		return Info{}, nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	rec, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return Info{}, nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	} else if err != nil {
		return Info{}, nil, fmt.Errorf("session %q: %w", id, err)
	}
	stored, err := st.Events(id, 0, 0)
	if err != nil {
		return Info{}, nil, fmt.Errorf("session %q: %w", id, err)
	}
	evs := make([]Event, 0, len(stored))
	for _, se := range stored {
		if e, err := decodeEvent(se); err == nil {
			evs = append(evs, e)
		}
	}
	info := infoOf(rec)
	info.Usage = UsageOf(evs)
	return info, evs, nil
}

// loadUsage adds up a stored session's usage: its usage events are in its
// log (each written as it happened, so a run a crash cut short counts what
// it used), and nowhere else.
func loadUsage(st *store.Store, id string, t *usageTotals) error {
	stored, err := st.EventsOfType(id, string(loop.EventUsage))
	if err != nil {
		return err
	}
	for _, se := range stored {
		if e, err := decodeEvent(se); err == nil {
			t.see(e)
		}
	}
	return nil
}

func infoOf(rec store.Session) Info {
	return Info{ID: rec.ID, Roots: rec.Roots, Profile: rec.Profile, Model: rec.Model, Title: rec.Title,
		Created: rec.Created, Updated: rec.Updated, Runs: rec.Runs, LastSeq: rec.LastSeq}
}

// HistoryState is a stored history in the engine's terms.
func HistoryState(h store.History) loop.HistoryState {
	var out loop.HistoryState
	for _, m := range h.Messages {
		hm := loop.HistoryMessage{N: m.N, Topic: m.Topic, AI: m.AI, Content: m.Content, Tokens: m.Tokens, CallID: m.CallID}
		if m.Calls != "" {
			if err := json.Unmarshal([]byte(m.Calls), &hm.Calls); err != nil || !m.AI {
				// Damaged: the message is kept as text, and its results
				// are shown to the model as text too.
				hm.Calls, hm.Content = nil, m.Content+"\n[its tool calls could not be read from the store]"
			}
		}
		for _, im := range m.Images {
			if len(im.Data) == 0 {
				// Lost from the store: the message says so in its place.
				hm.Content += "\n" + llm.Image{Name: im.Name, Width: im.Width, Height: im.Height}.Placeholder("lost from the session store")
				continue
			}
			hm.Images = append(hm.Images, llm.Image{MIME: im.MIME, Data: im.Data, Hash: im.Hash, Width: im.Width, Height: im.Height, Name: im.Name})
		}
		out.Messages = append(out.Messages, hm)
	}
	for _, s := range h.Summaries {
		out.Summaries = append(out.Summaries, loop.HistorySummary{ID: s.ID, Kind: s.Kind, From: s.From, To: s.To, Content: s.Content, Tokens: s.Tokens})
	}
	return out
}

// journal writes an engine session's history changes to the store.
type journal struct {
	st *store.Store
	id string
}

func (j journal) AddMessage(agent int, m loop.HistoryMessage) {
	if m.N == 0 {
		// A new history for this agent number (a subordinate replaced, or
		// agent 0 after a reset): the one stored before goes.
		j.st.ClearAgentHistory(j.id, agent)
	}
	sm := store.Message{N: m.N, Topic: m.Topic, AI: m.AI, Content: m.Content, Tokens: m.Tokens, CallID: m.CallID}
	for _, im := range m.Images {
		sm.Images = append(sm.Images, store.Image{Hash: im.Hash, MIME: im.MIME, Width: im.Width, Height: im.Height, Name: im.Name, Data: im.Data})
	}
	if len(m.Calls) > 0 {
		raw, _ := json.Marshal(m.Calls) // strings only: cannot fail
		sm.Calls = string(raw)
	}
	j.st.AddMessage(j.id, agent, sm)
}

func (j journal) AddSummary(agent int, s loop.HistorySummary) {
	j.st.AddSummary(j.id, agent, store.Summary{ID: s.ID, Kind: s.Kind, From: s.From, To: s.To, Content: s.Content, Tokens: s.Tokens})
}

func (j journal) CountTokens(agent, n, tokens int) { j.st.SetTokens(j.id, agent, n, tokens) }

// settings are what a session keeps besides its spec: the calls the
// person allowed always.
type settings struct {
	Always []string `json:"always,omitempty"`
	Mode   string   `json:"mode,omitempty"` // "plan"; the default is not written
}

// record is the session's row in the store.
func (s *Session) record() store.Session {
	var raw json.RawMessage
	if s.settings != nil {
		raw, _ = json.Marshal(s.settings()) // plain strings: always marshals
	}
	profile := ""
	if s.ls != nil {
		profile = s.ls.Agent0().Profile // the configured default, named
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	spec := s.spec
	spec.Profile = cmp.Or(spec.Profile, profile)
	ws := ""
	if len(spec.Roots) > 0 {
		ws = spec.Roots[0]
	}
	return store.Session{ID: spec.ID, Workspace: ws, Roots: slices.Clone(spec.Roots), Profile: spec.Profile, Model: spec.Model,
		Title: s.title, Created: s.created, Updated: s.now(), Runs: s.runs, Settings: raw}
}

// persist queues the session's settings (title, runs, profile, model).
func (s *Session) persist() {
	if s.store != nil {
		s.store.UpdateSession(s.record())
	}
}

// runEndFlush bounds how long the end of a run waits for the store.
const runEndFlush = 2 * time.Second

// flushWithin waits for st's queued writes to be committed, at most d (a
// failed write is logged by the store).
func flushWithin(st *store.Store, d time.Duration) {
	done := make(chan struct{})
	go func() { // ends with the Flush, which the writer answers
		_ = st.Flush()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// restore is what a stored session brings back besides its log: agent 0's
// history, the note that its last run was interrupted (not yet stored),
// the events that close that run, and its settings.
type restore struct {
	hist  loop.HistoryState
	note  *loop.HistoryMessage
	ended []Event
	set   settings
}

// apply restores the history into ls, then stores the note. A history the
// engine finds inconsistent (a write lost) is repaired rather than making
// the session unloadable: its messages, in order, are numbered again and
// stored anew, and its summaries dropped (compression makes them again);
// the warning says so.
func (r *restore) apply(ls *loop.Session, j journal) (warning string, err error) {
	h := r.hist
	if r.note != nil {
		h.Messages = append(slices.Clip(h.Messages), *r.note)
	}
	if len(h.Messages) == 0 {
		return "", nil
	}
	err = ls.RestoreHistory(0, h)
	if errors.Is(err, loop.ErrHistoryState) {
		fixed := loop.HistoryState{Messages: make([]loop.HistoryMessage, len(h.Messages))}
		topic := 0
		for i, m := range h.Messages {
			topic = max(topic, m.Topic)
			m.N, m.Topic = i, topic
			fixed.Messages[i] = m
		}
		if err := ls.RestoreHistory(0, fixed); err != nil {
			return "", err
		}
		for _, m := range fixed.Messages {
			j.AddMessage(0, m) // N 0 first: the broken history goes
		}
		return fmt.Sprintf("the stored conversation was inconsistent (%v); its %d messages were kept and its summaries dropped", err, len(fixed.Messages)), nil
	} else if err != nil {
		return "", err
	}
	if r.note != nil {
		j.AddMessage(0, *r.note)
	}
	return "", nil
}

// interrupted is the error of a run its process did not live to end.
const interrupted = "interrupted: Zero stopped before this run ended (the process was killed or crashed); what it did after the last saved step is lost"

// closeInterrupted ends, in the log, a run that was going on when an
// earlier process died: its open tool calls fail and the run ends with a
// clear error, so no face replays it as if it had completed. It reports
// whether there was such a run.
func closeInterrupted(tail []Event, emit func(Event)) bool {
	start := -1
	for i := len(tail) - 1; i >= 0; i-- {
		if t := tail[i].Type; t == loop.EventRunEnded {
			return false
		} else if t == loop.EventRunStarted {
			start = i
			break
		}
	}
	if start < 0 {
		return false
	}
	open := map[string]Event{}
	var order []string
	for _, e := range tail[start:] {
		switch e.Type {
		case loop.EventToolCall:
			if _, ok := open[e.Item]; !ok {
				order = append(order, e.Item)
			}
			open[e.Item] = e
		case loop.EventToolResult:
			delete(open, e.Item)
		}
	}
	for _, item := range order {
		if call, ok := open[item]; ok {
			emit(Event{Type: loop.EventToolResult, Agent: call.Agent, Item: item, Tool: call.Tool, Method: call.Method,
				Status: loop.ToolFailed, Text: "interrupted: Zero stopped while this tool ran"})
		}
	}
	emit(Event{Type: loop.EventRunEnded, Item: tail[start].Item, StopReason: loop.StopError, Error: interrupted})
	return true
}

// interruptedNote is what agent 0's history is told about such a run.
const interruptedNote = "[The previous run was interrupted: Zero stopped before it ended, so its last steps may be missing. Check the state of what it was doing before you go on.]"

// errBusyElsewhere explains a session held by another live process.
func errBusyElsewhere(id string, err error) error {
	if errors.Is(err, store.ErrBusy) {
		return fmt.Errorf("session %s is %w; close it there first (%w)", id, ErrHeld, err)
	}
	return fmt.Errorf("session %s: %w", id, err)
}

var pid = os.Getpid()
