package server

import (
	"maps"
	"slices"

	"github.com/zeroagent/zero/loop"
)

// AgentPlan is one agent's last plan (zero_status shows them).
type AgentPlan struct {
	Agent int        `json:"agent"`
	Items []PlanItem `json:"items"`
}

// seePlan keeps e's plan as its agent's last; s.mu is held.
func (s *Session) seePlanLocked(e Event) {
	if e.Type != loop.EventPlan || e.Plan == nil {
		return
	}
	if s.plans == nil {
		s.plans = map[int][]PlanItem{}
	}
	s.plans[e.Agent] = slices.Clone(e.Plan.Items)
}

// Plans are the agents' last plans (todo:write), agent 0's first; none
// before an agent wrote one, and none after a reset.
func (s *Session) Plans() []AgentPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []AgentPlan
	for _, n := range slices.Sorted(maps.Keys(s.plans)) {
		out = append(out, AgentPlan{Agent: n, Items: slices.Clone(s.plans[n])})
	}
	return out
}
