package acp

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// ErrNoManager is returned by Serve when Options.Manager is nil.
var ErrNoManager = errors.New("acp: Options.Manager is required")

// codeResourceNotFound is ACP's error code for an unknown session.
const codeResourceNotFound = -32002

// invalidParams is an "Invalid params" error naming the field at fault, in
// the same shape as the SDK's own decoding errors ({"error": "..."}).
func invalidParams(field, why string) *sdk.RequestError {
	return sdk.NewInvalidParams(map[string]any{"field": field, "error": field + ": " + why})
}

// notFound is ACP's "Resource not found" for a session id.
func notFound(id string) *sdk.RequestError {
	return &sdk.RequestError{Code: codeResourceNotFound,
		Message: "Resource not found: no session " + id + " (it was deleted, or made with another data directory); start a new session",
		Data:    map[string]any{"sessionId": id}}
}

// rpcError is the one place that chooses JSON-RPC codes for the errors of
// the server package.
func rpcError(id string, err error) error {
	var re *sdk.RequestError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return re
	case errors.Is(err, server.ErrNotFound), errors.Is(err, server.ErrClosed):
		return notFound(id)
	case errors.Is(err, server.ErrHeld):
		return &sdk.RequestError{Code: -32600, Message: "Invalid request: " + err.Error(), Data: map[string]any{"sessionId": id, "error": err.Error()}}
	case errors.Is(err, loop.ErrBusy):
		return sdk.NewInvalidRequest(map[string]any{"error": "a run is in progress in this session; cancel it or wait for it to end"})
	case errors.Is(err, server.ErrUnsupported):
		return sdk.NewInvalidRequest(map[string]any{"error": err.Error()})
	}
	return sdk.NewInternalError(map[string]any{"error": err.Error()})
}

// fsError turns an editor's fs/* error into one text_editor words well:
// a missing file becomes fs.ErrNotExist.
func fsError(op, path string, err error) error {
	var re *sdk.RequestError
	if errors.As(err, &re) && re.Message == tooLargeMessage && re.Code == -32600 {
		return fmt.Errorf("the editor's answer is more than the %d MiB zero reads in one message; use grep, sed or head in the terminal", MaxLineSize>>20)
	}
	if errors.As(err, &re) {
		msg := strings.ToLower(re.Error())
		if re.Code == codeResourceNotFound || strings.Contains(msg, "not found") || strings.Contains(msg, "no such file") {
			return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist}
		}
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
