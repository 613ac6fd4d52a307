package llm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

var (
	// ErrNoModel is returned by [New] when [Options.Model] is empty.
	ErrNoModel = errors.New("llm: no model configured")

	// ErrStreamCut means the model stream ended before the server said it was
	// finished (no finish_reason and no [DONE]), e.g. the connection was cut.
	ErrStreamCut = errors.New("model stream ended unexpectedly")

	// ErrHeaderTimeout means the server did not send the response headers
	// within [Options.HeaderTimeout]. The error text names the limit, e.g.
	// "no response headers from the model within 5m0s".
	ErrHeaderTimeout = errors.New("no response headers from the model")

	// ErrIdleTimeout means the server sent no chunk for [Options.IdleTimeout]
	// (keep-alive bytes do not count). The error text names the limit, e.g.
	// "no data from the model for 5m0s". After the first chunk it comes
	// wrapped together with [ErrStreamCut].
	ErrIdleTimeout = errors.New("no data from the model")

	// ErrTotalTimeout means a [Client.Stream] call, retries included, took
	// longer than [Options.TotalTimeout]. The error text names the limit,
	// e.g. "model call exceeded its total time limit of 30m0s". After the
	// first chunk it comes wrapped together with [ErrStreamCut].
	ErrTotalTimeout = errors.New("model call exceeded its total time limit")

	// ErrEventTooLarge means the server sent one SSE event (or one line)
	// longer than [Options.MaxEventBytes] without ending it: a broken or
	// hostile server, as no real chunk comes near the limit. It is not
	// retried. The error text names the limit, e.g. "the model sent one
	// stream event over 8 MiB". After the first chunk it comes wrapped
	// together with [ErrStreamCut], with the partial Result.
	ErrEventTooLarge = errors.New("the model sent a stream event over the size limit")

	// ErrReplyTooLarge means one answer (its content and reasoning
	// together) grew past [Options.MaxReplyBytes]: a model that never stops
	// in small chunks, each under MaxEventBytes. It is not retried; the
	// partial Result holds what came up to the limit.
	ErrReplyTooLarge = errors.New("the model's answer is over the size limit")

	// ErrStop is returned by a [StreamFunc] to end the stream early. [Client.Stream]
	// treats it as success and sets [Result.Stopped].
	ErrStop = errors.New("llm: stop stream")

	// ErrUnknownRole is returned when a [Message] has a role other than
	// [System], [User], [Assistant] or [Tool].
	ErrUnknownRole = errors.New("llm: unknown message role")

	// ErrBadToolCall is returned for a request whose tools or tool calls
	// the API would refuse: a function name it does not allow, parameters
	// that are not JSON, a call without an id, a result without its call.
	ErrBadToolCall = errors.New("llm: invalid tool call or tool")

	// ErrUnreachable means nothing answers at the model's address: the
	// connection was refused (no server listens there), the host name does
	// not resolve, or there is no route to it. It comes as an
	// [*UnreachableError], which says which.
	ErrUnreachable = errors.New("cannot reach the model server")
)

// UnreachableError is the connection error of a model server that is not
// there (see [ErrUnreachable]). Such a server is tried once more after a
// short delay, in case it is just starting; then the call fails with this
// error instead of backing off for seconds, and while the server stays
// unreachable later calls of the same [Client] are not retried at all.
// Host is an address, never a URL, so the error cannot carry a key or
// credentials written into one.
type UnreachableError struct {
	Host   string // the address dialled, e.g. "127.0.0.1:9" or "nope.invalid"
	Reason string // "connection refused", "no such host", "no route to host", "network is unreachable"
	Hint   string // what to check, e.g. "is the server running?"

	// cause is the network error while a retry is still due: Stream
	// retries what it recognises as a transient network error, and with no
	// cause there is none to recognise.
	cause error
}

// Error says what failed and what to check, on one line.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the model server at %s: %s; %s", e.Host, e.Reason, e.Hint)
}

// Unwrap makes the error match [ErrUnreachable] (and, until the retry it
// gets, the network error).
func (e *UnreachableError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrUnreachable}
	}
	return []error{ErrUnreachable, e.cause}
}

// APIError is an HTTP error answered by the model server. Message is the
// server's own error message with any API key removed.
type APIError struct {
	StatusCode int
	Message    string
	// NoKey is true when the client had no API key to send, so a 401 says
	// "set it" rather than "it was rejected".
	NoKey bool
	// Code and Type are the body's error.code and error.type when they are
	// strings (OpenAI's "context_length_exceeded", llama.cpp's
	// "exceed_context_size_error"); Window is the context window the body
	// states (llama.cpp's n_ctx), 0 when none. See [ContextOverflow].
	Code, Type string
	Window     int
}

// Error implements error. For 401/403 it names the variable to check, never the key.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("model API error %d: %s", e.StatusCode, e.Message)
	switch {
	case (e.StatusCode == 401 || e.StatusCode == 403) && e.NoKey:
		msg += " (no API key was sent; set OPENAI_API_KEY)"
	case e.StatusCode == 401 || e.StatusCode == 403:
		msg += " (the API key was rejected; check OPENAI_API_KEY)"
	}
	return msg
}

// Retryable reports whether the status is one that is worth retrying before
// any chunk arrived: 408, 409, 429 and 5xx.
func (e *APIError) Retryable() bool {
	if _, overflow := e.overflow(); overflow {
		return false // llama.cpp said it with a 500 before it used 400
	}
	return retryableStatus(e.StatusCode)
}

func retryableStatus(code int) bool {
	return code == 408 || code == 409 || code == 429 || code >= 500
}

// deadlineError is the cause an attempt or a call is aborted with when one
// of its deadlines passes; it names the deadline (kind, one of the timeout
// sentinels above, matchable with errors.Is) and its length.
type deadlineError struct {
	kind  error
	limit time.Duration
}

func (e *deadlineError) Error() string {
	switch e.kind {
	case ErrHeaderTimeout:
		return fmt.Sprintf("%v within %v", e.kind, e.limit)
	case ErrIdleTimeout:
		return fmt.Sprintf("%v for %v", e.kind, e.limit)
	}
	return fmt.Sprintf("%v of %v", e.kind, e.limit)
}

func (e *deadlineError) Unwrap() error { return e.kind }

// eventTooLargeError is the read error of a stream body whose current SSE
// event grew past limit bytes; it matches [ErrEventTooLarge].
type eventTooLargeError struct{ limit int64 }

func (e *eventTooLargeError) Error() string {
	return "the model sent one stream event over " + byteSize(e.limit)
}

func (e *eventTooLargeError) Unwrap() error { return ErrEventTooLarge }

// replyTooLargeError is the error of an answer that grew past limit bytes;
// it matches [ErrReplyTooLarge].
type replyTooLargeError struct{ limit int64 }

func (e *replyTooLargeError) Error() string {
	return "the model's answer went on past " + byteSize(e.limit) + " and was cut there"
}

func (e *replyTooLargeError) Unwrap() error { return ErrReplyTooLarge }

// byteSize writes n as "8 MiB", "64 KiB" or "1000 bytes", whichever is exact.
func byteSize(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// safeError carries a cause whose text has been scrubbed of secrets, while
// keeping the cause matchable with errors.Is/As.
type safeError struct {
	msg string
	err error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.err }

// keyLike matches OpenAI-style keys, including the partly masked form OpenAI
// echoes in 401 messages ("sk-abc***wxyz"), so not even a fragment is shown.
var keyLike = regexp.MustCompile(`sk-[A-Za-z0-9_\-*.]{3,}`)

// redact removes the API key (and anything that looks like one) from s.
func redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "sk-[redacted]")
}

// asAPIError finds the *APIError in err's chain.
func asAPIError(err error) (*APIError, bool) {
	return errors.AsType[*APIError](err)
}
