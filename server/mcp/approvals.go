package mcp

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/server"
)

// drive records that the client of ctx works on s: its approval requests
// go to that client (by elicitation when it advertised it), and its run is
// cancelled when this face stops.
func (f *face) drive(ctx context.Context, s *server.Session) {
	cs := mcpserver.ClientSessionFromContext(ctx)
	modern := mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx))
	id := s.ID()
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.driven[id]; d != nil {
		if cs != nil {
			d.client, d.modern = cs, modern
		}
		return
	}
	if f.closed {
		return
	}
	f.driven[id] = &driven{client: cs, modern: modern}
	fol := s.Follow(s.Cursor())
	f.wg.Go(func() { f.watch(id, fol) }) // under mu with closed false: stop waits for it
}

// watch follows a driven session's events for its approvals and its MCP
// servers' questions until the face stops or the session is closed.
func (f *face) watch(id string, fol *server.Follower) {
	for {
		b, err := fol.Next(f.ctx)
		if err != nil {
			return
		}
		for _, e := range b.Events {
			f.onEvent(id, e)
		}
	}
}

// onEvent runs on a session's watch goroutine: it must not block, so an
// elicitation gets a goroutine of its own (owned by f.wg).
func (f *face) onEvent(session string, e server.Event) {
	switch e.Type {
	case server.EventApprovalRequested:
		f.mu.Lock()
		defer f.mu.Unlock()
		d := f.driven[session]
		if f.closed || d == nil || d.modern || !canElicit(d.client) {
			return // zero_run's result asks for it; zero_status lists it; zero_approve answers it
		}
		ctx := f.ctx
		if rc := f.running[session]; rc != nil {
			ctx = rc
		}
		ctx, cancel := context.WithCancel(f.srv.WithContext(ctx, d.client))
		f.asking[e.Text] = cancel
		f.wg.Add(1)
		go f.elicit(ctx, cancel, e)
	case server.EventQuestionRequested:
		f.onQuestion(session, e) // see questions.go
	case server.EventApprovalResolved, server.EventQuestionResolved:
		f.mu.Lock()
		cancel := f.asking[e.Text]
		delete(f.asking, e.Text)
		f.mu.Unlock()
		if cancel != nil {
			cancel() // answered elsewhere (zero_approve, or the run ended)
		}
	}
}

func canElicit(cs mcpserver.ClientSession) bool {
	ci, ok := cs.(mcpserver.SessionWithClientInfo)
	return ok && ci.GetClientCapabilities().Elicitation != nil
}

// elicit asks the user about approval request e: accept approves (and
// "always" when ticked), decline and cancel refuse. When the client cannot
// answer, the request stays pending for zero_approve.
func (f *face) elicit(ctx context.Context, cancel context.CancelFunc, e server.Event) {
	defer f.wg.Done()
	defer cancel()
	id := e.Text
	title := server.ApprovalTitle(e)
	res, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  approvalElicitation(title),
	})
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("elicitation failed; the approval waits for zero_approve", "approval", id, "err", err)
		}
		return
	}
	ap := f.mgr.Approvals()
	if ap == nil {
		return
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		always := false
		if m, ok := res.Content.(map[string]any); ok {
			always, _ = m["always"].(bool)
		}
		err = ap.Approve(id, always)
	default:
		err = ap.Deny(id, "refused by the user")
	}
	if err != nil {
		f.log.Debug("approval already answered", "approval", id, "err", err)
	}
}

// approvalElicitation asks the user whether to run the call titled title:
// accept approves (always, when ticked, for the rest of the session).
func approvalElicitation(title string) mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Message: fmt.Sprintf("Zero wants to run %s. Allow it?", title),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"always": map[string]any{"type": "boolean", "title": "Always allow this in the session", "default": false},
			},
		},
	}
}
