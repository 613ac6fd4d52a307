package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zeroagent/zero/llm"
)

// fitState is what a session learned from the model's "context length
// exceeded" answers: the window the server stated, and each agent's
// overflows in a row.
type fitState struct {
	window atomic.Int64 // the stated window, when below Limits.ContextTokens; 0: none

	mu     sync.Mutex
	streak map[*Agent]int // overflows since the agent's last model call that went through
}

// contextTokens is the model's context window as the session knows it:
// Limits.ContextTokens, or the smaller window an overflow answer stated.
func (s *Session) contextTokens() int {
	w := s.cfg.Limits.ContextTokens
	if learned := int(s.fit.window.Load()); learned > 0 && learned < w {
		return learned
	}
	return w
}

// learnWindow lowers the session's window to tokens, and reports whether
// it did (a larger or equal window changes nothing).
func (s *Session) learnWindow(tokens int) bool {
	for {
		cur := s.fit.window.Load()
		if tokens <= 0 || tokens >= s.contextTokens() {
			return false
		}
		if s.fit.window.CompareAndSwap(cur, int64(tokens)) {
			return true
		}
	}
}

func (s *Session) overflowed(a *Agent) int {
	s.fit.mu.Lock()
	defer s.fit.mu.Unlock()
	if s.fit.streak == nil {
		s.fit.streak = map[*Agent]int{}
	}
	s.fit.streak[a]++
	return s.fit.streak[a]
}

func (s *Session) fitted(a *Agent) {
	s.fit.mu.Lock()
	defer s.fit.mu.Unlock()
	delete(s.fit.streak, a)
}

// OverflowError ends a run whose prompt the model refused as too long twice
// in a row, the second time after its history was compressed. It matches
// [ErrContextFull] and llm.ErrContextOverflow.
type OverflowError struct {
	Window int   // the window Zero kept within, in tokens
	Stated int   // the window the server stated, 0 when it did not
	Err    error // the server's answer
}

func (e *OverflowError) Error() string {
	said := "the model server refused the prompt as longer than the model's context window twice in a row, the second time after the history was compressed"
	fix := fmt.Sprintf("Zero kept within %d tokens; if the server's window is smaller, set models.chat.context_length to it", e.Window)
	if e.Stated > 0 {
		fix = fmt.Sprintf("the server says the window is %d tokens", e.Stated)
	}
	return fmt.Sprintf("%s (%v). %s; give the model a larger context on the server (Ollama: OLLAMA_CONTEXT_LENGTH or PARAMETER num_ctx; llama.cpp: --ctx-size; vLLM: --max-model-len; LM Studio: the model's context length), "+
		"or start a new session, or send a shorter message", said, e.Err, fix)
}

func (e *OverflowError) Unwrap() []error { return []error{ErrContextFull, e.Err} }

// overflowShare is how much of its tokens the history keeps when a
// compression is forced by an overflow answer that stated no window.
const overflowShare = 0.5

// recoverOverflow is the error policy for a model call the server refused
// as too long for the model's context window (llm.ContextOverflow): the
// window it states, if any, is the session's from now on; the history is
// compressed (forced, below its usual limit when need be); and the turn is
// tried again, once. A second overflow in a row ends the run with an
// [OverflowError]. It reports whether err was an overflow.
func (a *Agent) recoverOverflow(ctx context.Context, item string, err error) (bool, error) {
	var shown *shownError // a tool's failure, whatever model it called
	if !errors.Is(err, llm.ErrContextOverflow) || errors.As(err, &shown) {
		return false, nil
	}
	s := a.session
	stated, _ := llm.ContextOverflow(err)
	before := s.contextTokens()
	if s.learnWindow(stated) && s.cfg.LearnedWindow != nil {
		s.cfg.LearnedWindow(stated)
	}
	if s.overflowed(a) > 1 {
		a.emit(Event{Type: EventError, Item: item, Text: err.Error()})
		return true, &OverflowError{Window: s.contextTokens(), Stated: stated, Err: err}
	}
	window := s.contextTokens()
	what := "the model server refused the prompt as too long for the model's context window"
	if window < before {
		what += fmt.Sprintf("; it says the window is %d tokens, not %d, and the session keeps within that from now on", window, before)
	}
	// The history must fit under the (maybe lowered) limit; when it did
	// already, Zero's count is short of the server's: take a part of it.
	target := a.HistoryLimit()
	if h := a.History.Tokens(); h <= target {
		target = int(float64(h) * overflowShare)
	}
	if a.compressHistoryTo(ctx, target) {
		what += "; the history was compressed and the request is sent again"
	} else {
		what += "; the history could not be compressed further, the request is sent again once"
	}
	a.warn(item, what)
	return true, nil
}
