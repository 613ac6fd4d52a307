package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpconf"
)

// The events of a question put to the user during a run (an MCP server's
// elicitation), beside the approval events.
const (
	// EventQuestionRequested: a question waits for the person. Text is its
	// id, Title who asks (the server), Question the question itself.
	EventQuestionRequested loop.EventType = "question_requested"
	// EventQuestionResolved: the question was answered or abandoned. Text
	// is its id, Status the answer's action (ask.Accept, ask.Decline or
	// ask.Cancel). What the person filled in is never in an event.
	EventQuestionResolved loop.EventType = "question_resolved"
)

// Questions is what the faces use to answer the questions of a session's
// run. They learn of them from question_requested events or by polling
// PendingQuestions; the first answer wins.
type Questions interface {
	// PendingQuestions lists the waiting questions of a session ("" for
	// all), oldest first.
	PendingQuestions(session string) []ask.Question
	// AnswerQuestion answers a waiting question (a face that cannot put
	// it to the person answers ask.Declined).
	AnswerQuestion(id string, a ask.Answer) error
}

var _ Questions = (*Broker)(nil)

// Questions returns the broker as the faces' Questions, or nil when the
// manager has none.
func (m *Manager) Questions() Questions {
	if m.opts.Broker == nil {
		return nil
	}
	return m.opts.Broker
}

// question is a question waiting for its answer.
type question struct {
	q      ask.Question
	answer chan ask.Answer // buffer 1: the one answerer never blocks
}

var questionIDs atomic.Uint64

// Ask puts q to the person through the faces of session and waits for the
// answer, or for ctx to end (the run cancelled: the answer is ask.Cancel
// and ctx's error). A session no face follows answers ask.Declined with
// ask.ErrNoOne at once.
func (b *Broker) Ask(ctx context.Context, session string, q ask.Question) (ask.Answer, error) {
	b.mu.Lock()
	if b.emitters[session] == nil {
		b.mu.Unlock()
		return ask.Declined, ask.ErrNoOne
	}
	q.ID = "q" + strconv.FormatUint(questionIDs.Add(1), 10)
	q.Session = session
	pd := &question{q: q, answer: make(chan ask.Answer, 1)}
	if b.questions == nil {
		b.questions = map[string]*question{}
	}
	b.questions[q.ID] = pd
	b.asked = append(b.asked, q.ID)
	b.mu.Unlock()

	shown := q
	b.emit(session, Event{Type: EventQuestionRequested, Text: q.ID, Title: q.Server, Question: &shown})
	resolved := Event{Type: EventQuestionResolved, Text: q.ID, Title: q.Server}
	select {
	case a := <-pd.answer:
		resolved.Status = a.Action
		b.emit(session, resolved)
		return a, nil
	case <-ctx.Done():
		b.takeQuestion(q.ID)
		resolved.Status = ask.Cancel
		b.emit(session, resolved)
		return ask.Answer{Action: ask.Cancel}, context.Cause(ctx)
	}
}

// takeQuestion removes a waiting question; exactly one caller gets it.
func (b *Broker) takeQuestion(id string) *question {
	b.mu.Lock()
	defer b.mu.Unlock()
	pd := b.questions[id]
	if pd == nil {
		return nil
	}
	delete(b.questions, id)
	b.asked = slices.DeleteFunc(b.asked, func(s string) bool { return s == id })
	return pd
}

// PendingQuestions implements Questions.
func (b *Broker) PendingQuestions(session string) []ask.Question {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ask.Question
	for _, id := range b.asked {
		if q := b.questions[id].q; session == "" || q.Session == session {
			out = append(out, q)
		}
	}
	return out
}

// AnswerQuestion implements Questions.
func (b *Broker) AnswerQuestion(id string, a ask.Answer) error {
	switch a.Action {
	case ask.Accept, ask.Decline, ask.Cancel:
	default:
		return fmt.Errorf("answer %q: %w: the action is accept, decline or cancel, not %q", id, ErrInvalid, a.Action)
	}
	pd := b.takeQuestion(id)
	if pd == nil {
		return fmt.Errorf("answer %q: %w", id, ErrNotFound)
	}
	if a.Action != ask.Accept {
		a.Content = nil
	}
	pd.answer <- a
	return nil
}

// LoginHinted finds in a warning's text that an MCP server needs the
// person to log in (mcpconf.LoginHint): the server's name, for a face that
// offers the login its own way.
func LoginHinted(text string) (name string, ok bool) { return mcpconf.LoginHinted(text) }
