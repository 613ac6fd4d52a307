package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Over streamable HTTP, mcp-go runs the handler of a server's request
// under a context of its own that ends after 30 seconds, and sends what
// the handler returns on that context: a person asked a question would
// have 30 seconds to answer it, after which the server gets an error.
// So httpConn takes a question off mcp-go's hands: mcp-go is told
// (nil, nil), which it sends nothing for, while the question is asked on
// a goroutine of Zero's, with no deadline but the call's, and the answer
// is POSTed by Zero itself, as mcp-go would (the session's id, the
// protocol's version, the server's headers, the same client and so the
// same round tripper: OAuth's). Roots and ping are answered at once, so
// they stay with mcp-go.

// postTimeout bounds the sending of an answer or a cancellation (a few
// bytes to a server that answers with 202).
const postTimeout = 30 * time.Second

// SetRequestHandler is how the client's handler of the server's requests
// reaches mcp-go's transport: wrapped, and a question taken off mcp-go
// when someone can be asked.
func (h *httpConn) SetRequestHandler(next transport.RequestHandler) {
	inner := next
	if h.wrap != nil {
		inner = h.wrap(next)
	}
	h.StreamableHTTP.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method != string(mcp.MethodElicitationCreate) || !h.detach {
			return inner(ctx, req)
		}
		if h.requestDone != nil {
			// mcp-go ends ctx when its handling ends (or after 30 s).
			context.AfterFunc(ctx, h.requestDone)
		}
		// The values of ctx (the call the question belongs to, the raw
		// schema) without its deadline or its end.
		go h.answer(context.WithoutCancel(ctx), req, inner)
		return nil, nil
	})
}

// answer asks the question req and sends the server the answer.
func (h *httpConn) answer(ctx context.Context, req transport.JSONRPCRequest, handle transport.RequestHandler) {
	var res *transport.JSONRPCResponse
	defer func() {
		if r := recover(); r != nil {
			h.logger.Error("panic while asking a server's question", "panic", r)
			res = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, "the client failed to ask the question", nil)
		}
		if res != nil {
			h.post(res)
		}
	}()
	res, err := handle(ctx, req)
	if err != nil {
		res = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
	}
}

// post sends the server a message of Zero's (an answer, a notification)
// as mcp-go sends its own.
func (h *httpConn) post(msg any) {
	if h.life.Err() != nil {
		return // closed: the session the message was for is gone
	}
	body, err := json.Marshal(msg)
	if err != nil {
		h.logger.Error("could not encode a message to the server", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(h.life, postTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		h.logger.Error("could not send the server a message", "err", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id := h.GetSessionId(); id != "" {
		req.Header.Set(transport.HeaderKeySessionID, id)
	}
	if v := h.version.Load(); v != nil && *v != "" {
		req.Header.Set(transport.HeaderKeyProtocolVersion, *v)
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.logger.Warn("could not send the server a message", "err", err)
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		h.logger.Warn("the server refused a message", "status", resp.StatusCode)
	}
}

// cancelled tells the server that the request req, whose context ended
// before its answer, is not waited for any more (MCP's
// notifications/cancelled), off the caller's path. initialize is never
// cancelled (the spec forbids it).
func (h *httpConn) cancelled(ctx context.Context, req transport.JSONRPCRequest) {
	if req.Method == string(mcp.MethodInitialize) || req.ID.IsNil() {
		return
	}
	reason := "the client's run was cancelled"
	if errors.Is(context.Cause(ctx), errCallTimedOut) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "the client stopped waiting: the call's timeout ran out"
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": req.ID, "reason": reason}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(h.life, postTimeout)
		defer cancel()
		if err := h.StreamableHTTP.SendNotification(ctx, n); err != nil {
			h.logger.Warn("could not tell the server a request was cancelled", "method", req.Method, "err", err)
		}
	}()
}

// Start starts the transport, whose stream outside calls (when it listens)
// shows its lines to a lineTap too.
func (h *httpConn) Start(ctx context.Context) error {
	if h.schemas != nil {
		ctx = context.WithValue(ctx, schemasKey{}, h.schemas)
	}
	return h.StreamableHTTP.Start(ctx)
}

// SetProtocolVersion keeps the version negotiated, for post, and gives it
// to mcp-go.
func (h *httpConn) SetProtocolVersion(version string) {
	h.version.Store(&version)
	h.StreamableHTTP.SetProtocolVersion(version)
}

// Close ends the answers being sent, then the connection.
func (h *httpConn) Close() error {
	h.end()
	return h.StreamableHTTP.Close()
}
