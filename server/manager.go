// Package server is the session manager the editor faces (ACP, MCP, the
// LSP-style session) share: it creates, lists and closes sessions, runs one
// prompt at a time per session and many sessions at once, turns a message
// sent during a run into an intervention, keeps each session's event log
// with a cursor, and brokers approvals of risky tool calls.
//
// It knows nothing of sandboxes, models or protocols: the caller supplies
// how to build a loop.Session for a SessionSpec.
package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/checkpoint"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/store"
)

// SessionSpec says what a session works on.
type SessionSpec struct {
	// ID is the session id; Create fills it when empty. NewSession must
	// give the loop session this id (approvals find their session by it).
	ID string `json:"id"`
	// Roots are the workspace folders, the first being the main one.
	Roots   []string `json:"roots,omitempty"`
	Profile string   `json:"profile,omitempty"`
	// Model is the chat model's name; empty uses the configured one.
	Model string `json:"model,omitempty"`
	// Files, when set, is the editor's view of the workspace files
	// (unsaved buffers included) that file tools should go through.
	Files FileAccess `json:"-"`
	// Journal, set by the manager when it has a store, must be passed to
	// the loop session's Config.Journal: it records the agents' histories.
	Journal loop.HistoryJournal `json:"-"`
	// Mode is the session's mode (ModeDefault, ModePlan; "" is the
	// default); see Session.SetMode.
	Mode string `json:"mode,omitempty"`
	// MCPServers are MCP servers the editor passed for this session (ACP's
	// mcpServers), besides the configured ones. They are not stored: they
	// may carry tokens, and the editor passes them again when it loads.
	MCPServers []mcpconf.Server `json:"-"`
}

// FileAccess reads and writes text files through the editor, so the agent
// sees and edits what the user sees, unsaved changes included (ACP's
// fs/read_text_file and fs/write_text_file). Paths are absolute.
type FileAccess interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// Options configures a Manager. NewSession is required; the zero value of
// every other field works.
type Options struct {
	// NewSession builds the engine session for spec; sink must be passed to
	// loop.NewSession as is. When Broker is set, the manager installs its
	// gate in the session (loop.Session.SetGate).
	NewSession func(ctx context.Context, spec SessionSpec, sink func(loop.Event)) (*loop.Session, error)
	// Setup builds agent 0's setup for spec, for Session.Configure (a
	// profile or model chosen after the session was created); nil makes
	// Configure fail with ErrUnsupported.
	Setup func(ctx context.Context, spec SessionSpec) (loop.Setup, error)
	// Broker, when set, gets the sessions attached so its approval events
	// join their event streams.
	Broker *Broker
	// Trust, when set, tells the faces whether a workspace's code may run
	// and records the person's consent to it.
	Trust Trust
	// NewLog returns the event log of a new session; nil keeps LogLimit
	// events in memory.
	NewLog func(id string) Log
	// LogLimit bounds the memory log (DefaultLogLimit when 0).
	LogLimit int
	// Store, when set, keeps every session (its settings, events and
	// histories) so that it outlives the process: List shows the stored
	// sessions of Workspace, Get loads one on first use. NewLog is then
	// not used.
	Store *store.Store
	// Checkpoints, when set, keeps the snapshots of the workspace roots
	// taken before each run (see Session.Rewind); without it checkpoints
	// cover the conversation only.
	Checkpoints *checkpoint.Store
	// Workspace is the workspace whose stored sessions List shows.
	Workspace string
	// Memory, when set, lists and searches the agent's memory for the
	// faces (Manager.Memories).
	Memory Memory
	// Commands, when set, finds the saved prompts the faces offer as
	// slash commands (Session.Commands, Session.RunCommand).
	Commands Commands
	// OnClose, when set, is called after a session was closed (by Close,
	// Delete or CloseAll), to let go of what the session held outside the
	// engine (its MCP servers).
	OnClose func(spec SessionSpec)
	// OnDelete, when set, is called after a session was deleted, to remove
	// what it left outside the store (its spilled tool output).
	OnDelete func(spec SessionSpec)
	// Now is the clock; nil uses time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Manager holds the sessions. It is safe for concurrent use.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*Session
	// loadMu serialises loads from the store, so that two faces asking for
	// one stored session at once get the same one.
	loadMu sync.Mutex
	// reach follows the sessions created in this process (by id) until one
	// of their runs reaches the model (see Unreached).
	reach map[string]*reach
}

// reach says whether a session ran and whether the model ever answered it.
type reach struct{ ran, reached atomic.Bool }

// see notes what an event says: a run began, or the model answered (any
// event but the run's frame, the user's messages, warnings and errors), or
// a run ended otherwise than with an error (an answer, or a cancel: the
// model may have been working, and the person chose to stop it).
func (r *reach) see(e loop.Event) {
	switch e.Type {
	case loop.EventRunStarted:
		r.ran.Store(true)
	case loop.EventRunEnded:
		if e.StopReason != loop.StopError {
			r.reached.Store(true)
		}
	case loop.EventTurnStarted, loop.EventWarning, loop.EventError, loop.EventIntervention:
	default:
		r.reached.Store(true)
	}
}

// Info describes a session for listings.
type Info struct {
	ID      string   `json:"id"`
	Roots   []string `json:"roots,omitempty"`
	Profile string   `json:"profile,omitempty"`
	Model   string   `json:"model,omitempty"`
	// Mode is the session's mode when it is not the default ("plan").
	Mode string `json:"mode,omitempty"`
	// Title is the first message of the session, shortened.
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Running bool      `json:"running"`
	Paused  bool      `json:"paused,omitempty"`
	Runs    int       `json:"runs"`
	LastSeq int64     `json:"last_seq"`
	// Usage is what the session's model calls used, in all its runs (nil
	// when none, or not known: a stored session listed without its log).
	Usage *Usage `json:"usage,omitempty"`
}

// NewManager returns a manager. It panics when opts.NewSession is nil: that
// is a programmer error.
func NewManager(opts Options) *Manager {
	if opts.NewSession == nil {
		panic("server.NewManager: Options.NewSession is required")
	}
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewLog == nil {
		limit := opts.LogLimit
		opts.NewLog = func(string) Log { return NewMemLog(limit) }
	}
	m := &Manager{opts: opts, sessions: map[string]*Session{}, reach: map[string]*reach{}}
	if opts.Broker != nil && opts.Store != nil {
		opts.Broker.mu.Lock()
		opts.Broker.remembered = func(id string) {
			m.mu.Lock()
			s := m.sessions[id]
			m.mu.Unlock()
			if s != nil {
				s.persist()
			}
		}
		opts.Broker.mu.Unlock()
	}
	return m
}

// Approvals returns the broker, or nil when the manager has none.
func (m *Manager) Approvals() Approvals {
	if m.opts.Broker == nil {
		return nil
	}
	return m.opts.Broker
}

// Create builds and registers a session. With a store, the session is
// stored before anything happens in it.
func (m *Manager) Create(ctx context.Context, spec SessionSpec) (*Session, error) {
	switch {
	case !ValidMode(spec.Mode):
		return nil, fmt.Errorf("create session: %w: unknown mode %q (the modes are default and plan)", ErrInvalid, spec.Mode)
	case spec.Mode == ModePlan && m.opts.Broker == nil:
		return nil, fmt.Errorf("create session: plan mode: %w without an approval broker", ErrUnsupported)
	}
	spec.Roots = slices.Clone(spec.Roots)
	if len(spec.Roots) == 0 && m.opts.Workspace != "" {
		spec.Roots = []string{m.opts.Workspace}
	}
	if spec.ID == "" {
		spec.ID = newID()
	}
	if !ValidID(spec.ID) {
		return nil, fmt.Errorf("create session %q: %w: use letters, digits, - and _ (at most 64)", spec.ID, ErrSessionID)
	}
	m.mu.Lock()
	_, taken := m.sessions[spec.ID]
	m.mu.Unlock()
	if taken {
		return nil, fmt.Errorf("create session %q: %w: in use", spec.ID, ErrSessionID)
	}
	st := m.opts.Store
	var log Log
	if st == nil {
		log = m.opts.NewLog(spec.ID)
	} else {
		if _, err := st.Session(spec.ID); err == nil {
			return nil, fmt.Errorf("create session %q: %w: a stored session has this id", spec.ID, ErrSessionID)
		}
		s := newSession(spec, nil, m.opts.Now())
		if err := st.CreateSession(s.record()); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
		if err := st.Claim(spec.ID, pid); err != nil {
			return nil, errBusyElsewhere(spec.ID, err)
		}
		log = newStoreLog(st, spec.ID, m.opts.LogLimit, nil, 0)
	}
	s := newSession(spec, log, m.opts.Now())
	if st != nil {
		m.mu.Lock()
		m.reach[spec.ID] = &reach{}
		m.mu.Unlock()
	}
	s, err := m.start(ctx, s, nil)
	if err != nil {
		m.mu.Lock()
		delete(m.reach, spec.ID)
		m.mu.Unlock()
	}
	if err != nil && st != nil {
		if derr := st.DeleteSession(spec.ID); derr != nil {
			m.opts.Logger.Warn("removing a session that failed to start", "session", spec.ID, "err", derr)
		}
	}
	return s, err
}

// start builds the engine session of s, restores its agent 0's history
// (hist, from the store) and registers it.
func (m *Manager) start(ctx context.Context, s *Session, r *restore) (*Session, error) {
	spec := s.spec
	if st := m.opts.Store; st != nil {
		s.store = st
		spec.Journal = journal{st: st, id: spec.ID}
		if b := m.opts.Broker; b != nil {
			s.settings = func() settings {
				set := settings{Always: b.alwaysOf(spec.ID)}
				if mode := s.Mode(); mode != ModeDefault {
					set.Mode = mode
				}
				return set
			}
		}
	}
	s.setup, s.now, s.trust = m.opts.Setup, m.opts.Now, m.opts.Trust
	s.snaps = m.opts.Checkpoints
	sink := s.sink
	m.mu.Lock()
	rs := m.reach[spec.ID]
	m.mu.Unlock()
	if rs != nil {
		sink = func(e loop.Event) {
			rs.see(e)
			s.sink(e)
		}
	}
	ls, err := m.opts.NewSession(ctx, spec, sink)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if ls.ID() != spec.ID {
		return nil, fmt.Errorf("create session %q: %w: the engine session is %q", spec.ID, ErrSessionID, ls.ID())
	}
	var warnings []string
	if r != nil {
		if w, err := r.apply(ls, journal{st: m.opts.Store, id: spec.ID}); err != nil {
			return nil, fmt.Errorf("load session %s: %w", spec.ID, err)
		} else if w != "" {
			warnings = append(warnings, w)
		}
	}
	// Every item of the log came with an event, so item numbers above the
	// log's last Seq are new ones.
	ls.ContinueItems(int(s.Cursor()))
	s.ls = ls
	s.commands = m.opts.Commands
	if b := m.opts.Broker; b != nil {
		ls.SetGate(b.Gate)
		s.broker = b
	}
	m.mu.Lock()
	if _, taken := m.sessions[spec.ID]; taken {
		m.mu.Unlock()
		return nil, fmt.Errorf("create session %q: %w: in use", spec.ID, ErrSessionID)
	}
	m.sessions[spec.ID] = s
	m.mu.Unlock()
	s.mu.Lock()
	s.applyModeLocked()
	s.mu.Unlock()
	if b := m.opts.Broker; b != nil {
		b.attach(spec.ID, s.emit)
		if r != nil {
			b.remember(spec.ID, r.set.Always)
		}
	}
	if r != nil {
		for _, e := range r.ended {
			s.emit(e)
		}
	}
	for _, w := range warnings {
		s.emit(Event{Type: loop.EventWarning, Text: w})
	}
	m.opts.Logger.Info("session started", "session", spec.ID, "roots", len(spec.Roots), "profile", spec.Profile, "restored", r != nil)
	return s, nil
}

// Get returns the session with id, loading it from the store when an
// earlier process left it there.
func (m *Manager) Get(id string) (*Session, error) {
	return m.GetWith(id, GetOptions{})
}

// GetOptions are what an editor adds to a session it loads.
type GetOptions struct {
	// MCPServers are the editor's MCP servers (ACP session/load), used
	// when the session is loaded from the store; a session already open
	// keeps the servers it has.
	MCPServers []mcpconf.Server
}

// GetWith is Get with what the editor adds when the session is loaded.
func (m *Manager) GetWith(id string, o GetOptions) (*Session, error) {
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if m.opts.Store == nil {
		return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return m.load(context.Background(), id, o)
}

// load brings a stored session back: its settings, the tail of its event
// log, and agent 0's history. A run its process did not live to end is
// ended in the log and noted in the history.
func (m *Manager) load(ctx context.Context, id string, o GetOptions) (*Session, error) {
	m.loadMu.Lock()
	defer m.loadMu.Unlock()
	m.mu.Lock()
	s := m.sessions[id]
	m.mu.Unlock()
	if s != nil {
		return s, nil
	}
	st := m.opts.Store
	rec, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	if err := st.Claim(id, pid); err != nil {
		return nil, errBusyElsewhere(id, err)
	}
	release := func() {
		if err := st.Release(id, pid); err != nil {
			m.opts.Logger.Warn("release session", "session", id, "err", err)
		}
	}
	limit := cmp.Or(m.opts.LogLimit, DefaultLogLimit)
	stored, err := st.LastEvents(id, limit)
	if err != nil {
		release()
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	tail := make([]Event, 0, len(stored))
	last := rec.LastSeq
	for _, se := range stored {
		e, err := decodeEvent(se)
		if err != nil {
			m.opts.Logger.Warn("a stored event is unreadable", "session", id, "err", err)
			continue
		}
		tail = append(tail, e)
		last = max(last, e.Seq)
	}
	h, err := st.History(id, 0)
	if err != nil {
		release()
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	r := &restore{hist: HistoryState(h)}
	if closeInterrupted(tail, func(e Event) { r.ended = append(r.ended, e) }) && len(r.hist.Messages) > 0 {
		last := r.hist.Messages[len(r.hist.Messages)-1]
		r.note = &loop.HistoryMessage{N: last.N + 1, Topic: last.Topic, Content: interruptedNote}
	}
	spec := SessionSpec{ID: id, Roots: rec.Roots, Profile: rec.Profile, Model: rec.Model, MCPServers: o.MCPServers}
	var set settings
	if len(rec.Settings) > 0 {
		if err := json.Unmarshal(rec.Settings, &set); err != nil {
			m.opts.Logger.Warn("a stored session's settings are unreadable", "session", id, "err", err)
		}
	}
	if ValidMode(set.Mode) && set.Mode != ModeDefault {
		spec.Mode = set.Mode // a damaged one: the default
	}
	s = newSession(spec, newStoreLog(st, id, m.opts.LogLimit, tail, last), rec.Created)
	s.runs, s.title = rec.Runs, rec.Title
	for _, e := range tail { // the plans as they were last (the tail's)
		s.seePlanLocked(e)
	}
	if err := loadUsage(st, id, &s.usage); err != nil {
		release()
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	if s.cps, err = loadCheckpoints(st, id); err != nil {
		release()
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	s.updated.Store(rec.Updated.UnixNano())
	r.set = set
	s, err = m.start(ctx, s, r)
	if err != nil {
		release()
		return nil, err
	}
	return s, nil
}

// ListOptions chooses the sessions List shows.
type ListOptions struct {
	// Workspace shows the stored sessions of this workspace (its main
	// root); "" is the manager's Workspace.
	Workspace string
	// All shows the stored sessions of every workspace.
	All bool
}

// List describes the sessions of this process and the stored sessions of
// the manager's workspace, oldest first.
func (m *Manager) List() []Info { return m.ListWith(ListOptions{}) }

// ListWith describes the sessions o asks for, oldest first: with a
// Workspace, that workspace's, open in this process or stored; else those
// open in this process and the stored ones of the manager's workspace.
func (m *Manager) ListWith(o ListOptions) []Info {
	m.mu.Lock()
	all := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(all))
	for _, s := range all {
		in := s.Info()
		if o.Workspace != "" && !o.All && (len(in.Roots) == 0 || in.Roots[0] != o.Workspace) {
			continue // another workspace's, though open in this process
		}
		out = append(out, in)
	}
	if st := m.opts.Store; st != nil {
		ws := cmp.Or(o.Workspace, m.opts.Workspace)
		if o.All {
			ws = ""
		}
		if ws != "" || o.All {
			stored, err := st.Sessions(store.ListOptions{Workspace: ws})
			if err != nil {
				m.opts.Logger.Warn("listing the stored sessions", "err", err)
			}
			for _, rec := range stored {
				if slices.ContainsFunc(out, func(in Info) bool { return in.ID == rec.ID }) {
					continue
				}
				out = append(out, infoOf(rec))
			}
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Close cancels the session's run, waits for it to end and forgets the
// session in this process (a stored session stays stored).
func (m *Manager) Close(id string) error {
	m.mu.Lock()
	s := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("close session %q: %w", id, ErrNotFound)
	}
	m.closeSession(s, loop.ErrCancelled) // a client asked
	return nil
}

// Delete closes the session and removes it from the store, with what it
// left outside (Options.OnDelete).
func (m *Manager) Delete(id string) error {
	m.mu.Lock()
	s := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	var spec SessionSpec
	if s != nil {
		m.closeSession(s, loop.ErrCancelled)
		spec = s.Spec()
	}
	if st := m.opts.Store; st != nil {
		rec, err := st.Session(id)
		if err == nil {
			spec = SessionSpec{ID: id, Roots: rec.Roots, Profile: rec.Profile, Model: rec.Model}
			if err := st.Claim(id, pid); err != nil {
				return errBusyElsewhere(id, err)
			}
			if err := st.DeleteSession(id); err != nil {
				return fmt.Errorf("delete session %s: %w", id, err)
			}
		} else if s == nil {
			return fmt.Errorf("delete session %q: %w", id, ErrNotFound)
		}
	} else if s == nil {
		return fmt.Errorf("delete session %q: %w", id, ErrNotFound)
	}
	if m.opts.OnDelete != nil {
		m.opts.OnDelete(spec)
	}
	if err := m.PruneSnapshots(); err != nil {
		m.opts.Logger.Warn("after deleting a session", "session", id, "err", err)
	}
	m.opts.Logger.Info("session deleted", "session", id)
	return nil
}

// CloseAll closes every session, their runs ending in parallel, and
// writes what the store still queues.
func (m *Manager) CloseAll() {
	m.mu.Lock()
	all := make([]*Session, 0, len(m.sessions))
	for id, s := range m.sessions {
		all = append(all, s)
		delete(m.sessions, id)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Go(func() { m.closeSession(s, loop.ErrShutdown) })
	}
	wg.Wait()
	if st := m.opts.Store; st != nil {
		if err := st.Flush(); err != nil {
			m.opts.Logger.Warn("writing the sessions", "err", err)
		}
	}
}

// Unreached reports whether session id was created in this process, ran,
// and each of its runs ended with an error before the model said anything
// (a closed port, a refused key, no such model): it holds nothing but the
// messages the model never answered, and
// closing it removes it from the store rather than leave it among the
// sessions to continue.
func (m *Manager) Unreached(id string) bool {
	m.mu.Lock()
	rs := m.reach[id]
	m.mu.Unlock()
	return rs != nil && rs.ran.Load() && !rs.reached.Load()
}

func (m *Manager) closeSession(s *Session, cause error) {
	s.closeFor(cause)
	unreached := m.Unreached(s.ID())
	m.mu.Lock()
	delete(m.reach, s.ID())
	m.mu.Unlock()
	if b := m.opts.Broker; b != nil {
		b.detach(s.ID())
	}
	if st := m.opts.Store; st != nil {
		discarded := false
		if unreached {
			if err := st.DeleteSession(s.ID()); err != nil {
				m.opts.Logger.Warn("removing a session that never reached the model", "session", s.ID(), "err", err)
			} else {
				discarded = true
				m.opts.Logger.Info("session removed: none of its runs reached the model", "session", s.ID())
				if m.opts.OnDelete != nil {
					m.opts.OnDelete(s.Spec())
				}
			}
		}
		if !discarded {
			if err := st.Release(s.ID(), pid); err != nil {
				m.opts.Logger.Warn("release session", "session", s.ID(), "err", err)
			}
		}
	}
	if m.opts.OnClose != nil {
		m.opts.OnClose(s.Spec())
	}
	m.opts.Logger.Info("session closed", "session", s.ID())
}

// ErrAmbiguous is the error of an id prefix that more than one session's
// id starts with.
var ErrAmbiguous = errors.New("names more than one session")

// ResolveID returns the one of ids that is id, or else the one that starts
// with id, as people shorten the ids a listing shows. None is an error
// wrapping [ErrNotFound]; several, one wrapping [ErrAmbiguous] that lists
// them.
func ResolveID(ids []string, id string) (string, error) {
	var found []string
	for _, full := range ids {
		if full == id {
			return id, nil
		}
		if id != "" && strings.HasPrefix(full, id) && !slices.Contains(found, full) {
			found = append(found, full)
		}
	}
	switch len(found) {
	case 0:
		return "", idError{fmt.Sprintf("no session %q", id), ErrNotFound}
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	shown := found
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(found)-10))
	}
	return "", idError{fmt.Sprintf("session id %q names more than one session: %s; give more of it", id, strings.Join(shown, ", ")), ErrAmbiguous}
}

// idError says what is wrong with a session id in the user's words and
// wraps the sentinel the callers test.
type idError struct {
	msg string
	err error
}

func (e idError) Error() string { return e.msg }
func (e idError) Unwrap() error { return e.err }

// Resolve returns the id of the session, open in this process or stored
// for any workspace, that id names: the whole id, or a prefix that only one
// session's id starts with (see [ResolveID]).
func (m *Manager) Resolve(id string) (string, error) {
	m.mu.Lock()
	ids := make([]string, 0, len(m.sessions))
	for full := range m.sessions {
		ids = append(ids, full)
	}
	m.mu.Unlock()
	if slices.Contains(ids, id) {
		return id, nil
	}
	if st := m.opts.Store; st != nil {
		stored, err := st.Sessions(store.ListOptions{})
		if err != nil {
			return "", fmt.Errorf("session %q: %w", id, err)
		}
		for _, rec := range stored {
			ids = append(ids, rec.ID)
		}
	}
	return ResolveID(ids, id)
}

// ValidID reports whether id may name a session: it names files too (the
// session's spilled output), so it is a plain word.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
