package lsp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// createTimeout bounds window/workDoneProgress/create and
// window/showDocument: a client that never answers must not hold up a
// session's events for long.
const createTimeout = 5 * time.Second

// The actions of the approval prompt.
const (
	actionAllow       = "Allow"
	actionAllowAlways = "Allow always"
	actionDeny        = "Deny"
)

// tracked is a session whose events this connection forwards: its drain
// goroutine follows the session's events (server.Follower) and sends them,
// in order, doing what they call for (progress, approvals, showing files),
// with the markers the requests put among them.
type tracked struct {
	c    *conn
	rc   *jsonrpc2.Conn
	sess *server.Session
	fol  *server.Follower // owned by the drain goroutine

	qmu   sync.Mutex
	q     []qitem
	wake  chan struct{} // capacity 1: "the queue is not empty"
	ended chan struct{} // closed when the drain returns

	// Owned by the drain goroutine.
	last    int64     // Seq of the newest event sent
	waiting []*waiter // prompts whose run has not started yet
	run     *runState // the run going on
}

// qitem is a marker a request puts among the session's events: after the
// event with Seq after.
type qitem struct {
	after  int64
	w      *waiter
	replay *replay
	// flushed is closed once the events before it were sent.
	flushed chan struct{}
}

// waiter is a zero/prompt waiting for its run to end.
type waiter struct {
	msg   string
	token *protocol.ProgressToken // the client's workDoneToken, if any
	void  atomic.Bool             // the message became an intervention or failed
	done  chan PromptResult       // capacity 1
}

// replay is a zero/loadSession or zero/newSession waiting for the log to be
// sent.
type replay struct {
	done chan int // capacity 1: how many events were sent
}

// runState is what the drain knows of the run going on.
type runState struct {
	w        *waiter
	token    *protocol.ProgressToken
	response string
}

// track starts forwarding sess's events from now on, unless it already is
// or Serve is stopping. A replay, when given, sends the log up to now
// first (and nothing twice).
func (c *conn) track(sess *server.Session, rp *replay) (*tracked, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || c.rc == nil {
		return nil, false
	}
	if t := c.sessions[sess.ID()]; t != nil {
		if rp != nil {
			t.push(qitem{replay: rp})
		}
		return t, true
	}
	cur := sess.Cursor()
	t := &tracked{c: c, rc: c.rc, sess: sess, fol: sess.Follow(cur), wake: make(chan struct{}, 1),
		ended: make(chan struct{})}
	if rp != nil {
		t.q = []qitem{{after: cur, replay: rp}}
		t.wake <- struct{}{}
	}
	c.sessions[sess.ID()] = t
	c.wg.Go(t.drain) // under mu with closing false: Serve waits for it
	return t, true
}

// untrack stops forwarding the session's events (its drain ends with the
// session, or stays idle until the connection ends).
func (c *conn) untrack(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

// push puts it after the events logged so far.
func (t *tracked) push(it qitem) {
	t.qmu.Lock()
	it.after = t.sess.Cursor()
	t.q = append(t.q, it)
	t.qmu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *tracked) take() []qitem {
	t.qmu.Lock()
	defer t.qmu.Unlock()
	q := t.q
	t.q = nil
	return q
}

func (t *tracked) drain() {
	defer close(t.ended)
	ctx := t.c.ctx
	mark := func(it qitem) {
		switch {
		case it.w != nil:
			if !it.w.void.Load() {
				t.waiting = append(t.waiting, it.w)
			}
		case it.replay != nil:
			t.replay(ctx, it.replay, it.after)
		case it.flushed != nil:
			close(it.flushed)
		}
	}
	var pending []qitem // markers placed after the events sent so far
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-t.fol.Ready():
		}
		// Events first, then the markers: a marker placed after the events
		// taken (its request raced this read) waits for the next round, so
		// a prompt's waiter is always met before its run_started.
		b := t.fol.Take()
		items := append(pending, t.take()...)
		if b.Missed > 0 {
			t.c.log.Warn("events dropped before they could be sent", "session", t.sess.ID(), "missed", b.Missed)
		}
		pending = server.Interleave(b.Events, items, func(it qitem) int64 { return it.after }, t.fol.Cursor(),
			func(e server.Event) { t.event(ctx, e) }, mark)
		if ctx.Err() != nil {
			return
		}
		if b.Closed {
			return
		}
	}
}

func (t *tracked) notify(ctx context.Context, method string, params any) {
	if err := t.rc.Notify(ctx, method, params); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		t.c.log.Warn("notification not sent", "method", method, "err", err)
	}
}

// event forwards e and acts on it.
func (t *tracked) event(ctx context.Context, e server.Event) {
	if e.Seq <= t.last {
		return // already sent by a replay
	}
	t.last = e.Seq
	t.notify(ctx, "zero/event", &e)
	switch e.Type {
	case loop.EventRunStarted:
		t.beginRun(ctx, e)
	case loop.EventHeadline:
		if t.run != nil && t.run.token != nil && e.Text != "" {
			t.progress(ctx, t.run.token, &protocol.WorkDoneProgressReport{
				Kind: protocol.WorkDoneProgressKindReport, Message: e.Text, Cancellable: true})
		}
	case loop.EventResponse:
		if e.Agent == 0 && t.run != nil {
			t.run.response = e.Text
		}
	case loop.EventRunEnded:
		t.endRun(ctx, e)
	case server.EventApprovalRequested:
		t.c.ask(t, e.Text, server.ApprovalTitle(e))
	case server.EventApprovalResolved:
		t.c.stopAsking(e.Text)
	case loop.EventWarning:
		t.c.tellLogin(ctx, t, e.Text)
	case server.EventQuestionRequested:
		t.c.askQuestion(t, e.Question)
	case server.EventQuestionResolved:
		t.c.stopQuestion(e.Text)
	case server.EventSandboxPull: // also in zero/event, with the numbers
		if t.run != nil && t.run.token != nil && e.Text != "" {
			t.progress(ctx, t.run.token, &protocol.WorkDoneProgressReport{
				Kind: protocol.WorkDoneProgressKindReport, Message: e.Text, Cancellable: true})
		}
	case loop.EventToolResult:
		if e.Status == "completed" && len(e.Diffs) > 0 {
			t.c.show(t, e.Diffs)
		}
	}
}

// beginRun binds the run to the prompt that started it and opens its
// work-done progress.
func (t *tracked) beginRun(ctx context.Context, e server.Event) {
	run := &runState{}
	kept := t.waiting[:0]
	for _, w := range t.waiting {
		switch {
		case w.void.Load():
		case run.w == nil && w.msg == e.Text:
			run.w = w
		default:
			kept = append(kept, w)
		}
	}
	clear(t.waiting[len(kept):])
	t.waiting = kept
	t.run = run

	if run.w != nil && run.w.token != nil {
		run.token = run.w.token
	} else if t.c.capabilities().progress {
		tok := protocol.NewProgressToken(fmt.Sprintf("zero/%s/%d", t.sess.ID(), e.Seq))
		cctx, cancel := context.WithTimeout(ctx, createTimeout)
		err := t.rc.Call(cctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: *tok}, nil)
		cancel()
		if err != nil {
			t.c.log.Info("no progress for this run: the client refused a token", "session", t.sess.ID(), "err", err)
		} else {
			run.token = tok
		}
	}
	if run.token == nil {
		return
	}
	t.c.mu.Lock()
	t.c.tokens[tokenKey(run.token)] = t
	t.c.mu.Unlock()
	t.progress(ctx, run.token, &protocol.WorkDoneProgressBegin{
		Kind: protocol.WorkDoneProgressKindBegin, Title: "Zero", Message: cut.Line(e.Text, 80), Cancellable: true})
}

// endRun closes the run's progress and answers its prompt.
func (t *tracked) endRun(ctx context.Context, e server.Event) {
	run := t.run
	t.run = nil
	if run == nil {
		return // the run started before this connection listened
	}
	res := PromptResult{StopReason: e.StopReason, Error: e.Error, Usage: e.Usage}
	if e.StopReason == loop.StopResponse {
		res.Response = run.response
	}
	if run.token != nil {
		msg := res.StopReason
		switch {
		case res.Response != "":
			msg = cut.Line(res.Response, 120)
		case res.Error != "":
			msg += ": " + cut.Line(res.Error, 120)
		}
		t.progress(ctx, run.token, &protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: msg})
		t.c.mu.Lock()
		delete(t.c.tokens, tokenKey(run.token))
		t.c.mu.Unlock()
	}
	if run.w != nil {
		run.w.done <- res
	}
}

func (t *tracked) progress(ctx context.Context, tok *protocol.ProgressToken, value any) {
	// A pointer, so the token's pointer-receiver MarshalJSON is used.
	t.notify(ctx, "$/progress", &protocol.ProgressParams{Token: *tok, Value: value})
}

// replay sends the session's log, answers the load, and asks again for
// the approvals and questions still waiting.
func (t *tracked) replay(ctx context.Context, rp *replay, upTo int64) {
	evs, _ := t.sess.Events(0)
	evs = server.Coalesce(evs)
	n := 0
	for i := range evs {
		if evs[i].Seq > upTo {
			break
		}
		t.notify(ctx, "zero/event", &evs[i])
		t.last = max(t.last, evs[i].Seq)
		n++
	}
	rp.done <- n
	if br := t.c.opts.Manager.Approvals(); br != nil {
		for _, r := range br.Pending(t.sess.ID()) {
			t.c.ask(t, r.ID, cmp.Or(r.Title, r.Tool))
		}
	}
	t.c.askPendingQuestions(t)
}

func (c *conn) capabilities() clientCaps {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}

// ask puts an approval request to the user with window/showMessageRequest
// from a goroutine of its own: the answer may take minutes.
func (c *conn) ask(t *tracked, id, title string) {
	if !c.capabilities().ask {
		return // the client answers with zero/approve
	}
	c.mu.Lock()
	if _, ok := c.asking[id]; ok || c.closing {
		c.mu.Unlock()
		return
	}
	actx, cancel := context.WithCancel(c.ctx)
	c.asking[id] = cancel
	c.wg.Go(func() { // under mu with closing false
		defer func() {
			c.mu.Lock()
			delete(c.asking, id)
			c.mu.Unlock()
			cancel()
		}()
		var choice *protocol.MessageActionItem
		err := t.rc.Call(actx, "window/showMessageRequest", &protocol.ShowMessageRequestParams{
			Type:    protocol.MessageTypeWarning,
			Message: "Zero wants to run: " + title,
			Actions: []protocol.MessageActionItem{{Title: actionAllow}, {Title: actionAllowAlways}, {Title: actionDeny}},
		}, &choice)
		if err != nil {
			// Answered elsewhere, the run ended, or the client cannot ask:
			// zero/approve stays available.
			c.log.Debug("approval prompt ended without an answer", "id", id, "err", err)
			return
		}
		br := c.opts.Manager.Approvals()
		if br == nil {
			return
		}
		switch {
		case choice != nil && choice.Title == actionAllow:
			err = br.Approve(id, false)
		case choice != nil && choice.Title == actionAllowAlways:
			err = br.Approve(id, true)
		default: // Deny, or the message was dismissed
			err = br.Deny(id, "refused by the user")
		}
		if err != nil && !errors.Is(err, server.ErrNotFound) {
			c.log.Warn("approval answer not applied", "id", id, "err", err)
		}
	})
	c.mu.Unlock()
}

// stopAsking stops waiting for the prompt of a request resolved otherwise.
func (c *conn) stopAsking(id string) {
	c.mu.Lock()
	cancel := c.asking[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// showDocumentParams is window/showDocument's params with takeFocus always
// written: the files open beside what the user is doing.
type showDocumentParams struct {
	URI       protocol.URI `json:"uri"`
	TakeFocus bool         `json:"takeFocus"`
}

// show opens the files a tool wrote, when the client can.
func (c *conn) show(t *tracked, diffs []server.FileDiff) {
	if !c.capabilities().showDocument {
		return
	}
	var root string
	if roots := t.sess.Spec().Roots; len(roots) > 0 {
		root = roots[0]
	}
	paths := make([]string, 0, len(diffs))
	for _, d := range diffs {
		p := d.Path
		if !filepath.IsAbs(p) && root != "" {
			p = filepath.Join(root, p)
		}
		paths = append(paths, p)
	}
	c.spawn(func() {
		for _, p := range paths {
			ctx, cancel := context.WithTimeout(c.ctx, createTimeout)
			err := t.rc.Call(ctx, "window/showDocument", &showDocumentParams{URI: uri.File(p)}, nil)
			cancel()
			if err != nil {
				c.log.Debug("showDocument failed", "err", err)
			}
		}
	})
}

// tokenKey tells tokens apart: "5" (a string) is not 5.
func tokenKey(tok *protocol.ProgressToken) string { return fmt.Sprintf("%q", *tok) }
