package server

import (
	"context"
	"fmt"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
)

// Configure switches the session to another profile or model (an empty
// argument keeps the current one) from the next run on; the conversation
// stays. It fails with loop.ErrBusy during a run.
func (s *Session) Configure(ctx context.Context, profile, model string) error {
	if s.setup == nil {
		return fmt.Errorf("configure session %s: %w", s.spec.ID, ErrUnsupported)
	}
	spec := s.Spec()
	if profile != "" {
		spec.Profile = profile
	}
	if model != "" {
		spec.Model = model
	}
	st, err := s.setup(ctx, spec)
	if err != nil {
		return fmt.Errorf("configure session %s: %w", s.spec.ID, err)
	}
	if err := s.setSetup(st, spec); err != nil {
		return err
	}
	s.persist()
	return nil
}

func (s *Session) setSetup(st loop.Setup, spec SessionSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
	}
	if err := s.ls.SetSetup(st); err != nil {
		return fmt.Errorf("configure session %s: %w", s.spec.ID, err)
	}
	s.spec.Profile, s.spec.Model = spec.Profile, spec.Model
	return nil
}

// SetTitle names the session as the person chose (one line of at most 200
// characters); it is kept with the session and no longer follows its first
// message.
func (s *Session) SetTitle(title string) {
	s.mu.Lock()
	s.title = cut.Line(title, 200)
	s.mu.Unlock()
	s.persist()
}

// Reset starts the conversation over: history, subordinates and shells
// go, the event log stays. It fails with loop.ErrBusy during a run.
func (s *Session) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
	}
	if s.busy {
		return fmt.Errorf("reset session %s: %w", s.spec.ID, loop.ErrBusy)
	}
	if err := s.ls.Reset(); err != nil {
		return fmt.Errorf("reset session %s: %w", s.spec.ID, err)
	}
	s.plans = nil // the agents' plans went with them
	if s.store != nil {
		s.store.ClearHistory(s.spec.ID) // queued: before the next run's messages
	}
	return nil
}

// Pause holds the run at its next checkpoint (before the next model call)
// until Resume; a pause with no run going on holds the next one.
func (s *Session) Pause() { s.ls.Pause() }

// Resume lets a paused run go on.
func (s *Session) Resume() { s.ls.Resume() }

// Paused reports whether the session is paused.
func (s *Session) Paused() bool { return s.ls.Paused() }
