package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/checkpoint"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/store"
)

// StopIntervened is the StopReason of a Prompt that was delivered to the
// run in progress as an intervention instead of starting a run.
const StopIntervened = "intervened"

// RunResult is the outcome of a prompt.
type RunResult struct {
	// Run numbers the session's runs from 1; for an intervention, the run
	// that received it.
	Run int `json:"run"`
	// StopReason is loop.StopResponse, loop.StopCancelled, loop.StopError or
	// StopIntervened.
	StopReason string `json:"stop_reason"`
	Response   string `json:"response,omitempty"`
	// Err is why the run failed or loop.ErrCancelled.
	Err error `json:"-"`
	// Usage is what the run's model calls used (run_ended's), nil when
	// it made none.
	Usage *Usage `json:"usage,omitempty"`
}

// Session is one managed conversation: the engine session, its event log
// (which Follow hands out), and the run in progress.
type Session struct {
	spec    SessionSpec
	created time.Time
	log     Log
	ls      *loop.Session // set by Manager.Create before the session is shared
	setup   func(context.Context, SessionSpec) (loop.Setup, error)
	trust   Trust
	now     func() time.Time
	updated atomic.Int64 // unix nanoseconds of the last event
	store   *store.Store // nil: the session lives in memory only
	// settings, with a store, are what the session keeps besides its spec.
	settings func() settings
	broker   *Broker  // nil: no approvals, no plan mode
	commands Commands // nil: no saved prompts
	// snaps keeps the workspace snapshots of the checkpoints; nil: they
	// cover the conversation only.
	snaps *checkpoint.Store

	// deliverMu orders appends: events from the engine and from the
	// broker get increasing Seq in the order they are logged.
	deliverMu sync.Mutex
	// usage adds up the session's usage events (under mu), from the
	// store's log too for a session loaded.
	usage    usageTotals
	plans    map[int][]PlanItem // each agent's last plan, under mu
	notifyMu sync.Mutex
	notify   chan struct{} // closed and replaced on every event: wakes the followers

	mu     sync.Mutex
	cond   *sync.Cond // signalled when busy or live change
	busy   bool       // a run was started and has not returned
	live   bool       // between run_started and run_ended: Intervene works
	cancel context.CancelCauseFunc
	runs   int
	last   RunResult
	answer string // agent 0's response in the run going on
	cps    []Checkpoint
	runCP  int // the checkpoint of the run going on, until its end is snapshotted
	title  string
	closed bool
	// reload asks for the setup to be built again when the run ends (the
	// user trusted the workspace's code during a run).
	reload bool
	done   chan struct{} // closed by close
	ended  chan struct{} // closed and replaced when a run's result is recorded
	wg     sync.WaitGroup
}

func newSession(spec SessionSpec, log Log, now time.Time) *Session {
	s := &Session{spec: spec, created: now, log: log,
		notify: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.now = time.Now
	s.updated.Store(now.UnixNano())
	return s
}

// ID is the session id.
func (s *Session) ID() string { return s.spec.ID }

// Spec is what the session was created with.
func (s *Session) Spec() SessionSpec {
	s.mu.Lock()
	sp := s.spec
	s.mu.Unlock()
	sp.Roots = slices.Clone(sp.Roots)
	return sp
}

// Info describes the session.
func (s *Session) Info() Info {
	s.mu.Lock()
	running, runs, spec, title, usage := s.busy, s.runs, s.spec, s.title, s.usage.usage()
	s.mu.Unlock()
	last := s.Cursor()
	mode := spec.Mode
	if mode == ModeDefault {
		mode = ""
	}
	return Info{ID: spec.ID, Roots: slices.Clone(spec.Roots), Profile: spec.Profile, Model: spec.Model, Mode: mode,
		Title: title, Created: s.created, Updated: time.Unix(0, s.updated.Load()),
		Running: running, Paused: s.ls.Paused(), Runs: runs, LastSeq: last, Usage: usage}
}

// Running reports whether a run is in progress.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// Last returns the result of the last finished run (from its run_ended
// event on), and false when no run has finished yet.
func (s *Session) Last() (RunResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.last.Run > 0
}

// Prompt runs msg and returns when the run ends; cancelling ctx cancels the
// run. When a run is already going on, msg is delivered to it as an
// intervention and Prompt returns at once with StopReason StopIntervened.
// The error is for the session itself (ErrClosed); how the run ended is in
// the result.
func (s *Session) Prompt(ctx context.Context, msg string) (RunResult, error) {
	return s.PromptInput(ctx, loop.Input{Text: msg})
}

// PromptInput is Prompt for a message with images (see Attach).
func (s *Session) PromptInput(ctx context.Context, in loop.Input) (RunResult, error) {
	rctx, cancel, n, err := s.begin(ctx, in, false)
	if err != nil || rctx == nil {
		return RunResult{Run: n, StopReason: StopIntervened}, err
	}
	s.persist()
	return s.run(rctx, cancel, n, in), nil
}

// Send is Prompt without waiting: it starts a run in the background (owned
// by the session; Close waits for it) and returns its number, or delivers
// msg to the run in progress and returns intervened. The result arrives as
// events and through Last.
func (s *Session) Send(msg string) (run int, intervened bool, err error) {
	return s.SendInput(loop.Input{Text: msg})
}

// SendInput is Send for a message with images (see Attach).
func (s *Session) SendInput(in loop.Input) (run int, intervened bool, err error) {
	rctx, cancel, n, err := s.begin(context.Background(), in, false)
	if err != nil || rctx == nil {
		return n, err == nil, err
	}
	s.persist()
	go s.run(rctx, cancel, n, in) // owned by s.wg (begin added it), awaited by close
	return n, false, nil
}

// begin starts a run (returning its context) or intervenes (returning a nil
// context). A run between starting and its run_started event, or between
// run_ended and returning, cannot take an intervention; begin waits out
// that short window.
// With strict, a run going on is not intervened in: begin fails with
// loop.ErrBusy.
func (s *Session) begin(ctx context.Context, in loop.Input, strict bool) (context.Context, context.CancelCauseFunc, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return nil, nil, 0, fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
		case !s.busy:
			rctx, cancel := context.WithCancelCause(ctx)
			s.busy, s.live, s.cancel = true, false, cancel
			s.runs++
			if s.broker != nil {
				s.broker.clearOnlyBefore(s.spec.ID, s.runs)
			}
			if s.title == "" {
				s.title = cut.Line(cmp.Or(strings.TrimSpace(s.ls.Mask(in.Text)), imagesTitle(in.Images)), 80)
			}
			s.wg.Add(1) // under mu with closed false, so close's Wait sees it
			return rctx, cancel, s.runs, nil
		case strict:
			return nil, nil, s.runs, fmt.Errorf("session %s: %w", s.spec.ID, loop.ErrBusy)
		case s.live:
			if err := s.ls.InterveneInput(in); err == nil {
				return nil, nil, s.runs, nil
			} else if !errors.Is(err, loop.ErrNotRunning) {
				return nil, nil, s.runs, fmt.Errorf("intervene: %w", err)
			}
			// The engine ended the run; run_ended is on its way.
		}
		s.cond.Wait()
	}
}

// run executes one run; begin set busy and added it to wg.
func (s *Session) run(rctx context.Context, cancel context.CancelCauseFunc, n int, in loop.Input) RunResult {
	defer s.wg.Done()
	cp := s.takeCheckpoint(rctx, n, CheckpointRun, cmp.Or(strings.TrimSpace(s.ls.Mask(in.Text)), imagesTitle(in.Images)), true)
	s.mu.Lock()
	s.runCP = cp.ID
	s.mu.Unlock()
	resp, err := s.ls.RunInput(rctx, in)
	cancel(nil)
	s.endCheckpoint() // at run_ended already, unless the engine never ran
	s.mu.Lock()
	reload := s.reload
	s.reload = false
	s.mu.Unlock()
	if reload {
		if err := s.Configure(context.WithoutCancel(rctx), "", ""); err != nil {
			s.emit(Event{Type: loop.EventWarning, Text: "reloading the trusted workspace code failed: " + err.Error()})
		}
	}
	res := RunResult{Run: n, Response: resp, Err: err, StopReason: loop.StopResponse}
	switch {
	case err == nil:
	case errors.Is(err, loop.ErrCancelled):
		res.StopReason = loop.StopCancelled
	case errors.Is(err, loop.ErrBudget):
		res.StopReason = loop.StopBudget
	default:
		res.StopReason = loop.StopError
	}
	s.mu.Lock()
	if s.last.Run == n {
		res.Usage = s.last.Usage // run_ended's
	}
	s.busy, s.live, s.cancel, s.last = false, false, nil, res
	s.cond.Broadcast()
	close(s.ended)
	s.ended = make(chan struct{})
	s.mu.Unlock()
	return res
}

// WaitRun waits until run n (or a later one) has ended and returns its
// result, or ctx's error.
func (s *Session) WaitRun(ctx context.Context, n int) (RunResult, error) {
	for {
		s.mu.Lock()
		last, ch := s.last, s.ended
		s.mu.Unlock()
		if last.Run >= n {
			return last, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return RunResult{}, ctx.Err()
		}
	}
}

// WaitIdle waits until no run of the session is going on (the last one has
// returned, not only logged its run_ended), or ctx ends (its error).
func (s *Session) WaitIdle(ctx context.Context) error {
	for {
		s.mu.Lock()
		busy, ch := s.busy, s.ended
		s.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Intervene delivers msg to the run in progress (loop.ErrNotRunning when
// there is none).
func (s *Session) Intervene(msg string) error {
	return s.InterveneInput(loop.Input{Text: msg})
}

// InterveneInput is Intervene for a message with images (see Attach).
func (s *Session) InterveneInput(in loop.Input) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("session %s: %w", s.spec.ID, ErrClosed)
	}
	if !s.busy {
		return fmt.Errorf("intervene: %w", loop.ErrNotRunning)
	}
	for s.busy && !s.live {
		s.cond.Wait()
	}
	if err := s.ls.InterveneInput(in); err != nil {
		return fmt.Errorf("intervene: %w", err)
	}
	return nil
}

// Cancel ends the run in progress, if any, as the user asked; an approval
// it waits for is abandoned.
func (s *Session) Cancel() { s.CancelWith(loop.ErrCancelled) }

// CancelWith is Cancel for a cause: loop.ErrCancelled (the user asked),
// loop.ErrDisconnected (a face whose client went away) or loop.ErrShutdown
// (Zero stops). The run's history and events say which, so a client that
// disconnected is not recorded as a user who cancelled.
func (s *Session) CancelWith(cause error) {
	if !errors.Is(cause, loop.ErrCancelled) {
		cause = loop.ErrCancelled
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(cause)
	}
}

// Cursor is the Seq of the newest logged event (0 when none): Events and
// Wait from it return only what comes next.
func (s *Session) Cursor() int64 {
	_, last := s.log.Since(math.MaxInt64)
	return last
}

// Events returns the logged events with Seq > since and the cursor to pass
// next time.
func (s *Session) Events(since int64) ([]Event, int64) {
	return s.log.Since(since)
}

// Wait is Events that blocks until there is an event newer than since, ctx
// ends (its error is returned) or the session is closed (ErrClosed, once
// every event was handed out). Deltas come joined (Coalesce).
func (s *Session) Wait(ctx context.Context, since int64) ([]Event, int64, error) {
	f := s.Follow(since)
	b, err := f.Next(ctx)
	return b.Events, f.Cursor(), err
}

// sink receives the engine's events.
func (s *Session) sink(e loop.Event) {
	switch e.Type {
	case loop.EventRunStarted:
		s.mu.Lock()
		s.live = true
		s.cond.Broadcast()
		s.mu.Unlock()
	case loop.EventResponse:
		if e.Agent == 0 {
			s.mu.Lock()
			s.answer = e.Text
			s.mu.Unlock()
		}
	case loop.EventRunEnded:
		// The files as the run left them are snapshotted before anyone
		// hears it ended: an edit made after that is the user's.
		s.endCheckpoint()
		// Last is right from run_ended on, so a face that saw the event
		// never reads the previous run's result; run sets the same values
		// (with the engine's own error) when Run returns.
		res := RunResult{StopReason: e.StopReason, Usage: usageOf(e.Usage)}
		switch e.StopReason {
		case loop.StopResponse:
		case loop.StopCancelled:
			res.Err = loop.CancelledFor(e.Error)
		default:
			res.Err = errors.New(e.Error)
		}
		s.mu.Lock()
		res.Run = s.runs
		if e.StopReason == loop.StopResponse {
			res.Response = s.answer
		}
		s.live, s.last, s.answer = false, res, ""
		s.cond.Broadcast()
		s.mu.Unlock()
	}
	s.emit(EventOf(e))
}

// emit logs e with the next Seq and wakes the followers.
func (s *Session) emit(e Event) {
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	e.V, e.Session = EventVersion, s.spec.ID
	s.log.Append(e)
	switch e.Type {
	case loop.EventUsage:
		s.mu.Lock()
		s.usage.see(e)
		s.mu.Unlock()
	case loop.EventPlan:
		s.mu.Lock()
		s.seePlanLocked(e)
		s.mu.Unlock()
	}
	if e.Type == loop.EventRunEnded && s.store != nil {
		// A face answers its client when it sees the run end: by then the
		// run is written, so a kill right after loses nothing the user saw.
		// A database another process keeps locked delays the answer by
		// runEndFlush at most; the writes stay queued.
		flushWithin(s.store, runEndFlush)
	}
	s.updated.Store(s.now().UnixNano())
	s.notifyMu.Lock()
	close(s.notify)
	s.notify = make(chan struct{})
	s.notifyMu.Unlock()
}

// close refuses new runs, cancels the one in progress and waits for it.
func (s *Session) close() { s.closeFor(loop.ErrCancelled) }

// closeFor is close for a cause (see CancelWith): Zero shutting down
// cancels with loop.ErrShutdown.
func (s *Session) closeFor(cause error) {
	if !errors.Is(cause, loop.ErrCancelled) {
		cause = loop.ErrCancelled
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.cancel != nil {
		s.cancel(cause)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
	close(s.done)
}
