package mcp

import (
	"errors"
	"fmt"
)

var (
	// ErrNoToken is returned by ServeHTTP when the bearer token is empty:
	// an HTTP face without authentication is never served.
	ErrNoToken = errors.New("mcp: a bearer token is required")
	// ErrNoManager is returned when Options.Manager is nil.
	ErrNoManager = errors.New("mcp: Options.Manager is required")
)

// argError is a tool argument the client got wrong; it becomes an isError
// tool result naming the field, never a protocol error, so the model can
// correct itself.
type argError struct {
	field string
	msg   string
}

func (e *argError) Error() string { return e.field + ": " + e.msg }

func badArg(field, format string, a ...any) error {
	return &argError{field: field, msg: fmt.Sprintf(format, a...)}
}
