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
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// Request is one model call.
type Request struct {
	Messages []Message
}

// DeltaKind tells reasoning text from answer text.
type DeltaKind int

// The kinds of [Delta].
const (
	Reasoning DeltaKind = iota // model reasoning (reasoning_content / reasoning deltas, or a leading <think>…</think>)
	Content                    // the answer text
)

// String returns "reasoning" or "content".
func (k DeltaKind) String() string {
	switch k {
	case Reasoning:
		return "reasoning"
	case Content:
		return "content"
	}
	return fmt.Sprintf("DeltaKind(%d)", int(k))
}

// Delta is one piece of streamed text.
type Delta struct {
	Kind DeltaKind
	Text string
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
}

// Result is what a call received. On error it holds the partial text.
type Result struct {
	Content      string // full answer text received (without any <think> block)
	Reasoning    string // full reasoning text received
	Usage        Usage  // zero when the server sent none
	Stopped      bool   // true when the StreamFunc returned ErrStop
	FinishReason string
}

// Defaults applied by [New] for zero [Options] fields.
const (
	DefaultBaseURL       = "https://api.openai.com/v1"
	DefaultMaxRetries    = 3
	DefaultRetryDelay    = time.Second
	DefaultMaxRetryDelay = 60 * time.Second
	DefaultIdleTimeout   = 5 * time.Minute
)

// Options configures a [Client]. Only Model is required.
type Options struct {
	Model         string        // required
	BaseURL       string        // "" = https://api.openai.com/v1
	APIKey        string        // "" sends no Authorization header (Ollama and other local servers)
	HTTPClient    *http.Client  // nil = a default client
	MaxRetries    int           // retries before the first chunk; 0 = default 3; negative = no retries
	RetryDelay    time.Duration // base backoff (exponential with jitter); 0 = default 1s
	MaxRetryDelay time.Duration // cap for backoff and for Retry-After; 0 = default 60s
	Logger        *slog.Logger  // nil = discard

	// IdleTimeout aborts a request when a read of the response body (the
	// first starts right after the headers) waits this long for data; time
	// spent in the StreamFunc is not counted. Before the first chunk the abort
	// is retried like a dropped connection; after it the stream is cut
	// ([ErrStreamCut] and [ErrIdleTimeout]). Any bytes count as data,
	// including SSE keep-alive comments. 0 = default 5m (reasoning models can think silently for minutes); negative = no limit.
	IdleTimeout time.Duration

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
	switch {
	case opts.IdleTimeout == 0:
		opts.IdleTimeout = DefaultIdleTimeout
	case opts.IdleTimeout < 0:
		opts.IdleTimeout = 0 // internally 0 means no limit
	}
	opts.Logger = cmp.Or(opts.Logger, discardLogger)
	if opts.HTTPClient == nil {
		opts.HTTPClient = defaultHTTPClient()
	}

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

// rateLimitWait logs a rate-limit wait and tells Options.OnRateLimit.
func (c *Client) rateLimitWait(d time.Duration) {
	c.opts.Logger.Info("model rate limit: waiting", "model", c.opts.Model, "wait", d)
	if c.opts.OnRateLimit != nil {
		c.opts.OnRateLimit(d)
	}
}

// Model returns the model name requests are sent for.
func (c *Client) Model() string { return c.opts.Model }

// defaultHTTPClient bounds the wait for response headers (a server that
// accepts and never answers must not hang a turn) but not the body, because
// a reasoning model may stream for many minutes; a body that goes silent is
// caught by Options.IdleTimeout instead.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
}
