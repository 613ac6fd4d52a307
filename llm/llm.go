// Package llm is Zero's model client: streaming Chat Completions against any
// OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama, vLLM, LM Studio,
// llama.cpp), built on github.com/openai/openai-go/v3.
//
// It splits reasoning from the answer (reasoning_content / reasoning delta
// fields, or a leading <think>…</think> block), retries transient failures
// only before the first chunk arrived, reports a stream cut mid-way clearly,
// and never puts the API key in an error or a log line.
package llm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Role is the author of a [Message].
type Role string

// The roles a [Message] may have.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	// Tool is the result of a native tool call: its ToolCallID names the
	// call of the assistant message before it.
	Tool Role = "tool"
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the native tool calls of an assistant message.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a Tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Images are pictures after the text, for a model that sees: a user
	// message's attachments, a tool result's images (sent, since the API
	// takes no images in a tool message, as a user message after the
	// results of the call).
	Images []Image `json:"images,omitempty"`
}

// ToolCall is one native tool call of the model: its id, the function's
// name and its arguments as the JSON text the model wrote.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a function offered to the model for native tool calls.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, an object schema.
	Parameters json.RawMessage
}

// Request is one model call.
type Request struct {
	Messages []Message
	// Tools are offered as native tool calls; none: the request has no
	// "tools" and the model answers in text.
	Tools []ToolSpec
	// MaxOutputTokens caps the answer's tokens (reasoning included); 0
	// sends no cap.
	MaxOutputTokens int
}

// DeltaKind tells reasoning text from answer text.
type DeltaKind int

// The kinds of [Delta].
const (
	Reasoning DeltaKind = iota // model reasoning (reasoning_content / reasoning deltas, or a leading <think>…</think>)
	Content                    // the answer text
	// ToolCallArgs is a piece of a native tool call: Call is its place in
	// the answer (from 0), ID and Name come with its first piece (when the
	// server sends them), Text is the next piece of its arguments.
	ToolCallArgs
)

// String returns "reasoning" or "content".
func (k DeltaKind) String() string {
	switch k {
	case Reasoning:
		return "reasoning"
	case Content:
		return "content"
	case ToolCallArgs:
		return "tool_call"
	}
	return fmt.Sprintf("DeltaKind(%d)", int(k))
}

// Delta is one piece of streamed text.
type Delta struct {
	Kind DeltaKind
	Text string
	// Call, ID and Name: a ToolCallArgs delta's call (see [ToolCallArgs]).
	Call     int
	ID, Name string
}

// StreamFunc is called for every delta, in order, on the caller's goroutine.
// Returning [ErrStop] ends the stream early as a success (the HTTP response
// body is closed at once, so the server sees the connection close). Returning
// any other error aborts the stream; Stream returns that error (wrapped,
// errors.Is works).
type StreamFunc func(Delta) error

// Usage is the token accounting the server reported.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens is the part of PromptTokens the provider served from
	// its prompt cache (prompt_tokens_details.cached_tokens).
	CachedTokens int `json:"cached_tokens,omitempty"`
	// Cost is what the endpoint says the call cost, in its currency
	// (OpenRouter's usage.cost); 0 when it says nothing.
	Cost float64 `json:"cost,omitempty"`
}

// Result is what a call received. On error it holds the partial text.
type Result struct {
	Content      string // full answer text received (without any <think> block)
	Reasoning    string // full reasoning text received
	Usage        Usage  // zero when the server sent none
	Stopped      bool   // true when the StreamFunc returned ErrStop
	FinishReason string
	// ToolCalls are the native tool calls of the answer, in order.
	ToolCalls []ToolCall
}

// Defaults applied by [New] for zero [Options] fields.
const (
	DefaultBaseURL       = "https://api.openai.com/v1"
	DefaultMaxRetries    = 3
	DefaultRetryDelay    = time.Second
	DefaultMaxRetryDelay = 60 * time.Second
	DefaultHeaderTimeout = 5 * time.Minute
	DefaultIdleTimeout   = 5 * time.Minute
	DefaultTotalTimeout  = 30 * time.Minute
	DefaultMaxEventBytes = 8 << 20 // 8 MiB
	DefaultMaxReplyBytes = 8 << 20 // 8 MiB
)

// The defaults of the three deadlines are chosen so that a slow but working
// model is never cut, while a server that hangs or only trickles keep-alive
// bytes ends a call within minutes instead of never:
//
//   - DefaultHeaderTimeout (5m): Ollama, and llama.cpp's server, send the
//     response headers only with the first token, i.e. after loading the
//     model and reading the whole prompt. On a CPU, a first call with a
//     long system prompt can take minutes before that; a timeout is retried
//     only once, so a server that never answers costs about 10 minutes.
//   - DefaultIdleTimeout (5m): reasoning models behind Chat Completions may
//     think silently (no reasoning deltas) for minutes between the role
//     chunk and the answer, and servers that send headers at once (vLLM)
//     spend the prompt-reading time in this window too.
//   - DefaultTotalTimeout (30m): a slow local model writing a long
//     reasoning and answer at a few tokens a second needs tens of minutes;
//     the limit is there so that a server dripping chunks forever (or a
//     model looping without end) still ends.

// Options configures a [Client]. Only Model is required.
type Options struct {
	Model         string        // required
	BaseURL       string        // "" = https://api.openai.com/v1
	APIKey        string        // "" sends no Authorization header (Ollama and other local servers)
	HTTPClient    *http.Client  // nil = a default client
	MaxRetries    int           // retries before the first chunk; 0 = default 3; negative = no retries; a server that is not there gets one at most (see [UnreachableError])
	RetryDelay    time.Duration // base backoff (exponential with jitter); 0 = default 1s
	MaxRetryDelay time.Duration // cap for backoff and for Retry-After; 0 = default 60s
	Logger        *slog.Logger  // nil = discard

	// HeaderTimeout bounds the wait for the response headers of one attempt,
	// from sending the request (connecting included) until the status line
	// and headers arrive; the HTTP client's own transport timeouts still
	// apply as well. Many local servers (Ollama, llama.cpp) send the headers
	// only with the first token, so this also bounds loading the model and
	// reading the prompt. The abort is [ErrHeaderTimeout]; it is retried (at
	// most once per call, as each try costs the whole timeout) within
	// MaxRetries. 0 = default 5m; negative = no limit.
	HeaderTimeout time.Duration

	// IdleTimeout aborts an attempt when, after the headers, no chunk
	// arrives for this long: the clock runs only while the decoder waits
	// for the next complete SSE data event (a parsed chunk; reasoning-only
	// chunks and the first, role-only chunk count), so time spent in the
	// StreamFunc is not counted, and bytes that complete no chunk (blank
	// lines, whitespace, ": keep-alive" comments) do not reset it. A 4xx/5xx
	// error body must arrive within it as a whole. Before the first chunk
	// the abort is retried like a dropped connection (at most once per
	// call, within MaxRetries); after it the stream is cut ([ErrStreamCut]
	// and [ErrIdleTimeout]). 0 = default 5m (reasoning models can think
	// silently for minutes); negative = no limit.
	IdleTimeout time.Duration

	// TotalTimeout bounds one Stream call as a whole, in wall-clock time:
	// every attempt, the backoff between them, rate-limit waits and the
	// time spent in the StreamFunc. It is not retried; the error is
	// [ErrTotalTimeout] (with [ErrStreamCut] once a chunk arrived, and the
	// partial Result). 0 = default 30m; negative = no limit.
	TotalTimeout time.Duration

	// MaxEventBytes bounds one SSE event of a streamed answer: the bytes
	// after one blank line (or from the start of the body) up to and
	// including the next one, comments and line ends included, so it bounds
	// every line too. openai-go's decoder keeps a whole event (and a whole
	// line) in memory until the blank line that ends it, so without a bound
	// a server sending one endless line, or data lines and never a blank
	// line, would grow memory until IdleTimeout passed. A real chunk carries
	// a few tokens, far below the default. Going over it ends the call with
	// [ErrEventTooLarge], which is not retried (the server would do it
	// again); what one stream holds at a time stays within a small multiple
	// of the limit. 0 = default 8 MiB; negative = no limit (openai-go still
	// refuses a single line over 32 MiB).
	MaxEventBytes int64

	// MaxReplyBytes bounds one answer, its content and reasoning together,
	// as it streams: a model that goes on in small chunks (each under
	// MaxEventBytes) would otherwise grow memory until TotalTimeout. No
	// model's output comes near the default (the largest output windows are
	// about 128,000 tokens, some 512 KB). Going over it ends the call with
	// [ErrReplyTooLarge], not retried, with the answer up to the limit.
	// 0 = default 8 MiB; negative = no limit.
	MaxReplyBytes int64

	// RateLimit bounds this model's requests and tokens per minute (see
	// [RateLimit]); the zero value means no limit, and then no tokens are
	// counted for it. The window is shared by every Client of the process
	// with the same BaseURL and Model, as the provider counts them together;
	// each Client checks its own RateLimit against that shared usage, and
	// records only what its own limits need (a Client without an input
	// limit adds no input tokens, one without any limit adds nothing).
	RateLimit RateLimit

	// OnRateLimit, when set, is called each time Stream is about to wait for
	// the rate limit, with how long it will wait, so the wait can be shown as
	// progress. It may be called more than once per Stream call: every
	// attempt (retries included) is admitted separately, and a wait is
	// computed again when a concurrent call took the room first. It runs on
	// the goroutine that called Stream, before the wait, and must not block.
	OnRateLimit func(wait time.Duration)
}

// Client streams chat completions from one model. It is safe for concurrent use.
type Client struct {
	opts Options
	svc  openai.ChatCompletionService
	gate *rateGate // nil when opts.RateLimit sets no limit
	// countTokens is CountTokens, replaced in tests to see when it runs.
	countTokens func(string) int
}

var discardLogger = slog.New(slog.DiscardHandler)

// New returns a client for opts.Model. OPENAI_* environment variables are not
// read here: configuration is resolved by the caller and passed in opts, so an
// empty APIKey really means "no key".
func New(opts Options) (*Client, error) {
	if opts.Model == "" {
		return nil, fmt.Errorf("new model client: %w", ErrNoModel)
	}
	opts.BaseURL = cmp.Or(opts.BaseURL, DefaultBaseURL)
	switch {
	case opts.MaxRetries == 0:
		opts.MaxRetries = DefaultMaxRetries
	case opts.MaxRetries < 0:
		opts.MaxRetries = 0
	}
	opts.RetryDelay = cmp.Or(opts.RetryDelay, DefaultRetryDelay)
	opts.MaxRetryDelay = cmp.Or(opts.MaxRetryDelay, DefaultMaxRetryDelay)
	opts.HeaderTimeout = limit(opts.HeaderTimeout, DefaultHeaderTimeout)
	opts.IdleTimeout = limit(opts.IdleTimeout, DefaultIdleTimeout)
	opts.TotalTimeout = limit(opts.TotalTimeout, DefaultTotalTimeout)
	switch {
	case opts.MaxEventBytes == 0:
		opts.MaxEventBytes = DefaultMaxEventBytes
	case opts.MaxEventBytes < 0:
		opts.MaxEventBytes = 0 // no limit inside the Client, like the deadlines
	}
	switch {
	case opts.MaxReplyBytes == 0:
		opts.MaxReplyBytes = DefaultMaxReplyBytes
	case opts.MaxReplyBytes < 0:
		opts.MaxReplyBytes = 0
	}
	opts.Logger = cmp.Or(opts.Logger, discardLogger)
	if opts.HTTPClient == nil {
		opts.HTTPClient = defaultHTTPClient()
	}
	// A copy, so the caller's client is not changed: a refused connection
	// is told from a transient failure (see reachTransport).
	hc := *opts.HTTPClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &reachTransport{base: base}
	opts.HTTPClient = &hc

	ropts := []option.RequestOption{
		option.WithBaseURL(opts.BaseURL),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0), // Stream owns retries: it must know whether a chunk arrived
	}
	if opts.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(opts.APIKey))
	}
	// NewChatCompletionService rather than openai.NewClient: the latter folds in
	// OPENAI_API_KEY, OPENAI_BASE_URL and friends from the environment, which
	// would silently override an explicit empty key or default URL.
	c := &Client{opts: opts, svc: openai.NewChatCompletionService(ropts...), countTokens: CountTokens}
	if opts.RateLimit.on() {
		c.gate = newRateGate(opts.BaseURL, opts.Model, opts.RateLimit, c.rateLimitWait)
	}
	return c, nil
}

// limit resolves a deadline option: 0 means def, negative means no limit,
// which is 0 inside the Client.
func limit(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// rateLimitWait logs a rate-limit wait and tells Options.OnRateLimit.
func (c *Client) rateLimitWait(d time.Duration) {
	c.opts.Logger.Info("model rate limit: waiting", "model", c.opts.Model, "wait", d)
	if c.opts.OnRateLimit != nil {
		c.opts.OnRateLimit(d)
	}
}

// Model returns the model name requests are sent for.
func (c *Client) Model() string { return c.opts.Model }

// defaultHTTPClient has a connection pool of its own and no timeouts beyond
// the default transport's dial and TLS handshake limits: the wait for the
// headers, for each chunk and for the whole call are Options.HeaderTimeout,
// IdleTimeout and TotalTimeout, which Stream enforces whatever the client.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return &http.Client{Transport: t.Clone()}
	}
	return &http.Client{Transport: http.DefaultTransport}
}
