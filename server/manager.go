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
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/zeroagent/zero/loop"
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
	// Now is the clock; nil uses time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Manager holds the sessions. It is safe for concurrent use.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*Session
}

// Info describes a session for listings.
type Info struct {
	ID      string   `json:"id"`
	Roots   []string `json:"roots,omitempty"`
	Profile string   `json:"profile,omitempty"`
	Model   string   `json:"model,omitempty"`
	// Title is the first message of the session, shortened.
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Running bool      `json:"running"`
	Paused  bool      `json:"paused,omitempty"`
	Runs    int       `json:"runs"`
	LastSeq int64     `json:"last_seq"`
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
	return &Manager{opts: opts, sessions: map[string]*Session{}}
}

// Approvals returns the broker, or nil when the manager has none.
func (m *Manager) Approvals() Approvals {
	if m.opts.Broker == nil {
		return nil
	}
	return m.opts.Broker
}

// Create builds and registers a session.
func (m *Manager) Create(ctx context.Context, spec SessionSpec) (*Session, error) {
	spec.Roots = slices.Clone(spec.Roots)
	if spec.ID == "" {
		spec.ID = newID()
	}
	m.mu.Lock()
	_, taken := m.sessions[spec.ID]
	m.mu.Unlock()
	if taken {
		return nil, fmt.Errorf("create session %q: %w: in use", spec.ID, ErrSessionID)
	}
	s := newSession(spec, m.opts.NewLog(spec.ID), m.opts.Now())
	s.setup, s.now, s.trust = m.opts.Setup, m.opts.Now, m.opts.Trust
	ls, err := m.opts.NewSession(ctx, spec, s.sink)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if ls.ID() != spec.ID {
		return nil, fmt.Errorf("create session %q: %w: the engine session is %q", spec.ID, ErrSessionID, ls.ID())
	}
	s.ls = ls
	if b := m.opts.Broker; b != nil {
		ls.SetGate(b.Gate)
	}
	m.mu.Lock()
	if _, taken := m.sessions[spec.ID]; taken {
		m.mu.Unlock()
		return nil, fmt.Errorf("create session %q: %w: in use", spec.ID, ErrSessionID)
	}
	m.sessions[spec.ID] = s
	m.mu.Unlock()
	if b := m.opts.Broker; b != nil {
		b.attach(spec.ID, s.emit)
	}
	m.opts.Logger.Info("session created", "session", spec.ID, "roots", len(spec.Roots), "profile", spec.Profile)
	return s, nil
}

// Get returns the session with id.
func (m *Manager) Get(id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if s == nil {
		return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	return s, nil
}

// List describes the sessions, oldest first.
func (m *Manager) List() []Info {
	m.mu.Lock()
	all := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(all))
	for _, s := range all {
		out = append(out, s.Info())
	}
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Close cancels the session's run, waits for it to end and forgets the
// session.
func (m *Manager) Close(id string) error {
	m.mu.Lock()
	s := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if s == nil {
		return fmt.Errorf("close session %q: %w", id, ErrNotFound)
	}
	m.closeSession(s)
	return nil
}

// CloseAll closes every session, their runs ending in parallel.
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
		wg.Go(func() { m.closeSession(s) })
	}
	wg.Wait()
}

func (m *Manager) closeSession(s *Session) {
	s.close()
	if b := m.opts.Broker; b != nil {
		b.detach(s.ID())
	}
	m.opts.Logger.Info("session closed", "session", s.ID())
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
