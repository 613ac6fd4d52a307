package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// HistoryMark is a point in agent 0's history: how many raw messages and
// summaries it held then, and its topic. A history only grows (see
// journal.go), so a mark taken before a run is all it takes to go back to
// it: [Session.RewindHistory] drops what came after.
type HistoryMark struct {
	Messages  int `json:"messages"`
	Summaries int `json:"summaries"`
	Topic     int `json:"topic"`
}

// Mark is agent 0's history as it is now.
func (s *Session) Mark() HistoryMark {
	h := s.Agent0().History
	h.mu.Lock()
	defer h.mu.Unlock()
	return HistoryMark{Messages: len(h.msgs), Summaries: len(h.sums), Topic: h.topic}
}

// ErrNothingToCompact is Compact's error for a history with nothing to
// summarise.
var ErrNothingToCompact = errors.New("nothing to compact: the history holds fewer than two messages the model sees")

// RewindHistory takes agent 0's history back to m: the messages and
// summaries added since go (a compaction since is undone with them), and so
// do the subordinates, which start afresh as they do after a restore. The
// agent itself stays, with its shells. It fails with ErrBusy during a run.
// What is journaled is not rewritten here: the caller tells its store (the
// journal only ever appends).
func (s *Session) RewindHistory(m HistoryMark) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return fmt.Errorf("rewind history: %w", ErrBusy)
	}
	a := s.agent0
	s.mu.Unlock()
	if err := a.History.truncate(m); err != nil {
		return fmt.Errorf("rewind history: %w", err)
	}
	if sub := a.Subordinate; sub != nil {
		sub.retire()
		a.Subordinate = nil
	}
	a.lastUserMessage = a.History.lastUser()
	a.compression.mu.Lock()
	a.compression.stuck = historySize{}
	a.compression.mu.Unlock()
	return nil
}

// truncate drops the messages and summaries after m.
func (h *History) truncate(m HistoryMark) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case m.Messages < 0 || m.Summaries < 0 || m.Topic < 0:
		return fmt.Errorf("%w: negative mark %+v", ErrHistoryState, m)
	case m.Messages > len(h.msgs) || m.Summaries > len(h.sums):
		return fmt.Errorf("%w: the mark (%d messages, %d summaries) is past the history (%d, %d)",
			ErrHistoryState, m.Messages, m.Summaries, len(h.msgs), len(h.sums))
	case m.Messages > 0 && m.Topic < h.msgs[m.Messages-1].Topic:
		return fmt.Errorf("%w: the mark's topic %d is before its last message's %d", ErrHistoryState, m.Topic, h.msgs[m.Messages-1].Topic)
	}
	sums := slices.Clone(h.sums[:m.Summaries])
	for _, s := range sums {
		if s.To >= m.Messages {
			return fmt.Errorf("%w: summary %d covers message %d, past the mark", ErrHistoryState, s.ID, s.To)
		}
	}
	h.msgs = slices.Clone(h.msgs[:m.Messages])
	h.topic, h.topics = m.Topic, 0
	for i, msg := range h.msgs {
		if i == 0 || h.msgs[i-1].Topic != msg.Topic {
			h.topics++
		}
	}
	h.sums, h.top = nil, nil
	for _, s := range sums {
		if err := h.place(s); err != nil { // they were placed in this order before
			return fmt.Errorf("%w: %w", ErrHistoryState, err)
		}
	}
	h.rebuild()
	close(h.changed)
	h.changed = make(chan struct{})
	return nil
}

// Compact summarises agent 0's whole history now with the utility model
// (Agent Zero's topic summary prompts, with focus, when given, as the
// guidance of what to keep), as one summary laid over every message: what
// the model sees next is that summary and what follows. It returns the
// tokens before and after and emits history_compressed. A rewind to a mark
// taken before undoes it. It fails with ErrBusy during a run, and with
// ErrNothingToCompact when there is too little to summarise.
func (s *Session) Compact(ctx context.Context, focus string) (TokenChange, error) {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return TokenChange{}, fmt.Errorf("compact: %w", ErrBusy)
	}
	s.running = true // no run starts while the utility model summarises
	a := s.agent0
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	a.compression.run.Lock()
	defer a.compression.run.Unlock()
	units, _ := a.History.countedView()
	if len(units) < 2 {
		return TokenChange{}, ErrNothingToCompact
	}
	before := a.History.Tokens()
	c := &compressor{a: a, h: a.History, focus: strings.TrimSpace(focus)}
	p := splitParts(units, -1)
	did, err := c.summarize(ctx, &p, 0, len(units)-1, SummaryBulk)
	if err != nil {
		return TokenChange{}, fmt.Errorf("compact: %w", err)
	}
	after := a.History.Tokens()
	if !did {
		return TokenChange{Before: before, After: after}, fmt.Errorf("compact: %w", ErrSummaryNotShorter)
	}
	change := TokenChange{Before: before, After: after}
	text := fmt.Sprintf("history compacted from %d to %d tokens", before, after)
	if c.focus != "" {
		text += " (focus: " + s.mask(c.focus) + ")"
	}
	a.emit(Event{Type: EventHistoryCompressed, Item: s.newItem("history"), Text: text, Tokens: &change})
	return change, nil
}

// ErrSummaryNotShorter is Compact's error when the utility model's summary
// was no shorter than what it would replace: nothing was changed.
var ErrSummaryNotShorter = errors.New("the summary was not shorter than the history; nothing was changed")

// Busy is implemented by tools that can leave work running after their
// call returned (a shell's background jobs): Activities names it for one
// agent, so a rewind can say what it cannot undo.
type Busy interface {
	Activities(*Agent) []string
}

// Activities names what the tools of agent 0 and its subordinates still
// run (see Busy), with secrets masked: a process's command line holds
// the values the agent's command expanded.
func (s *Session) Activities() []string {
	var out []string
	for a := s.Agent0(); a != nil; a = a.Subordinate {
		for _, t := range a.setup.Tools {
			if b, ok := t.(Busy); ok {
				for _, line := range b.Activities(a) {
					out = append(out, s.mask(line))
				}
			}
		}
	}
	return out
}
