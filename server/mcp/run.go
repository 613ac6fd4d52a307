package mcpface

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// handleRun runs the message and answers when the run ends. While it runs
// it reports progress (on every headline, on approvals, and every keepalive
// with no news) when the request carries a progress token, and logs tool
// calls, warnings and errors as notifications/message. Cancelling the
// request (notifications/cancelled; mcp-go cancels ctx) cancels the run.
func (f *face) handleRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s, a, fail := f.openStart(ctx, req)
	if fail != nil {
		return fail, nil
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	cur := s.Cursor()
	defer f.setRunning(s.ID(), ctx)()

	type outcome struct {
		res server.RunResult
		err error
	}
	done := make(chan outcome, 1)
	watch, stopWatch := context.WithCancel(ctx)
	go func() { // owned: handleRun receives from done before returning
		defer stopWatch()
		r, err := s.Prompt(ctx, a.Message)
		done <- outcome{r, err}
	}()
	p := &progress{f: f, ctx: ctx, token: token}
	for watch.Err() == nil {
		wctx, cancel := context.WithTimeout(watch, f.keepalive)
		evs, next, err := s.Wait(wctx, cur)
		cancel()
		cur = next
		p.events(evs)
		if errors.Is(err, context.DeadlineExceeded) && watch.Err() == nil {
			p.send() // keep-alive: nothing new for a while
		}
		if errors.Is(err, server.ErrClosed) {
			break
		}
	}
	o := <-done
	evs, _ := s.Events(cur)
	p.events(evs)
	if o.err != nil {
		return toolError(fmt.Errorf("run: %w", o.err)), nil
	}
	out := runOut{Session: s.ID(), Run: o.res.Run, StopReason: o.res.StopReason, Response: o.res.Response,
		Intervened: o.res.StopReason == server.StopIntervened, Trust: sessionTrust(s)}
	if o.res.Err != nil && o.res.StopReason == loop.StopError {
		out.Error = o.res.Err.Error()
	}
	summary := o.res.Response
	switch o.res.StopReason {
	case server.StopIntervened:
		summary = fmt.Sprintf("Session %s was running: the message was delivered to run %d as an intervention.", s.ID(), o.res.Run)
	case loop.StopCancelled:
		summary = "The run was cancelled."
	case loop.StopError:
		summary = "The run failed: " + out.Error
	}
	if out.Trust != nil {
		summary += "\nWarning: " + out.Trust.Message
	}
	res := result(out, summary)
	res.IsError = o.res.StopReason == loop.StopError
	return res, nil
}

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
}

func (p *progress) events(evs []loop.Event) {
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
			if e.Tool != "response" {
				p.logf(mcp.LoggingLevelInfo, "tool call: %s", cmpOr(e.Title, e.Tool))
			}
		case loop.EventToolResult:
			if e.Tool != "response" && e.Status == "failed" {
				p.logf(mcp.LoggingLevelWarning, "tool failed: %s", cmpOr(e.Title, e.Tool))
			}
		case loop.EventWarning:
			p.logf(mcp.LoggingLevelWarning, "%s", e.Text)
		case loop.EventError:
			p.logf(mcp.LoggingLevelError, "%s", cmpOr(e.Error, e.Text))
		case server.EventApprovalRequested:
			p.waiting = cmpOr(e.Title, e.Tool)
			p.logf(mcp.LoggingLevelNotice, "waiting for approval %s: %s", e.Text, p.waiting)
			p.send()
		case server.EventApprovalResolved:
			p.waiting = ""
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
