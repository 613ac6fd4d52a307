package lsp

import (
	"context"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// Wire codes beyond JSON-RPC's own, as LSP defines them.
const (
	codeServerNotInitialized = -32002
	codeRequestFailed        = -32803
	codeRequestCancelled     = -32800
)

var (
	// ErrInvalidParams wraps every complaint about a request's params; the
	// message names the field ("sessionId: required").
	ErrInvalidParams = errors.New("invalid params")
	// ErrUnknownSession is returned for a sessionId the manager does not know.
	ErrUnknownSession = errors.New("unknown session")
	// ErrNotInitialized is returned for requests before initialize.
	ErrNotInitialized = errors.New("server not initialized")
	// ErrShutDown is returned for requests after shutdown.
	ErrShutDown = errors.New("server is shut down")
	// ErrExitWithoutShutdown is what Serve returns when the client sent exit
	// without shutdown first: LSP asks for a failing exit code then.
	ErrExitWithoutShutdown = errors.New("exit without shutdown")
	// errRequestCancelled answers a request the client cancelled with
	// $/cancelRequest.
	errRequestCancelled = errors.New("request cancelled")
	// errMethodNotFound answers a request whose method Zero does not serve.
	errMethodNotFound = errors.New("method not found")
	// errConnClosing marks a request whose answer nobody will read.
	errConnClosing = errors.New("connection closing")
)

// invalidParams builds an ErrInvalidParams naming the field.
func invalidParams(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidParams, field, fmt.Sprintf(format, args...))
}

// rpcError is the only place that chooses JSON-RPC error codes.
func rpcError(err error) *jsonrpc2.Error {
	var ce *server.ConflictError
	if errors.As(err, &ce) {
		e := &jsonrpc2.Error{Code: codeConflict, Message: err.Error()}
		paths := ce.Paths
		if paths == nil {
			paths = []string{}
		}
		e.SetError(conflictData{Conflicts: paths, To: ce.To})
		return e
	}
	var code int64
	switch {
	case errors.Is(err, ErrInvalidParams), errors.Is(err, ErrUnknownSession), errors.Is(err, server.ErrInvalid):
		code = jsonrpc2.CodeInvalidParams
	case errors.Is(err, errMethodNotFound):
		code = jsonrpc2.CodeMethodNotFound
	case errors.Is(err, ErrNotInitialized):
		code = codeServerNotInitialized
	case errors.Is(err, ErrShutDown):
		code = jsonrpc2.CodeInvalidRequest
	case errors.Is(err, errRequestCancelled), errors.Is(err, context.Canceled):
		code = codeRequestCancelled
	case errors.Is(err, loop.ErrNotRunning), errors.Is(err, loop.ErrBusy),
		errors.Is(err, server.ErrClosed), errors.Is(err, server.ErrNotFound),
		errors.Is(err, server.ErrUnsupported), errors.Is(err, server.ErrHeld),
		errors.Is(err, server.ErrNoCheckpoint), errors.Is(err, loop.ErrNothingToCompact),
		errors.Is(err, loop.ErrSummaryNotShorter):
		code = codeRequestFailed
	default:
		code = jsonrpc2.CodeInternalError
	}
	return &jsonrpc2.Error{Code: code, Message: err.Error()}
}
