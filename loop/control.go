package loop

import (
	"context"
	"reflect"
)

// Pause holds the session's run at its next checkpoint, before the next
// model call, until Resume or Cancel (Agent Zero's pause). A pause set while
// nothing runs holds the next run before its first model call.
func (s *Session) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resume == nil {
		s.resume = make(chan struct{})
	}
}

// Resume lets a paused run go on.
func (s *Session) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resume != nil {
		close(s.resume)
		s.resume = nil
	}
}

// Paused reports whether the session is paused.
func (s *Session) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume != nil
}

// waitWhilePaused blocks while the session is paused; it returns the
// context's error when the run is cancelled meanwhile. A pending
// intervention does not wake it: the user paused to read, and the message
// is delivered once they resume.
func (s *Session) waitWhilePaused(ctx context.Context) error {
	for {
		s.mu.Lock()
		ch := s.resume
		s.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Reset starts the conversation over (Agent Zero's context reset): agent 0
// and its subordinates are discarded with their history and shells, and a
// new agent 0 takes over with the session's current setup. It fails with
// ErrBusy while a run is going on.
func (s *Session) Reset() error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return ErrBusy
	}
	old := s.agent0
	s.mu.Unlock()
	old.retire()
	a := s.newAgent(0, nil, newAgentSetup(s.cfg.Setup))
	s.mu.Lock()
	s.agent0 = a
	s.mu.Unlock()
	return nil
}

// SetSetup gives agent 0 another setup (a profile or a model chosen by
// the editor) from the next run on; the history stays. Subordinates keep
// theirs until they are replaced. It fails with ErrBusy while a run is
// going on.
func (s *Session) SetSetup(st Setup) error {
	if st.Model == nil || st.Prompts == nil {
		panic("loop.Session.SetSetup: Model and Prompts are required")
	}
	as := newAgentSetup(st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return ErrBusy
	}
	s.cfg.Setup = st
	a := s.agent0
	for _, t := range a.setup.Tools {
		if c, ok := t.(AgentCloser); ok && !sameTool(as.tools[t.Name()], t) {
			c.CloseAgent(a)
		}
	}
	a.setup, a.Profile = as, as.Profile
	return nil
}

// Profile is agent 0's profile.
func (s *Session) Profile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent0.Profile
}

// sameTool reports whether the new setup keeps tool t itself, so what it
// holds for the agent (its shells) stays. Tools of types that cannot be
// compared count as replaced.
func sameTool(newer, t Tool) bool {
	if newer == nil || reflect.TypeOf(newer) != reflect.TypeOf(t) || !reflect.TypeOf(t).Comparable() {
		return false
	}
	return newer == t
}
