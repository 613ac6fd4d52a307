package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// From here on the person's messages wait for the subordinate's
	// checkpoints instead of interrupting this delegation.
	unblock := s.barrier()
	defer unblock()
	if !a.CanDelegate() {
		return "", fmt.Errorf("%w: agent A%d may not delegate (subordinates may go %d levels deep)", ErrDepth, a.Number, *s.cfg.Limits.SubordinateDepth)
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
		if old := a.Subordinate; old != nil {
			old.retire()
		}
		sub = s.newAgent(a.Number+1, a, newAgentSetup(setup))
		a.Subordinate = sub
	}

	sub.emit(Event{Type: EventSubordinateStarted, Profile: sub.Profile, Text: message})
	sub.histAddUser(ctx, Input{Text: message}, false)
	answer, err := sub.monologue(ctx)
	sub.History.NewTopic()
	end := Event{Type: EventSubordinateEnded, Profile: sub.Profile, Text: answer}
	if err != nil {
		end.Error = err.Error()
	}
	sub.emit(end)
	return answer, err
}

// CanDelegate reports whether the agent may start a subordinate under
// Limits.SubordinateDepth.
func (a *Agent) CanDelegate() bool {
	return a.Number+1 <= *a.session.cfg.Limits.SubordinateDepth
}

// AgentCloser is implemented by tools that hold resources per agent (shells):
// CloseAgent is called when an agent is discarded, a subordinate replaced
// by reset or by another profile.
type AgentCloser interface {
	CloseAgent(*Agent)
}

// Availability is implemented by tools that only some agents may use (a
// tool an agent cannot use is neither described to it nor run for it).
type Availability interface {
	AvailableTo(*Agent) bool
}

// retire releases what the agent and its own subordinates hold.
func (a *Agent) retire() {
	if a.Subordinate != nil {
		a.Subordinate.retire()
	}
	for _, t := range a.setup.Tools {
		if c, ok := t.(AgentCloser); ok {
			c.CloseAgent(a)
		}
	}
}

// tool returns the named tool if the agent has it and may use it.
func (a *Agent) tool(name string) Tool {
	t := a.setup.tools[name]
	if t == nil {
		t = a.found[name]
	}
	if t == nil {
		return nil
	}
	if av, ok := t.(Availability); ok && !av.AvailableTo(a) {
		return nil
	}
	return t
}

// toolNames are the names of the tools the agent is offered, sorted: the
// setup's and those its ToolSource found; in plan mode only those with a
// method that changes nothing.
func (a *Agent) toolNames() []string {
	names := make([]string, 0, len(a.setup.names)+len(a.foundNames))
	planning := a.session.Planning()
	for _, list := range [][]string{a.setup.names, a.foundNames} {
		for _, n := range list {
			if t := a.tool(n); t != nil && (!planning || readsSomehow(t)) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names
}

// readsSomehow reports whether one of t's methods changes nothing: what
// plan mode offers.
func readsSomehow(t Tool) bool {
	return slices.ContainsFunc(methods(t), func(m string) bool { return ChangesNothing(t, m) })
}

// methods are the methods a tool offers ("" for one without).
func methods(t Tool) []string {
	sp, ok := t.(Specified)
	if !ok {
		return []string{""}
	}
	specs := sp.Specs()
	if len(specs) == 0 {
		return []string{""}
	}
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Method
	}
	return out
}

// FoundTools are the tools the setup's ToolSource provided for the
// monologue going on (for the extension that describes them to the model),
// in plan mode only those that change nothing.
func (a *Agent) FoundTools() []Tool {
	out := make([]Tool, 0, len(a.foundNames))
	planning := a.session.Planning()
	for _, n := range a.foundNames {
		if t := a.tool(n); t != nil && (!planning || readsSomehow(t)) {
			out = append(out, t)
		}
	}
	return out
}
