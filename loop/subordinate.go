package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrDepth is returned by Delegate when the agent chain is already as deep
// as Limits.SubordinateDepth allows.
var ErrDepth = errors.New("subordinate depth limit reached")

// DefaultSubordinateProfile is the profile of a subordinate whose
// superior named none: the base prompts, not agent0's "talk to the user".
const DefaultSubordinateProfile = "default"

// Delegate is Agent Zero's call_subordinate: it hands message to agent N+1
// and runs its monologue, returning the subordinate's answer. The existing
// subordinate is reused (it keeps its history) unless reset is set or
// another profile is asked for. Each delegation ends the subordinate's
// history topic. The person's messages reach the subordinate while it
// works; cancelling the run stops the whole chain.
func (a *Agent) Delegate(ctx context.Context, message, profile string, reset bool) (string, error) {
	s := a.session
	if a.Number+1 > s.cfg.Limits.SubordinateDepth {
		return "", fmt.Errorf("%w: agent A%d may not delegate (subordinates may go %d levels deep)", ErrDepth, a.Number, max(s.cfg.Limits.SubordinateDepth, 0))
	}
	if err := context.Cause(ctx); err != nil {
		return "", err // cancelled, or the person spoke before it began
	}
	profile = strings.TrimSpace(profile)
	sub := a.Subordinate
	if sub == nil || reset || (profile != "" && profile != sub.Profile) {
		if profile == "" {
			profile = DefaultSubordinateProfile
		}
		setup := a.setup.Setup
		setup.Profile = profile
		if s.cfg.Subordinate != nil {
			var err error
			if setup, err = s.cfg.Subordinate(profile); err != nil {
				return "", err
			}
			setup.Profile = profile
		}
		sub = s.newAgent(a.Number+1, a, newAgentSetup(setup))
		a.Subordinate = sub
	}

	unblock := s.barrier()
	defer unblock()
	sub.emit(Event{Type: EventSubordinateStarted, Profile: sub.Profile, Text: message})
	sub.histAddUser(ctx, message, false)
	answer, err := sub.monologue(ctx)
	sub.History.NewTopic()
	end := Event{Type: EventSubordinateEnded, Profile: sub.Profile, Text: answer}
	if err != nil {
		end.Error = err.Error()
	}
	sub.emit(end)
	return answer, err
}
