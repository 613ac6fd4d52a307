package server

import (
	"fmt"
	"slices"

	"github.com/zeroagent/zero/loop"
)

// The session modes every face offers.
const (
	// ModeDefault: the agent reads, edits and runs commands as the approval
	// policy allows.
	ModeDefault = "default"
	// ModePlan: the agent is offered, and may run, only what changes
	// nothing (loop.ChangesNothing); its answer is a plan.
	ModePlan = "plan"
)

// EventModeChanged is logged when a session's mode changes; Text is the
// new mode. Every face that follows the session shows it.
const EventModeChanged loop.EventType = "mode_changed"

// A Mode is a session mode as the faces offer it.
type Mode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Modes are the session modes, the default first.
var Modes = []Mode{
	{ModeDefault, "Default", "Reads, edits files and runs commands as the approval policy allows"},
	{ModePlan, "Plan", "Reads, searches and thinks without changing anything; answers with a plan"},
}

// PlanModeRefusal is what the model is told of a call plan mode refused.
const PlanModeRefusal = "Refused: plan mode is on, so only calls that change nothing (reading, searching, thinking) may run. " +
	"Answer with your plan (the response tool); the user turns plan mode off to have it carried out."

// ActMessage is the message a face sends for the user who leaves plan
// mode to have the plan carried out (ACP's and the terminal's /act).
const ActMessage = "Plan mode is off now: carry out the plan you made above."

// PlanSwitch is the mode a face's /plan command asks for: arg "on" plan
// mode, "off" the default, "" the other one than current.
func PlanSwitch(current, arg string) (string, error) {
	switch {
	case arg == "on":
		return ModePlan, nil
	case arg == "off" || arg == "" && current == ModePlan:
		return ModeDefault, nil
	case arg == "":
		return ModePlan, nil
	}
	return "", fmt.Errorf("/plan takes on, off or nothing (to switch), not %q", arg)
}

// ValidMode reports whether id is a session mode ("" is the default).
func ValidMode(id string) bool {
	return id == "" || slices.ContainsFunc(Modes, func(m Mode) bool { return m.ID == id })
}

// Mode is the session's mode (ModeDefault or ModePlan).
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spec.Mode == "" {
		return ModeDefault
	}
	return s.spec.Mode
}

// SetMode switches the session's mode, from the next tool call on (a run
// going on included); the change is logged (EventModeChanged) and kept
// with the session. Plan mode is enforced by the approval broker, so a
// manager without one refuses it.
func (s *Session) SetMode(mode string) error {
	if !ValidMode(mode) {
		return fmt.Errorf("session %s: %w: unknown mode %q (the modes are default and plan)", s.spec.ID, ErrInvalid, mode)
	}
	if mode == "" {
		mode = ModeDefault
	}
	if mode == ModePlan && s.broker == nil {
		return fmt.Errorf("session %s: plan mode: %w without an approval broker", s.spec.ID, ErrUnsupported)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
	}
	was := s.spec.Mode
	if was == "" {
		was = ModeDefault
	}
	s.spec.Mode = mode
	s.applyModeLocked()
	s.mu.Unlock()
	if was != mode {
		s.emit(Event{Type: EventModeChanged, Text: mode})
		s.persist()
	}
	return nil
}

// applyModeLocked tells the engine (what it offers) and the broker (what
// it refuses) the session's mode.
func (s *Session) applyModeLocked() {
	plan := s.spec.Mode == ModePlan
	if s.ls != nil {
		s.ls.SetPlanning(plan)
	}
	if s.broker != nil {
		s.broker.setPlanning(s.spec.ID, plan)
	}
}
