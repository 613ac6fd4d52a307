package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

func windowOf(t *testing.T, baseURL, model, key string) (llm.Window, error) {
	t.Helper()
	c, err := llm.New(llm.Options{Model: model, BaseURL: baseURL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return c.ContextWindow(context.Background())
}

func TestContextWindowShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		win      llmtest.Window
		tokens   int
		source   string
		warn     bool
		modelMax int
	}{
		{"every shape", llmtest.Window{Tokens: 8192}, 8192, "/v1/models max_model_len", false, 0},
		{"vLLM", llmtest.Window{Tokens: 16384, Shape: llmtest.ShapeVLLM}, 16384, "max_model_len", false, 0},
		{"OpenRouter top provider smaller", llmtest.Window{Tokens: 65536, ModelMax: 131072, Shape: llmtest.ShapeOpenRouter}, 65536, "top_provider.context_length", false, 0},
		{"OpenRouter", llmtest.Window{Tokens: 131072, Shape: llmtest.ShapeOpenRouter}, 131072, "GET /v1/models context_length", false, 0},
		{"llama.cpp", llmtest.Window{Tokens: 4096, ModelMax: 131072, Shape: llmtest.ShapeLlamaCpp}, 4096, "default_generation_settings.n_ctx", false, 0},
		{"llama.cpp top-level n_ctx", llmtest.Window{Tokens: 6000, Shape: llmtest.ShapeLlamaCppV2}, 6000, "llama.cpp GET /props n_ctx", false, 0},
		{"Ollama num_ctx", llmtest.Window{Tokens: 8192, NumCtx: 8192, ModelMax: 131072, Shape: llmtest.ShapeOllama}, 8192, "parameters num_ctx", true, 131072},
		{"Ollama loaded", llmtest.Window{Tokens: 16384, Loaded: 16384, ModelMax: 131072, Shape: llmtest.ShapeOllama}, 16384, "/api/ps", true, 131072},
		{"Ollama default", llmtest.Window{Tokens: 131072, Shape: llmtest.ShapeOllama}, llm.OllamaDefaultContext, "default num_ctx", true, 131072},
		{"Ollama full window", llmtest.Window{Tokens: 8192, NumCtx: 8192, ModelMax: 8192, Shape: llmtest.ShapeOllama}, 8192, "num_ctx", false, 0},
		{"LM Studio loaded", llmtest.Window{Tokens: 32768, ModelMax: 131072, Loaded: 32768, Shape: llmtest.ShapeLMStudio}, 32768, "loaded_context_length", false, 0},
		{"LM Studio not loaded", llmtest.Window{Tokens: 131072, Shape: llmtest.ShapeLMStudio}, 131072, "max_context_length", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t)
			srv.ServeWindow(tc.win)
			model := "qwen3:8b" // a single-model list stands for any name
			if tc.win.Loaded > 0 {
				model = llmtest.ModelName // /api/ps names the loaded model
			}
			w, err := windowOf(t, srv.URL(), model, "")
			if err != nil {
				t.Fatal(err)
			}
			if w.Tokens != tc.tokens || !strings.Contains(w.Source, tc.source) || w.Max != tc.modelMax {
				t.Errorf("window = %+v, want %d tokens from %q (model max %d)", w, tc.tokens, tc.source, tc.modelMax)
			}
			if got := w.Warning != ""; got != tc.warn {
				t.Errorf("warning = %q, want one: %v", w.Warning, tc.warn)
			}
			if tc.warn && !(strings.Contains(w.Warning, "OLLAMA_CONTEXT_LENGTH=") && strings.Contains(w.Warning, "PARAMETER num_ctx")) {
				t.Errorf("the warning does not say how to raise num_ctx: %s", w.Warning)
			}
		})
	}
}

func TestContextWindowUnknown(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t) // no window set: /v1/models says nothing, the rest is 404
	_, err := windowOf(t, srv.URL(), "m", "sk-window-secret-123")
	if !errors.Is(err, llm.ErrWindowUnknown) {
		t.Fatalf("err = %v, want ErrWindowUnknown", err)
	}
	if strings.Contains(err.Error(), "sk-window-secret-123") {
		t.Fatalf("the key is in the error: %v", err)
	}
}

// TestContextWindowHostile: a server that answers huge bodies, wrong types,
// negative, fractional or absurd numbers gives no window (and no crash,
// and no unbounded read); the key never shows.
func TestContextWindowHostile(t *testing.T) {
	t.Parallel()
	const key = "sk-hostile-key-456"
	huge := `{"data":[{"id":"m","context_length":1` + strings.Repeat("0", 9<<20) + `}]}`
	bodies := map[string]string{
		"huge":        huge,
		"string":      `{"data":[{"id":"m","context_length":"8192","max_model_len":[1]}]}`,
		"negative":    `{"data":[{"id":"m","context_length":-8192,"max_model_len":0}]}`,
		"fraction":    `{"data":[{"id":"m","context_length":8192.5}]}`,
		"absurd":      `{"data":[{"id":"m","context_length":1e300}]}`,
		"not a list":  `{"data":{"id":"m"}}`,
		"not json":    `<html>` + strings.Repeat("x", 1000),
		"null fields": `{"data":[{"id":"m","context_length":null,"top_provider":null}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var sawKey atomic.Bool // the probes come together
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") == "Bearer "+key {
					sawKey.Store(true)
				}
				switch r.URL.Path {
				case "/v1/models":
					fmt.Fprint(w, body)
				case "/props":
					fmt.Fprint(w, `{"default_generation_settings":{"n_ctx":-1},"n_ctx":"big"}`)
				case "/api/show":
					fmt.Fprint(w, `{"model_info":{"general.architecture":"llama","llama.context_length":-5},"parameters":"num_ctx -1"}`)
				default:
					http.NotFound(w, r)
				}
			}))
			defer ts.Close()
			w, err := windowOf(t, ts.URL+"/v1", "m", key)
			if name == "huge" || name == "string" || name == "negative" || name == "fraction" || name == "absurd" ||
				name == "not a list" || name == "not json" || name == "null fields" {
				// /api/show answered (as an Ollama with nothing usable): the
				// default is assumed, never a hostile number.
				if err == nil && (w.Tokens != llm.OllamaDefaultContext) {
					t.Fatalf("window = %+v from a hostile server", w)
				}
			}
			if err != nil && strings.Contains(err.Error(), key) {
				t.Fatalf("the key is in the error: %v", err)
			}
			if !sawKey.Load() {
				t.Error("the key was not sent to the endpoint")
			}
		})
	}
}

func TestContextOverflowShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		window int
		ok     bool
	}{
		{"OpenAI", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 8192, true},
		{"OpenAI code only", 400, `{"error":{"message":"Input too long.","type":"invalid_request_error","code":"context_length_exceeded"}}`, 0, true},
		{"vLLM", 400, `{"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, 16384, true},
		{"vLLM V1", 400, `{"object":"error","message":"Prompt length of 5016 is longer than the maximum model length of 4096.","type":"BadRequestError","code":400}`, 4096, true},
		{"vLLM multimodal", 400, `{"message":"The prompt (total length 25938) is too long to fit into the model (context length 4096)."}`, 4096, true},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, 8192, true},
		{"llama.cpp as 500", 500, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`, 256, true},
		{"Anthropic via OpenRouter", 400, `{"error":{"message":"prompt is too long: 208310 tokens > 200000 maximum","code":400}}`, 200000, true},
		{"Mistral", 400, `{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error"}`, 32768, true},
		{"Gemini", 400, `[{"error":{"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}}]`, 1048576, true}, // a list: read as text
		{"Gemini object", 400, `{"error":{"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","code":400}}`, 1048576, true},
		{"LM Studio", 400, `{"error":"Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough."}`, 4096, true},
		{"LM Studio MLX", 400, `{"error":"Context size has been exceeded."}`, 0, true},
		{"output cap is not an overflow", 400, `{"error":{"message":"max_tokens is too large: 10000. This model supports at most 4096 completion tokens, whereas you provided 10000.","type":"invalid_request_error","param":"max_tokens","code":null}}`, 0, false},
		{"rate limit", 429, `{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}`, 0, false},
		{"unknown model", 404, `{"error":{"message":"The model does not exist","code":"model_not_found"}}`, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer ts.Close()
			c, err := llm.New(llm.Options{Model: "m", BaseURL: ts.URL + "/v1", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}, nil)
			window, ok := llm.ContextOverflow(err)
			if ok != tc.ok || window != tc.window {
				t.Fatalf("ContextOverflow(%v) = %d, %v; want %d, %v", err, window, ok, tc.window, tc.ok)
			}
			if errors.Is(err, llm.ErrContextOverflow) != tc.ok {
				t.Errorf("errors.Is(ErrContextOverflow) = %v", !tc.ok)
			}
			var api *llm.APIError
			if tc.ok && errors.As(err, &api) && api.Retryable() {
				t.Error("an overflow is retryable; it would only be refused again")
			}
		})
	}
}

// TestOverflowNotRetried: llama.cpp's overflow as a 500 is answered once,
// not retried as a server error.
func TestOverflowNotRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.ServeWindow(llmtest.Window{Tokens: 50, Enforce: true, Overflow: llmtest.OverflowLlamaCpp})
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Content: strings.Repeat("word ", 200)}}}, nil)
	if w, ok := llm.ContextOverflow(err); !ok || w != 50 {
		t.Fatalf("err = %v (window %d, overflow %v)", err, w, ok)
	}
	if n := len(srv.PromptTokens()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// TestOutputCapField: OpenAI's API gets max_completion_tokens, every other
// endpoint max_tokens, and a cap of 0 sends neither.
func TestOutputCapField(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "a"}, llmtest.Reply{Content: "b"})
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.User, Content: "hi"}}
	if _, err := c.Stream(context.Background(), llm.Request{Messages: msgs, MaxOutputTokens: 1234}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), llm.Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if body := string(reqs[0].Body); !strings.Contains(body, `"max_tokens":1234`) || strings.Contains(body, "max_completion_tokens") {
		t.Errorf("a local endpoint's request: %s", body)
	}
	if body := string(reqs[1].Body); strings.Contains(body, "max_tokens") || strings.Contains(body, "max_completion_tokens") {
		t.Errorf("a request without a cap: %s", body)
	}

	// OpenAI's own API, reached through a transport that answers for it on
	// loopback: the request's body is what counts.
	var body string
	openai := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != "api.openai.com" {
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = string(b)
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(rec, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		return rec.Result(), nil
	})}
	oc, err := llm.New(llm.Options{Model: "o3", APIKey: "sk-test", HTTPClient: openai})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Stream(context.Background(), llm.Request{Messages: msgs, MaxOutputTokens: 4321}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, `"max_completion_tokens":4321`) || strings.Contains(body, `"max_tokens"`) {
		t.Errorf("OpenAI's request: %s", body)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
