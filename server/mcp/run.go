package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// handleRun runs the message and answers when the run ends. While it runs
// it reports progress (on every headline, on approvals, and every keepalive
// with no news) when the request carries a progress token, and logs tool
// calls, warnings and errors as notifications/message. Cancelling the
// request (notifications/cancelled; mcp-go cancels ctx) cancels the run.
//
// A call never waits for an answer nobody can give, nor past what clients
// wait for a tool (Claude Desktop gives up after about 60 s): it returns
// early, with the run still going, when the run needs an approval and the
// client cannot be asked (no elicitation), and when it has run for the
// face's budget. The result then says what the run waits for and the next
// call to make (zero_approve, zero_status with the cursor). A question an
// MCP server of the agent asks goes to the client as an elicitation too
// (questions.go); the call stays open while the user answers it.
func (f *face) handleRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	// From protocol 2026-07-28 on, a server cannot send the client requests
	// (elicitation): an approval goes back as an input-required result and
	// the client calls again with the user's answers and our state.
	multiRound := mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx))
	var (
		s   *server.Session
		n   int
		cur int64
	)
	if st := req.Params.RequestState; st != "" {
		var fail *mcp.CallToolResult
		if s, n, cur, fail = f.resumeRun(st, req.Params.InputResponses); fail != nil {
			return fail, nil
		}
	} else {
		var in loop.Input
		var fail *mcp.CallToolResult
		if s, in, fail = f.openStart(ctx, req); fail != nil {
			return fail, nil
		}
		cur = s.Cursor()
		// The run belongs to the session, not to this call, so it can go
		// on when the call returns early; the client's cancel still
		// cancels it.
		var intervened bool
		var err error
		if n, intervened, err = s.SendInput(in); err != nil {
			return toolError(fmt.Errorf("run: %w", err)), nil
		}
		if intervened {
			return result(runOut{Session: s.ID(), Run: n, StopReason: server.StopIntervened, Intervened: true, Trust: sessionTrust(s)},
				fmt.Sprintf("Session %s was running: the message was delivered to run %d as an intervention.", s.ID(), n)), nil
		}
	}
	release := f.setRunning(s.ID(), ctx)
	defer func() {
		release()
		if multiRound {
			f.declineUnasked(s.ID()) // one that came as the call returned
		}
	}()
	// Legacy clients with elicitation are asked as approvals come
	// (onEvent); modern ones through the result; the rest get the request.
	elicits := clientCaps(ctx).Elicitation != nil
	canAsk := !multiRound && elicits
	deadline := time.Now().Add(f.runBudget)
	p := &progress{f: f, ctx: ctx, token: token, tools: server.NewPresenter()}
	fol := s.Follow(cur)
	for {
		if res, ok := s.Last(); ok && res.Run == n {
			p.events(fol.Take().Events)
			return f.runResult(s, res, &p.images), nil
		}
		if !canAsk {
			pending := f.pending(s.ID())
			var questions []questionInput
			if multiRound && elicits {
				questions = f.handOut(ctx, s.ID()) // the MCP servers' questions (questions.go)
			}
			if len(pending) > 0 || len(questions) > 0 {
				if multiRound && elicits {
					return askApprovals(s, n, fol.Cursor(), pending, questions), nil
				}
				return f.runWaiting(s, n, s.Cursor(), pending, &p.images), nil
			}
		}
		left := time.Until(deadline)
		if left <= 0 && canAsk && f.questionWaits(s.ID()) {
			// The user is answering a server's question, which this call
			// carries: returning would take the form from under them.
			deadline, left = time.Now().Add(f.keepalive), f.keepalive
			p.send() // keep-alive while they answer
		}
		if left <= 0 {
			return f.runGoingOn(s, n, fol.Cursor(), &p.images), nil
		}
		wctx, cancel := context.WithTimeout(ctx, min(f.keepalive, left))
		b, werr := fol.Next(wctx)
		cancel()
		evs := b.Events
		p.events(evs)
		if slices.ContainsFunc(evs, func(e server.Event) bool { return e.Type == loop.EventRunEnded }) {
			// The result is recorded just after run_ended.
			if res, err := s.WaitRun(ctx, n); err == nil && res.Run == n {
				return f.runResult(s, res, &p.images), nil
			}
		}
		switch {
		case ctx.Err() != nil: // the client cancelled the call, or left, or Zero stops
			s.CancelWith(endCause(ctx))
			return toolError(fmt.Errorf("run: %w", context.Cause(ctx))), nil
		case errors.Is(werr, server.ErrClosed):
			return toolError(fmt.Errorf("run: %w", werr)), nil
		case errors.Is(werr, context.DeadlineExceeded) && time.Until(deadline) > 0:
			p.send() // keep-alive: nothing new for a while
		}
	}
}

// askApprovals is the input-required result that asks the client to put
// the pending approvals and the MCP servers' questions to the user (one
// elicitation each); the client calls zero_run again with the answers and
// the state, which names the session, the run and the cursor to go on
// from.
func askApprovals(s *server.Session, n int, cur int64, pending []approval, questions []questionInput) *mcp.CallToolResult {
	b := mcpserver.NewInputRequestBuilder(fmt.Sprintf("%s%s:%d:%d", runStatePrefix, s.ID(), n, cur))
	for _, p := range pending {
		b.Elicit(p.ID, approvalElicitation(p.Title))
	}
	for _, q := range questions {
		b.Elicit(q.id, q.params)
	}
	return b.ToolResult()
}

// runStatePrefix marks the request state of a zero_run waiting for answers.
const runStatePrefix = "zero-run:"

// resumeRun takes up a zero_run the client calls again with answers to
// the approvals it was asked: it applies them and returns where to go on.
// The state is the client's to echo, so it is checked like any argument.
func (f *face) resumeRun(state string, answers mcp.InputResponses) (*server.Session, int, int64, *mcp.CallToolResult) {
	bad := func() (*server.Session, int, int64, *mcp.CallToolResult) {
		return nil, 0, 0, toolError(badArg("requestState", "not a state this server gave"))
	}
	rest, ok := strings.CutPrefix(state, runStatePrefix)
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != 3 {
		return bad()
	}
	n, err1 := strconv.Atoi(parts[1])
	cur, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return bad()
	}
	s, err := f.session(parts[0])
	if err != nil {
		return nil, 0, 0, toolError(err)
	}
	ap := f.mgr.Approvals()
	for _, p := range f.pending(s.ID()) {
		res := mcpserver.ElicitationResponse(answers, p.ID)
		if res == nil || ap == nil {
			continue // not asked yet, or no answer: it stays pending
		}
		var err error
		if res.Action == mcp.ElicitationResponseActionAccept {
			always, _ := res.Content.(map[string]any)["always"].(bool)
			err = ap.Approve(p.ID, always)
		} else {
			err = ap.Deny(p.ID, "refused by the user")
		}
		if err != nil {
			f.log.Debug("approval already answered", "approval", p.ID, "err", err)
		}
	}
	f.answerInput(s.ID(), answers)
	return s, n, cur, nil
}

// runResult is zero_run's answer for a run that ended, with the pictures
// its tools brought (see toolImages).
func (f *face) runResult(s *server.Session, r server.RunResult, imgs *toolImages) *mcp.CallToolResult {
	out := runOut{Session: s.ID(), Run: r.Run, StopReason: r.StopReason, Response: r.Response, Trust: sessionTrust(s), Usage: r.Usage}
	if r.Err != nil && (r.StopReason == loop.StopError || r.StopReason == loop.StopBudget) {
		out.Error = r.Err.Error()
	}
	summary := r.Response
	switch r.StopReason {
	case loop.StopCancelled:
		summary = "The run was cancelled."
	case loop.StopError:
		summary = "The run failed: " + out.Error
	case loop.StopBudget:
		summary = "The run stopped at its budget: " + out.Error
	}
	if r.Usage != nil {
		summary += "\nUsage: " + r.Usage.Line() + "."
	}
	if out.Trust != nil {
		summary += "\nWarning: " + out.Trust.Message
	}
	res := withImages(s, &out, summary, imgs)
	res.IsError = r.StopReason == loop.StopError
	return res
}

// withImages is zero_run's result of out and summary with the pictures
// the run's tools brought so far: listed in out.Images, said in the
// summary, and as image content after the text.
func withImages(s *server.Session, out *runOut, summary string, imgs *toolImages) *mcp.CallToolResult {
	refs, line, blocks := imgs.content(s)
	out.Images = refs
	res := result(*out, summary+line)
	res.Content = append(res.Content, blocks...)
	return res
}

// pending lists the approvals session id waits for.
func (f *face) pending(id string) []approval {
	ap := f.mgr.Approvals()
	if ap == nil {
		return nil
	}
	var out []approval
	for _, r := range ap.Pending(id) {
		out = append(out, approval{ID: r.ID, Tool: r.Tool, Title: r.Title, Subject: r.Subject})
	}
	return out
}

// runWaiting is zero_run's early answer when the run needs an approval the
// client cannot be asked for: the run stays held until zero_approve.
func (f *face) runWaiting(s *server.Session, n int, cur int64, pending []approval, imgs *toolImages) *mcp.CallToolResult {
	first := pending[0]
	out := runOut{Session: s.ID(), Run: n, StopReason: stopApproval, Cursor: cur, Pending: pending, Trust: sessionTrust(s),
		Next: &nextCall{Tool: "zero_approve", Arguments: map[string]any{"id": first.ID, "approve": true}}}
	summary := fmt.Sprintf("The run is waiting for approval to run %s. Ask the user, then call zero_approve {id: %q, approve: true} (or false), "+
		"then zero_status {session: %q, since: %d, wait: 30} to follow the run.", first.Title, first.ID, s.ID(), cur)
	return withImages(s, &out, summary, imgs)
}

// runGoingOn is zero_run's early answer once the call has lasted its
// budget: the run goes on, and zero_status follows it.
func (f *face) runGoingOn(s *server.Session, n int, cur int64, imgs *toolImages) *mcp.CallToolResult {
	out := runOut{Session: s.ID(), Run: n, StopReason: stopRunning, Cursor: cur, Trust: sessionTrust(s),
		Next: &nextCall{Tool: "zero_status", Arguments: map[string]any{"session": s.ID(), "since": cur, "wait": 30}}}
	summary := fmt.Sprintf("The run is still going after %s. Follow it with zero_status {session: %q, since: %d, wait: 30}.",
		f.runBudget.Round(time.Second), s.ID(), cur)
	return withImages(s, &out, summary, imgs)
}

// Stop reasons of a zero_run that returned before its run ended.
const (
	stopApproval = "approval_required"
	stopRunning  = "running"
)

// progress turns a zero_run's events into notifications.
type progress struct {
	f        *face
	ctx      context.Context
	token    mcp.ProgressToken
	n        float64
	headline string
	thought  string
	thoughts map[string]string // item → thoughts text so far
	waiting  string            // title of the approval the run waits for
	asker    string            // the MCP server whose question the run waits for
	pull     string            // how the pull of the sandbox image goes, while it does
	tools    *server.Presenter // the run's tool calls: their titles and statuses
	images   toolImages        // the pictures of the tool results seen
}

func (p *progress) events(evs []server.Event) {
	for _, e := range evs {
		switch e.Type {
		case loop.EventHeadline:
			if e.Agent == 0 || p.headline == "" {
				p.headline = e.Text
			}
			p.send()
		case loop.EventThoughtsDelta:
			if p.thoughts == nil {
				p.thoughts = map[string]string{}
			}
			p.thoughts[e.Item] += e.Text
			p.thought = lastThought(p.thoughts[e.Item])
		case loop.EventToolCall:
			if v, ok := p.tools.Tool(e); ok {
				p.logf(mcp.LoggingLevelInfo, "tool call: %s", v.Title)
			}
		case loop.EventToolResult:
			p.images.add(e)
			// Named by its tool, as clients know the message (the call's
			// title, v.Title, would say more).
			if v, ok := p.tools.Tool(e); ok && v.Status == loop.ToolFailed {
				p.logf(mcp.LoggingLevelWarning, "tool failed: %s", v.Tool)
			}
		case server.EventCheckpoint, server.EventForked:
			// The checkpoint's id is what zero_rewind takes.
			p.logf(mcp.LoggingLevelInfo, "%s", e.Text)
		case server.EventRewound:
			p.logf(mcp.LoggingLevelNotice, "%s", e.Text)
		case loop.EventWarning:
			p.logf(mcp.LoggingLevelWarning, "%s", e.Text)
		case loop.EventError:
			p.logf(mcp.LoggingLevelError, "%s", cmpOr(e.Error, e.Text))
		case server.EventApprovalRequested:
			p.waiting = server.ApprovalTitle(e)
			p.logf(mcp.LoggingLevelNotice, "waiting for approval %s: %s", e.Text, p.waiting)
			p.send()
		case server.EventApprovalResolved:
			p.waiting = ""
		case server.EventQuestionRequested:
			// Who asks, never what: the question is the user's to read.
			p.asker = serverName(e.Title)
			p.logf(mcp.LoggingLevelNotice, "the MCP server %s asks the user a question (%s)", p.asker, e.Text)
			p.send()
		case server.EventQuestionResolved:
			p.asker = ""
		case server.EventSandboxPull:
			// Progress for a client that asked for it, else a log message
			// (the app sends them throttled); the end is logged for both.
			p.pull = e.Text
			if e.Status != server.PullPulling {
				p.pull = ""
				p.logf(mcp.LoggingLevelInfo, "%s", e.Text)
			} else if p.token == nil {
				p.logf(mcp.LoggingLevelInfo, "%s", e.Text)
			}
			p.send()
		}
	}
}

// lastThought picks the newest thought out of the streamed thoughts text
// (the JSON array's elements arrive as they are written).
func lastThought(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	s = strings.Trim(s, `",[] `)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

func (p *progress) message() string {
	if p.waiting != "" {
		return "waiting for approval: " + p.waiting + " — call zero_approve"
	}
	if p.asker != "" {
		return "waiting for the user to answer the MCP server " + p.asker
	}
	if p.pull != "" {
		return p.pull
	}
	switch {
	case p.headline != "" && p.thought != "":
		return p.headline + " — " + p.thought
	case p.headline != "":
		return p.headline
	case p.thought != "":
		return p.thought
	}
	return "working"
}

func (p *progress) send() {
	if p.token == nil || p.ctx.Err() != nil {
		return
	}
	p.n++
	err := p.f.srv.SendNotificationToClient(p.ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": p.token, "progress": p.n, "message": p.message(),
	})
	if err != nil {
		p.f.log.Debug("progress not sent", "err", err)
	}
}

func (p *progress) logf(level mcp.LoggingLevel, format string, a ...any) {
	if p.ctx.Err() != nil {
		return
	}
	n := mcp.NewLoggingMessageNotification(level, "zero", fmt.Sprintf(format, a...))
	if err := p.f.srv.SendLogMessageToClient(p.ctx, n); err != nil {
		p.f.log.Debug("log notification not sent", "err", err)
	}
}

// setRunning records the ctx of a zero_run in flight on session id until
// the returned func is called: elicitations for its approvals travel with
// that request, which is where an HTTP client without a standalone stream
// listens. A second zero_run on the session (an intervention) keeps the
// first one's.
func (f *face) setRunning(id string, ctx context.Context) (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, taken := f.running[id]; taken {
		return func() {}
	}
	f.running[id] = ctx
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.running, id)
	}
}
