package llm

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/zeroagent/zero/cut"
)

// Stream sends the request with stream=true (and stream_options.include_usage)
// and calls fn per delta; fn may be nil. Transient failures (408, 409, 429,
// 5xx, connection errors, a stream that ends empty) are retried with backoff,
// but only while no chunk has arrived: after that a retry would replay text
// the caller already acted on. A missed [Options.HeaderTimeout], or an
// [Options.IdleTimeout] missed before the first chunk, is retried too, but
// only once per call: each such try has already cost the whole timeout. The
// whole call, retries included, is bounded by [Options.TotalTimeout]. An SSE
// event over [Options.MaxEventBytes] ends the call with [ErrEventTooLarge],
// never retried. On any error Stream still returns the partial Result
// received so far.
//
// With [Options.RateLimit] set, each attempt first waits until the model's
// per-minute window has room (see [RateLimit]); a ctx done while waiting
// ends Stream at once with an error wrapping ctx.Err().
func (c *Client) Stream(ctx context.Context, req Request, fn StreamFunc) (Result, error) {
	res, err := c.stream(ctx, req, fn)
	c.recordOutput(res)
	return res, err
}

func (c *Client) stream(ctx context.Context, req Request, fn StreamFunc) (Result, error) {
	body, err := c.body(req)
	if err != nil {
		return Result{}, err
	}
	input := 0
	if c.gate != nil && c.opts.RateLimit.InputTokens > 0 {
		// Only here: tokenizing a long history is not free.
		input = c.promptTokens(req)
	}
	// callCtx carries the total deadline; ctx stays the caller's, so that a
	// cancel by the caller can be told from the deadline.
	callCtx := ctx
	if c.opts.TotalTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, c.opts.TotalTimeout,
			&deadlineError{kind: ErrTotalTimeout, limit: c.opts.TotalTimeout})
		defer cancel()
	}
	col := &collector{fn: fn, max: c.opts.MaxReplyBytes}
	timeouts := 0 // attempts that ended in a header or idle timeout
	for attempt := 0; ; attempt++ {
		if c.gate != nil {
			if err := c.gate.acquire(callCtx, input); err != nil {
				// Attempts before this one sent no chunk: nothing to flush.
				return col.result(), fmt.Errorf("model request: waiting for the rate limit: %w", totalCause(ctx, callCtx, err))
			}
		}
		a := &attemptState{}
		err := c.attempt(ctx, callCtx, body, len(req.Messages), col, a)
		if err == nil {
			return col.result(), nil
		}
		if a.timedOut {
			timeouts++
		}
		if !a.retryable || a.chunks > 0 || attempt >= c.opts.MaxRetries || timeouts > maxTimeoutRetries || callCtx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("model request failed after %d attempts: %w", attempt+1, err)
			}
			col.flushQuiet()
			return col.result(), err
		}
		delay := retryDelay(attempt, c.opts.RetryDelay, c.opts.MaxRetryDelay, a.header, time.Now(), rand.Int64N)
		c.opts.Logger.DebugContext(ctx, "model request retry",
			"model", c.opts.Model, "attempt", attempt+1, "status", a.status, "timed_out", a.timedOut, "delay", delay)
		if err := sleep(callCtx, delay); err != nil {
			// Nothing arrived yet, so there is nothing to flush.
			return col.result(), fmt.Errorf("model request: waiting to retry: %w", totalCause(ctx, callCtx, err))
		}
	}
}

// maxTimeoutRetries is how many attempts ending in a header or idle timeout
// are retried per call. One retry gets past a stuck connection or worker; more
// would mostly multiply the wait for a server that is slow or hung.
const maxTimeoutRetries = 1

// totalCause returns the total-deadline error when callCtx ended because of
// it rather than because the caller's ctx ended; else err.
func totalCause(ctx, callCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	if de, ok := errors.AsType[*deadlineError](context.Cause(callCtx)); ok {
		return de
	}
	return err
}

// promptTokens estimates the input tokens of req for the rate limit.
func (c *Client) promptTokens(req Request) int {
	n := 0
	for _, m := range req.Messages {
		n += c.countTokens(m.Content)
	}
	return n
}

// recordOutput adds the output of a finished Stream call to the rate-limit
// window, when an output limit is set. The server's count is preferred; a
// server that sent no usage (many local ones) is counted from the text.
func (c *Client) recordOutput(res Result) {
	if c.gate == nil || c.opts.RateLimit.OutputTokens <= 0 {
		return
	}
	n := res.Usage.CompletionTokens
	if res.Usage == (Usage{}) && res.Content+res.Reasoning != "" {
		n = c.countTokens(res.Content + res.Reasoning)
	}
	c.gate.recordOutput(n)
}

// attemptState is what one HTTP attempt observed, for the retry decision.
type attemptState struct {
	actx      context.Context // the attempt's context; its cause tells which deadline ended it
	status    int             // 0 when no response arrived
	header    http.Header     // for Retry-After
	errBody   []byte          // body of a >=400 response
	body      *watchBody      // body of a 2xx response
	idle      *idleWatch      // nil when there is no idle limit
	chunks    int
	retryable bool
	timedOut  bool // ended by the header or idle deadline before any chunk
}

// deadline returns the deadline that aborted the attempt (header, idle or
// the call's total), or nil.
func (a *attemptState) deadline() *deadlineError {
	if a.actx == nil || a.actx.Err() == nil {
		return nil
	}
	de, _ := errors.AsType[*deadlineError](context.Cause(a.actx))
	return de
}

// next advances the stream with the idle watch running: only the wait for
// the next complete chunk is timed, and only a chunk resets the clock.
func (a *attemptState) next(stream chunkStream) bool {
	if a.idle == nil {
		return stream.Next()
	}
	a.idle.arm()
	ok := stream.Next()
	a.idle.disarm()
	return ok
}

// attempt makes one HTTP request. ctx is the caller's; callCtx is ctx with
// the call's total deadline.
func (c *Client) attempt(ctx, callCtx context.Context, body []byte, messages int, col *collector, a *attemptState) error {
	start := time.Now()
	// The request runs on its own context so that the deadlines can abort it
	// without touching ctx, which stays the caller's to cancel.
	actx, abort := context.WithCancelCause(callCtx)
	defer abort(nil)
	a.actx = actx
	if c.opts.IdleTimeout > 0 {
		a.idle = &idleWatch{d: c.opts.IdleTimeout, abort: abort}
		defer a.idle.disarm()
	}
	// The middleware runs on this goroutine inside NewStreaming, so it may
	// write a without locking.
	capture := func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		var headers *time.Timer
		if d := c.opts.HeaderTimeout; d > 0 {
			headers = time.AfterFunc(d, func() { abort(&deadlineError{kind: ErrHeaderTimeout, limit: d}) })
		}
		resp, err := next(r)
		if headers != nil {
			headers.Stop() // too late when it fired: then actx is done and the body reads fail
		}
		if err != nil || resp == nil {
			return resp, err
		}
		a.status, a.header = resp.StatusCode, resp.Header
		if resp.StatusCode >= 400 {
			// Kept so the error message is built from the body by us: openai-go
			// only understands {"error":{...}}, while Ollama sends {"error":"..."}.
			// The whole body must come within the idle limit: bytes trickled
			// one by one must not hold the attempt open.
			if a.idle != nil {
				a.idle.arm()
			}
			a.errBody, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			if a.idle != nil {
				a.idle.disarm()
			}
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(a.errBody))
			return resp, nil
		}
		a.body = &watchBody{rc: resp.Body, tail: []byte("\n"), max: c.opts.MaxEventBytes}
		resp.Body = a.body
		return resp, nil
	}
	c.opts.Logger.DebugContext(ctx, "model request",
		"model", c.opts.Model, "messages", messages)
	// The body is Zero's own encoding of the request (see body); the SDK
	// adds "stream": true to it.
	stream := c.svc.NewStreaming(actx, openai.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body), option.WithMiddleware(capture))
	defer stream.Close()

	err := c.consume(ctx, stream, col, a)
	bodyBytes := int64(0)
	if a.body != nil {
		bodyBytes = a.body.n
	}
	deadline := ""
	if de := a.deadline(); de != nil && err != nil {
		deadline = de.Error() // our own text: which deadline and its length
	}
	c.opts.Logger.DebugContext(ctx, "model response",
		"model", c.opts.Model, "status", a.status, "chunks", a.chunks, "bytes", bodyBytes,
		"finish_reason", col.finish, "stopped", col.stopped, "deadline", deadline, "elapsed", time.Since(start))
	return err
}

// chunkStream is the part of openai-go's ssestream.Stream that consume uses.
type chunkStream interface {
	Next() bool
	Current() openai.ChatCompletionChunk
	Err() error
	Close() error
}

func (c *Client) consume(ctx context.Context, stream chunkStream, col *collector, a *attemptState) error {
	for a.next(stream) {
		a.chunks++
		chunk := stream.Current()
		if err := col.chunk(&chunk); err != nil {
			_ = stream.Close() // first, so the server stops generating at once
			if errors.Is(err, ErrStop) {
				col.stopped = true
				col.flushQuiet()
				return nil
			}
			if errors.Is(err, ErrReplyTooLarge) {
				return fmt.Errorf("model stream: %w", err) // the server's, not retried
			}
			return fmt.Errorf("model stream callback: %w", err)
		}
	}
	err := stream.Err()
	_ = stream.Close()

	complete := col.finish != "" || (a.body != nil && a.body.done)
	if complete && (err == nil || a.chunks > 0) {
		// An error after the finish chunk (say, a cut before the usage chunk)
		// loses nothing of the answer.
		if err := col.flush(); err != nil {
			if errors.Is(err, ErrStop) {
				col.stopped = true
				return nil
			}
			return fmt.Errorf("model stream callback: %w", err)
		}
		return nil
	}
	// ctx is checked before the deadlines: when the caller cancels, that is
	// the answer, whatever else happened at the same moment.
	if ctx.Err() != nil {
		return fmt.Errorf("model stream canceled after %d chunks: %w", a.chunks, ctx.Err())
	}
	if de := a.deadline(); de != nil && (a.status < 400 || de.kind == ErrTotalTimeout) {
		switch {
		case a.chunks > 0:
			return c.cut(a.chunks, de)
		case de.kind == ErrTotalTimeout:
			return de // not retryable: the call's time is up
		case de.kind == ErrHeaderTimeout:
			// The server or the path to it may have hung, which a new
			// connection may well not.
			a.retryable, a.timedOut = true, true
			return de
		default:
			// Headers came but no chunk after: the same.
			a.retryable, a.timedOut = true, true
			return fmt.Errorf("model stream stalled before the first chunk: %w", de)
		}
	}
	if a.status >= 400 {
		// Before ctxError: when the idle limit cut the error body short,
		// openai-go reports the aborted context, but the status is the news.
		ae := &APIError{StatusCode: a.status, Message: redact(errorMessage(a.errBody, a.status), c.opts.APIKey), NoKey: c.opts.APIKey == ""}
		ae.Code, ae.Type, ae.Window = errorFields(a.errBody, c.opts.APIKey)
		a.retryable = ae.Retryable()
		return ae
	}
	if ctxErr := ctxError(ctx, err); ctxErr != nil {
		return fmt.Errorf("model stream canceled after %d chunks: %w", a.chunks, ctxErr)
	}
	switch {
	case a.chunks > 0:
		return c.cut(a.chunks, err)
	case errors.Is(err, ErrEventTooLarge):
		// The server's bug, which it would repeat: not retried.
		return fmt.Errorf("model stream: %w", err)
	case err == nil:
		// The server closed a 2xx stream without sending anything: as
		// transient as a reset connection.
		a.retryable = true
		return c.cut(0, nil)
	case a.status == 0:
		a.retryable = transientConnErr(err)
		return fmt.Errorf("model connection failed: %w", c.safe(err))
	case a.body != nil && a.body.err != nil:
		a.retryable = true
		return c.cut(0, err)
	default:
		// A malformed chunk or an error event: the server will say the same again.
		return fmt.Errorf("model stream: %w", c.safe(err))
	}
}

// transientConnErr reports whether a request that got no response may
// succeed if tried again: refused, reset, dropped and timed-out connections
// may; a bad certificate, an unknown host or a malformed URL will not.
func transientConnErr(err error) bool {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // *url.Error claims to be a net.Error whatever it wraps
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return false
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return false
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return false
	}
	if d, ok := errors.AsType[*net.DNSError](err); ok {
		return !d.IsNotFound
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return true
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// ctxError returns the context error when the call was canceled or timed
// out, whichever way the transport reported it.
func ctxError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}

func (c *Client) cut(chunks int, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w after %d chunks (no finish_reason or [DONE])", ErrStreamCut, chunks)
	}
	return fmt.Errorf("%w after %d chunks: %w", ErrStreamCut, chunks, c.safe(cause))
}

// safe strips what an error may carry that must not be shown: the request
// URL of a *url.Error (a proxy may put a key in the query) and the key itself.
func (c *Client) safe(err error) error {
	msg := err.Error()
	if ue, ok := errors.AsType[*url.Error](err); ok {
		msg = ue.Err.Error()
	}
	return &safeError{msg: redact(msg, c.opts.APIKey), err: err}
}

// body encodes req as the chat completions request, once for all its
// attempts, with encoding/json: the SDK's reflective encoder of its
// params cost 2 ms per request of a long session (a third of Zero's CPU in
// a turn).
func (c *Client) body(req Request) ([]byte, error) {
	w := wireRequest{Model: c.opts.Model, Messages: make([]wireMessage, 0, len(req.Messages))}
	w.StreamOptions.IncludeUsage = true
	var toolImages []Image // of the tool results just before
	for i, m := range req.Messages {
		if m.Role != Tool && len(toolImages) > 0 {
			w.Messages = append(w.Messages, wireMessage{Role: string(User), Content: contentParts(toolImagesNote, toolImages)})
			toolImages = nil
		}
		wm, err := message(i, m)
		if err != nil {
			return nil, err
		}
		w.Messages = append(w.Messages, wm)
		if m.Role == Tool {
			toolImages = append(toolImages, m.Images...)
		}
	}
	if len(toolImages) > 0 {
		w.Messages = append(w.Messages, wireMessage{Role: string(User), Content: contentParts(toolImagesNote, toolImages)})
	}
	for _, s := range req.Tools {
		def, err := functionJSON(s)
		if err != nil {
			return nil, err
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: def})
	}
	c.capOutput(&w, req.MaxOutputTokens)
	return json.Marshal(w)
}

// wireRequest is a chat completions request as the API takes it; the SDK
// adds "stream": true.
type wireRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function json.RawMessage `json:"function"`
}

// collector accumulates the Result of one Stream call and feeds fn.
type collector struct {
	fn        StreamFunc
	content   strings.Builder
	reasoning strings.Builder
	split     thinkSplitter
	calls     callBuilder
	finish    string
	usage     Usage
	stopped   bool
	max       int64 // bytes of content, reasoning and tool calls together; 0 = no limit
}

func (col *collector) chunk(ch *openai.ChatCompletionChunk) error {
	if ch.JSON.Usage.Valid() {
		col.usage = Usage{
			PromptTokens:     int(ch.Usage.PromptTokens),
			CompletionTokens: int(ch.Usage.CompletionTokens),
			TotalTokens:      int(ch.Usage.TotalTokens),
			CachedTokens:     int(ch.Usage.PromptTokensDetails.CachedTokens),
			Cost:             usageCost(&ch.Usage),
		}
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		if choice.Index != 0 {
			continue // we ask for one choice; ignore anything else
		}
		if r := reasoningField(&choice.Delta); r != "" {
			if err := col.emit(Reasoning, r); err != nil {
				return err
			}
		}
		// A refusal is the model's answer, even though it is not in content.
		for _, text := range [...]string{choice.Delta.Content, choice.Delta.Refusal} {
			if text == "" {
				continue
			}
			if err := col.split.feed(text, col.emit); err != nil {
				return err
			}
		}
		for j := range choice.Delta.ToolCalls {
			if err := col.toolCall(&choice.Delta.ToolCalls[j]); err != nil {
				return err
			}
		}
		if choice.FinishReason != "" {
			col.finish = choice.FinishReason
		}
	}
	return nil
}

func (col *collector) emit(k DeltaKind, text string) error {
	if err := col.write(k, text); err != nil {
		return err
	}
	if col.fn == nil {
		return nil
	}
	return col.fn(Delta{Kind: k, Text: text})
}

// toolCall takes one piece of a native tool call. Text the think splitter
// holds comes first: it was said before the call.
func (col *collector) toolCall(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) error {
	if err := col.flush(); err != nil {
		return err
	}
	if col.max > 0 && int64(col.content.Len()+col.reasoning.Len()+col.calls.size()+len(tc.Function.Arguments)+len(tc.Function.Name)+len(tc.ID)) > col.max {
		return &replyTooLargeError{limit: col.max}
	}
	at := col.calls.piece(tc)
	if col.fn == nil {
		return nil
	}
	c := col.calls.calls[at]
	return col.fn(Delta{Kind: ToolCallArgs, Call: at, ID: c.ID, Name: c.Name, Text: tc.Function.Arguments})
}

func (col *collector) write(k DeltaKind, text string) error {
	if col.max > 0 && int64(col.content.Len()+col.reasoning.Len()+col.calls.size()+len(text)) > col.max {
		return &replyTooLargeError{limit: col.max}
	}
	if k == Reasoning {
		col.reasoning.WriteString(text)
	} else {
		col.content.WriteString(text)
	}
	return nil
}

// flush delivers text the think splitter still holds at a normal end.
func (col *collector) flush() error { return col.split.flush(col.emit) }

// flushQuiet keeps held text in the Result without calling fn, for ends
// where the caller is no longer listening (stop, error).
func (col *collector) flushQuiet() { _ = col.split.flush(col.write) }

func (col *collector) result() Result {
	return Result{
		Content:      col.content.String(),
		Reasoning:    col.reasoning.String(),
		Usage:        col.usage,
		Stopped:      col.stopped,
		FinishReason: col.finish,
		ToolCalls:    col.calls.result(),
	}
}

// usageCost reads the cost OpenRouter (and LiteLLM's proxy) put in usage:
// a number in the endpoint's currency, credits for OpenRouter (US dollars).
func usageCost(u *openai.CompletionUsage) float64 {
	raw := u.JSON.ExtraFields["cost"].Raw()
	var cost float64
	if raw == "" || json.Unmarshal([]byte(raw), &cost) != nil || cost < 0 {
		return 0
	}
	return cost
}

// reasoningField reads the reasoning text that OpenAI-compatible servers put
// in a delta field openai-go does not model: reasoning_content (DeepSeek,
// vLLM, LM Studio) or reasoning (OpenRouter, Ollama, newer vLLM). Some
// servers send both with the same text, so the first non-empty one wins.
func reasoningField(d *openai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range [...]string{"reasoning_content", "reasoning"} {
		// Unknown fields are stored raw (and marked not Valid), so decode here.
		raw := d.JSON.ExtraFields[name].Raw()
		if len(raw) < 2 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// errorMessage extracts the server's error message from an error body in the
// shapes OpenAI-compatible servers use: {"error":{"message":…}} (OpenAI,
// vLLM), {"error":"…"} (Ollama), {"message":…}, {"detail":…}; else short
// plain text, else the status text.
func errorMessage(body []byte, status int) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message json.RawMessage `json:"message"`
		}
		if len(v.Error) > 0 && json.Unmarshal(v.Error, &inner) == nil {
			v.Error = inner.Message
		}
		for _, raw := range [...]json.RawMessage{v.Error, v.Message, v.Detail} {
			var s string
			if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "" {
				return cut.Clip(strings.TrimSpace(s), 500)
			}
		}
	}
	text := strings.TrimSpace(string(body))
	if text != "" && text[0] != '<' && text[0] != '{' && utf8.ValidString(text) {
		return cut.Clip(text, 300)
	}
	return cmp.Or(http.StatusText(status), "unknown error")
}

// idleWatch aborts an attempt when the wait for one chunk (one call of the
// stream's Next, which reads until a whole SSE event is decoded) takes
// longer than d. Bytes that complete no event do not end the wait, and a
// slow StreamFunc (which runs between calls of Next, while the data waits in
// the socket buffer) never trips it.
type idleWatch struct {
	d     time.Duration
	abort context.CancelCauseFunc
	timer *time.Timer
}

// arm and disarm bracket one wait. The waits of one attempt happen on one
// goroutine, so the timer field needs no lock; only fire runs elsewhere.
func (w *idleWatch) arm() {
	if w.timer == nil {
		w.timer = time.AfterFunc(w.d, w.fire)
		return
	}
	w.timer.Reset(w.d)
}

func (w *idleWatch) disarm() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// fire aborts the attempt with a cause such as "no data from the model for 5m0s".
func (w *idleWatch) fire() {
	w.abort(&deadlineError{kind: ErrIdleTimeout, limit: w.d})
}

// watchBody wraps a stream body to see what openai-go's decoder hides:
// whether "data: [DONE]" went by (a clean end the decoder reports exactly
// like EOF), the transport error of a failed read, and the byte count. It
// also bounds the size of one SSE event (see [Options.MaxEventBytes]), which
// the decoder would otherwise buffer without end.
type watchBody struct {
	rc   io.ReadCloser
	n    int64
	done bool
	err  error  // the transport's read error, not tooLarge
	tail []byte // last bytes seen, so a marker split across reads is found
	win  []byte

	max      int64 // bytes one event may have; 0 = no limit
	event    int64 // bytes of the current event so far, never above max
	line     int64 // bytes of the current line so far, without its '\n'
	lineCR   bool  // the current line so far is just "\r": blank, if '\n' follows
	tooLarge error // set once the event went over max; every later Read returns it
}

// doneMarkers are the SSE [DONE] lines; the leading newline anchors them at
// a line start, which JSON text (no raw newlines) can never imitate.
var doneMarkers = [...][]byte{[]byte("\ndata: [DONE]"), []byte("\ndata:[DONE]")}

// Read passes the body on, up to the byte that would take the current event
// past max: that read returns the bytes before it with the error, so events
// completed in the same read are still decoded, and the decoder never holds
// more than max bytes of one event.
func (w *watchBody) Read(p []byte) (int, error) {
	if w.tooLarge != nil {
		return 0, w.tooLarge
	}
	n, err := w.rc.Read(p)
	if n > 0 && w.max > 0 {
		if keep := w.measure(p[:n]); keep < n {
			n = keep
			w.tooLarge = &eventTooLargeError{limit: w.max}
			err = w.tooLarge
		}
	}
	if n > 0 {
		w.n += int64(n)
		if !w.done {
			w.scan(p[:n])
		}
	}
	if err != nil && err != io.EOF && w.err == nil && w.tooLarge == nil {
		w.err = err
	}
	return n, err
}

// measure advances the event and line counts over b, which the decoder
// splits as bufio.ScanLines does (lines end at '\n', one '\r' before it is
// dropped, and an empty line ends an event), and returns how many leading
// bytes of b keep the current event, its ending blank line included, within
// max: len(b) when all of them do.
func (w *watchBody) measure(b []byte) int {
	for off := 0; off < len(b); {
		seg := b[off:] // the rest of the current line in b, with its '\n' if there
		nl := bytes.IndexByte(seg, '\n')
		if nl >= 0 {
			seg = seg[:nl+1]
		}
		if w.event+int64(len(seg)) > w.max {
			return off + int(w.max-w.event)
		}
		w.event += int64(len(seg))
		off += len(seg)
		text := seg
		if nl >= 0 {
			text = seg[:nl]
		}
		if len(text) > 0 {
			w.lineCR = w.line == 0 && len(text) == 1 && text[0] == '\r'
			w.line += int64(len(text))
		}
		if nl >= 0 {
			if w.line == 0 || w.lineCR {
				w.event = 0 // a blank line: the event is over
			}
			w.line, w.lineCR = 0, false
		}
	}
	return len(b)
}

func (w *watchBody) scan(b []byte) {
	w.win = append(append(w.win[:0], w.tail...), b...)
	for _, m := range doneMarkers {
		if bytes.Contains(w.win, m) {
			w.done = true
			return
		}
	}
	keep := len(doneMarkers[0]) - 1
	w.tail = append(w.tail[:0], w.win[max(0, len(w.win)-keep):]...)
}

func (w *watchBody) Close() error { return w.rc.Close() }
