package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"

	"github.com/zeroagent/zero/llm"
)

// The server shapes a [Window] is answered in.
const (
	ShapeAll        = ""           // every answer below at once (context_length and max_model_len in /v1/models first)
	ShapeOpenRouter = "openrouter" // /v1/models context_length (ModelMax) and top_provider.context_length (Tokens)
	ShapeVLLM       = "vllm"       // /v1/models max_model_len
	ShapeLlamaCpp   = "llamacpp"   // /props default_generation_settings.n_ctx (/v1/models meta.n_ctx_train is ModelMax)
	ShapeLlamaCppV2 = "llamacpp2"  // /props with a top-level n_ctx only
	ShapeOllama     = "ollama"     // /api/show (model_info llama.context_length = ModelMax, parameters num_ctx = NumCtx), /api/ps (Loaded)
	ShapeLMStudio   = "lmstudio"   // /api/v0/models/{id} max_context_length (ModelMax), loaded_context_length (Loaded)
)

// The flavours of a refused over-long prompt (Window.Overflow).
const (
	OverflowOpenAI   = ""         // 400, code context_length_exceeded, "This model's maximum context length is N tokens…"
	OverflowVLLM     = "vllm"     // 400, {"object":"error","message":"This model's maximum context length is N tokens. However, you requested M tokens (P in the messages, C in the completion)…"}
	OverflowLlamaCpp = "llamacpp" // 400, type exceed_context_size_error with n_prompt_tokens and n_ctx
	OverflowNoWindow = "nowindow" // 400, "prompt is too long" with no window stated
)

// DefaultRatio is how many tokens the server counts per cl100k token when
// it counts a prompt: more, as a Llama-family tokenizer does, so that a
// client counting with cl100k alone undercounts.
const DefaultRatio = 1.15

// Window is what a [Server] says of its model's context window, and
// whether it refuses a prompt over it.
type Window struct {
	// Tokens is the window that applies.
	Tokens int
	// Shape is the server whose answers carry it (Shape* constants).
	Shape string
	// ModelMax is the model's own window where the shape tells it apart
	// (OpenRouter's context_length, Ollama's model_info, LM Studio's
	// max_context_length); 0 = Tokens.
	ModelMax int
	// NumCtx is Ollama's parameters num_ctx (0: none); Loaded the
	// context_length of Ollama's /api/ps (0: the model is not loaded) and
	// LM Studio's loaded_context_length.
	NumCtx, Loaded int
	// Enforce refuses a chat request whose prompt is over Tokens (with
	// OverflowOpenAI and OverflowVLLM, whose prompt and max_tokens together
	// are, as those servers count), in the Overflow flavour.
	Enforce  bool
	Overflow string
	// Ratio is the server's tokens per cl100k token (0: DefaultRatio).
	// With a window set, every chat request is counted (see
	// [Server.PromptTokens]) and its usage.prompt_tokens is that count.
	Ratio float64
	// NoTools lists the model without tool support where the shape says
	// it: OpenRouter's supported_parameters, Ollama's capabilities.
	NoTools bool
	// NoVision lists the model as text only where the shape says what it
	// reads: OpenRouter's architecture.input_modalities, Ollama's
	// capabilities ("vision"), LM Studio's type ("vlm").
	NoVision bool
}

// windowState is a Server's Window and what it counted.
type windowState struct {
	mu      sync.Mutex
	w       *Window
	prompts []int // each chat request's prompt tokens, as counted
	refused int
}

// SetWindow makes the server state a context window of n tokens in every
// shape it knows (see [ShapeAll]), without refusing anything.
func (s *Server) SetWindow(n int) { s.ServeWindow(Window{Tokens: n}) }

// ServeWindow sets what the server says of its window, and whether it
// refuses prompts over it.
func (s *Server) ServeWindow(w Window) {
	if w.Ratio == 0 {
		w.Ratio = DefaultRatio
	}
	if w.ModelMax == 0 {
		w.ModelMax = w.Tokens
	}
	s.win.mu.Lock()
	defer s.win.mu.Unlock()
	s.win.w = &w
}

// PromptTokens returns each chat request's prompt tokens as the server
// counted them (with a window set), in arrival order, refused ones too.
func (s *Server) PromptTokens() []int {
	s.WaitIdle()
	s.win.mu.Lock()
	defer s.win.mu.Unlock()
	return append([]int(nil), s.win.prompts...)
}

// Refused is how many chat requests were refused as over the window.
func (s *Server) Refused() int {
	s.win.mu.Lock()
	defer s.win.mu.Unlock()
	return s.win.refused
}

// CountPrompt is how the server counts a prompt: cl100k times ratio,
// rounded up, and 4 tokens a message (the chat template's).
func CountPrompt(msgs []llm.Message, ratio float64) int {
	n := 0
	for _, m := range msgs {
		n += int(math.Ceil(float64(llm.CountTokens(m.Content))*ratio)) + 4
	}
	return n + 3
}

// window answers what the window settings make the server answer; it
// reports whether it wrote the response. A chat request it lets through is
// counted and goes on with its body intact.
func (s *Server) window(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	s.win.mu.Lock()
	win := s.win.w
	s.win.mu.Unlock()
	if win == nil {
		return w, false
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	shape := win.Shape
	is := func(shapes ...string) bool {
		return shape == ShapeAll || contains(shapes, shape)
	}
	switch {
	case r.Method == http.MethodPost && path == "/chat/completions":
		return s.countChat(w, r, win)
	case r.Method == http.MethodGet && path == "/models" && r.URL.Path == "/v1/models":
		m := map[string]any{"id": ModelName, "object": "model", "created": 0, "owned_by": "llmtest"}
		switch {
		case shape == ShapeAll:
			m["context_length"], m["max_model_len"] = win.Tokens, win.Tokens
		case shape == ShapeOpenRouter:
			m["context_length"], m["top_provider"] = win.ModelMax, map[string]any{"context_length": win.Tokens, "is_moderated": false}
			m["supported_parameters"] = []string{"max_tokens", "temperature", "tools", "tool_choice"}
			if win.NoTools {
				m["supported_parameters"] = []string{"max_tokens", "temperature", "stop"}
			}
			m["architecture"] = map[string]any{"modality": "text+image->text", "input_modalities": []string{"text", "image"}, "output_modalities": []string{"text"}}
			if win.NoVision {
				m["architecture"] = map[string]any{"modality": "text->text", "input_modalities": []string{"text"}, "output_modalities": []string{"text"}}
			}
		case shape == ShapeVLLM:
			m["max_model_len"] = win.Tokens
		case shape == ShapeLlamaCpp || shape == ShapeLlamaCppV2:
			m["meta"] = map[string]any{"n_ctx_train": win.ModelMax, "n_vocab": 128256}
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{m}})
	case r.Method == http.MethodGet && r.URL.Path == "/props" && is(ShapeLlamaCpp, ShapeLlamaCppV2):
		if shape == ShapeLlamaCppV2 {
			writeJSON(w, http.StatusOK, map[string]any{"n_ctx": win.Tokens, "total_slots": 1})
		} else {
			writeJSON(w, http.StatusOK, map[string]any{"default_generation_settings": map[string]any{"n_ctx": win.Tokens, "n_predict": -1}, "total_slots": 1})
		}
	case r.Method == http.MethodPost && r.URL.Path == "/api/show" && is(ShapeOllama):
		params := "stop \"<|eot_id|>\""
		numCtx := win.NumCtx
		if shape == ShapeAll {
			numCtx = win.Tokens
		}
		if numCtx > 0 {
			params = fmt.Sprintf("num_ctx                        %d\n%s", numCtx, params)
		}
		capabilities := []string{"completion", "tools"}
		if win.NoTools {
			capabilities = []string{"completion"}
		}
		if !win.NoVision {
			capabilities = append(capabilities, "vision")
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"parameters":   params,
			"capabilities": capabilities,
			"model_info":   map[string]any{"general.architecture": "llama", "llama.context_length": win.ModelMax, "llama.embedding_length": 4096},
			"details":      map[string]any{"family": "llama"},
		})
	case r.Method == http.MethodGet && r.URL.Path == "/api/ps" && is(ShapeOllama):
		models := []any{}
		if win.Loaded > 0 {
			models = append(models, map[string]any{"name": ModelName + ":latest", "model": ModelName + ":latest", "context_length": win.Loaded})
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": models})
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v0/models/") && is(ShapeLMStudio):
		m := map[string]any{"id": strings.TrimPrefix(r.URL.Path, "/api/v0/models/"), "object": "model", "type": "vlm", "max_context_length": win.ModelMax}
		if win.NoVision {
			m["type"] = "llm"
		}
		if win.Loaded > 0 {
			m["state"], m["loaded_context_length"] = "loaded", win.Loaded
		}
		writeJSON(w, http.StatusOK, m)
	default:
		return w, false
	}
	return w, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// countChat counts a chat request's prompt, refuses it when the window is
// enforced and it is over, and else lets it through with a writer that
// reports the count as usage.prompt_tokens.
func (s *Server) countChat(w http.ResponseWriter, r *http.Request, win *Window) (http.ResponseWriter, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return w, false
	}
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
		Tools               json.RawMessage `json:"tools"`
		MaxTokens           int             `json:"max_tokens"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
	}
	if json.Unmarshal(body, &req) != nil {
		return w, false
	}
	// The functions and the calls count as the chat template writes them
	// into the prompt: as their JSON.
	msgs := make([]llm.Message, 0, len(req.Messages)+1)
	for _, m := range req.Messages {
		text := contentText(m.Content)
		if len(m.ToolCalls) > 0 {
			text += string(m.ToolCalls)
		}
		msgs = append(msgs, llm.Message{Role: llm.Role(m.Role), Content: text})
	}
	if len(req.Tools) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.System, Content: string(req.Tools)})
	}
	prompt := CountPrompt(msgs, win.Ratio)
	completion := max(req.MaxTokens, req.MaxCompletionTokens)
	over := prompt > win.Tokens
	if win.Overflow == OverflowOpenAI || win.Overflow == OverflowVLLM {
		over = prompt+completion > win.Tokens
	}
	s.win.mu.Lock()
	s.win.prompts = append(s.win.prompts, prompt)
	if win.Enforce && over {
		s.win.refused++
	}
	s.win.mu.Unlock()
	if !win.Enforce || !over {
		return &usageWriter{ResponseWriter: w, prompt: prompt}, false
	}
	switch win.Overflow {
	case OverflowVLLM:
		writeJSON(w, http.StatusBadRequest, map[string]any{"object": "error", "type": "BadRequestError", "param": nil, "code": 400,
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				win.Tokens, prompt+completion, prompt, completion)})
	case OverflowLlamaCpp:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error",
			"message":         "the request exceeds the available context size, try increasing it",
			"n_prompt_tokens": prompt, "n_ctx": win.Tokens}})
	case OverflowNoWindow:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "prompt is too long"}})
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", win.Tokens, prompt+completion)}})
	}
	return w, true
}

// usageWriter reports the server's own count of the prompt as
// usage.prompt_tokens (and total_tokens) in the answer's usage.
type usageWriter struct {
	http.ResponseWriter
	prompt int
}

// Unwrap lets http.ResponseController flush the writer beneath.
func (u *usageWriter) Unwrap() http.ResponseWriter { return u.ResponseWriter }

func (u *usageWriter) Write(b []byte) (int, error) {
	if !bytes.Contains(b, []byte(`"usage":{`)) {
		return u.ResponseWriter.Write(b)
	}
	text := string(b)
	prefix, suffix := "", ""
	if strings.HasPrefix(text, "data: ") {
		prefix, text = "data: ", strings.TrimPrefix(text, "data: ")
	}
	trimmed := strings.TrimRight(text, "\n")
	suffix, text = text[len(trimmed):], trimmed
	var v map[string]any
	if json.Unmarshal([]byte(text), &v) != nil {
		return u.ResponseWriter.Write(b)
	}
	if usage, ok := v["usage"].(map[string]any); ok {
		completion, _ := usage["completion_tokens"].(float64)
		usage["prompt_tokens"], usage["total_tokens"] = u.prompt, u.prompt+int(completion)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return u.ResponseWriter.Write(b)
	}
	if _, err := io.WriteString(u.ResponseWriter, prefix+string(out)+suffix); err != nil {
		return 0, err
	}
	return len(b), nil
}
