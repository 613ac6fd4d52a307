package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Window is what an endpoint says of a model's context window.
type Window struct {
	// Tokens is the window that applies to this endpoint's requests.
	Tokens int
	// Source names the answer that said it, e.g. "GET /v1/models
	// max_model_len" or "Ollama /api/show parameters num_ctx".
	Source string
	// Max is the model's own window when the server runs it with a smaller
	// one (Ollama's num_ctx); 0 otherwise.
	Max int
	// Warning, when set, is for the user: the server gives the model less
	// than it can read, and how to give it more.
	Warning string
	// NoTools is set when the endpoint lists the model without tool
	// support: OpenRouter's supported_parameters without "tools", Ollama's
	// capabilities without "tools".
	NoTools bool
	// NoVision is set when the endpoint lists the model as reading no
	// images (see listsNoVision).
	NoVision bool
}

// listsNoTools reports whether a list of what a model supports is there
// and lacks "tools".
func listsNoTools(raw json.RawMessage) bool {
	var list []string
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return false
	}
	for _, s := range list {
		if s == "tools" {
			return false
		}
	}
	return true
}

// ErrWindowUnknown is [Client.ContextWindow]'s error when no answer of the
// endpoint states the model's window.
var ErrWindowUnknown = errors.New("the endpoint does not state the model's context window")

// The bounds of what window discovery reads: a hostile or broken endpoint
// can send an endless body, or a number no model has.
const (
	maxListBody  = 8 << 20 // GET /models: OpenRouter's lists hundreds of models, about 1 MB
	maxProbeBody = 4 << 20 // one model's answer (Ollama's /api/show carries the model's metadata)
	maxWindow    = 1 << 30 // tokens; a larger "window" is a broken answer
)

// OllamaDefaultContext is the window Ollama runs a model with when neither
// its Modelfile (PARAMETER num_ctx) nor the server (OLLAMA_CONTEXT_LENGTH)
// sets one: 4096 tokens on most machines (2048 before 0.6; since 0.15.5 it
// grows with the GPU's memory, to 32k from 24 GiB and 256k from 48 GiB).
// The smallest current default is assumed until the model is loaded and
// /api/ps says what it got.
const OllamaDefaultContext = 4096

// ContextWindow asks the endpoint for the model's context window, in the
// shapes OpenAI-compatible servers answer it:
//
//   - GET /models (and /models/{id}): context_length (OpenRouter, Together
//     and others; OpenRouter's top_provider.context_length when smaller),
//     max_model_len (vLLM), context_window (Groq), max_context_length
//     (Mistral, LM Studio), loaded_context_length (LM Studio, loaded);
//   - llama.cpp's server: GET /props default_generation_settings.n_ctx, or
//     its top-level n_ctx;
//   - Ollama: POST /api/show {"model":…}, model_info["<arch>.context_length"]
//     (the model's own) and the num_ctx of parameters, and GET /api/ps
//     context_length of the loaded model: the window Ollama really applies
//     is num_ctx, so when it is smaller than the model's the Window carries
//     a Warning that says how to raise it;
//   - LM Studio: GET /api/v0/models/{id}.
//
// The native APIs (llama.cpp, Ollama, LM Studio) are asked together, once
// GET /models has not said, in one round trip, at the base URL
// without its /v1. Each body read is bounded, and the call is bounded by
// ctx only: give it a short deadline. It fails with [ErrWindowUnknown]
// when no answer states the window; an error never carries the API key.
func (c *Client) ContextWindow(ctx context.Context) (Window, error) {
	base := strings.TrimSuffix(c.opts.BaseURL, "/")
	root := nativeRoot(base)
	model := c.opts.Model
	var failures []string
	fail := func(what string, err error) {
		if err != nil && ctx.Err() == nil {
			failures = append(failures, what+": "+err.Error())
		}
	}

	body, err := c.probe(ctx, http.MethodGet, base+"/models", nil, maxListBody)
	if err == nil {
		if w, ok := windowInList(body, model); ok {
			w.Source = "GET " + pathOf(base) + "/models " + w.Source
			return w, nil
		}
	}
	fail("GET /models", err)
	if ctx.Err() != nil {
		return Window{}, c.windowErr(ctx.Err(), nil)
	}
	probes := []struct {
		name string
		try  func() (Window, bool, error)
	}{
		{"GET /models/{id}", func() (Window, bool, error) {
			body, err := c.probe(ctx, http.MethodGet, base+"/models/"+url.PathEscape(model), nil, maxProbeBody)
			if err != nil {
				return Window{}, false, err
			}
			w, ok := windowInObject(body)
			w.Source = "GET " + pathOf(base) + "/models/{id} " + w.Source
			return w, ok, nil
		}},
		{"llama.cpp GET /props", func() (Window, bool, error) {
			body, err := c.probe(ctx, http.MethodGet, root+"/props", nil, maxProbeBody)
			if err != nil {
				return Window{}, false, err
			}
			return llamaCppWindow(body)
		}},
		{"Ollama POST /api/show", func() (Window, bool, error) { return c.ollamaWindow(ctx, root, model) }},
		{"LM Studio GET /api/v0/models/{id}", func() (Window, bool, error) {
			body, err := c.probe(ctx, http.MethodGet, root+"/api/v0/models/"+url.PathEscape(model), nil, maxProbeBody)
			if err != nil {
				return Window{}, false, err
			}
			w, ok := windowInObject(body)
			w.Source = "LM Studio GET /api/v0/models/{id} " + w.Source
			return w, ok, nil
		}},
	}
	// The servers' own APIs are asked at once (one round trip instead of
	// four on the start's path); the first in this order that answers wins.
	type answer struct {
		w   Window
		ok  bool
		err error
	}
	answers := make([]answer, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			w, ok, err := p.try()
			answers[i] = answer{w, ok, err}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return Window{}, c.windowErr(ctx.Err(), nil)
	}
	for i, p := range probes {
		if answers[i].ok {
			return answers[i].w, nil
		}
		fail(p.name, answers[i].err)
	}
	return Window{}, c.windowErr(ErrWindowUnknown, failures)
}

func (c *Client) windowErr(err error, failures []string) error {
	if len(failures) == 0 {
		return fmt.Errorf("context window of %s: %w", c.opts.Model, err)
	}
	return fmt.Errorf("context window of %s: %w (%s)", c.opts.Model, err, redact(strings.Join(failures, "; "), c.opts.APIKey))
}

// nativeRoot is the server's root for its native API: base without a
// trailing /v1 (Ollama's, llama.cpp's and LM Studio's OpenAI endpoints all
// live under /v1).
func nativeRoot(base string) string {
	return strings.TrimSuffix(base, "/v1")
}

// pathOf is the path of a base URL, for a Source ("/v1"); never its host,
// user or query.
func pathOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// errBodyTooLarge is a probe's answer over its bound.
var errBodyTooLarge = errors.New("the answer is larger than any real one")

// probe makes one request of window discovery and returns its body, read
// up to limit bytes (a longer body is an error, never half-parsed).
func (c *Client) probe(ctx context.Context, method, u string, body any, limit int64) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, errors.New("bad URL") // the URL may hold a key: not quoted
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return nil, errors.New(redact(err.Error(), c.opts.APIKey))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, errors.New(redact(err.Error(), c.opts.APIKey))
	}
	if int64(len(b)) > limit {
		return nil, errBodyTooLarge
	}
	return b, nil
}

// tokens reads a window from a JSON value: a whole positive number within
// maxWindow; anything else (a string, a fraction, a negative) is no answer.
func tokens(raw json.RawMessage) (int, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 1 || f > maxWindow || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// objectWindow reads the window fields of one model object, in the order
// of what applies most: a loaded context (LM Studio) before the model's
// maximum; OpenRouter's top provider's when it is smaller than the model's.
func objectWindow(m map[string]json.RawMessage) (w Window, ok bool) {
	defer func() { w.NoTools, w.NoVision = listsNoTools(m["supported_parameters"]), listsNoVision(m) }()
	for _, f := range [...]string{"loaded_context_length", "max_model_len", "context_length", "context_window", "max_context_length", "max_input_tokens"} {
		n, ok := tokens(m[f])
		if !ok {
			continue
		}
		src := f
		if f == "context_length" {
			var top map[string]json.RawMessage
			if json.Unmarshal(m["top_provider"], &top) == nil {
				if t, ok := tokens(top["context_length"]); ok && t < n {
					n, src = t, "top_provider.context_length"
				}
			}
		}
		return Window{Tokens: n, Source: src}, true
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(m["top_provider"], &top) == nil {
		if t, ok := tokens(top["context_length"]); ok {
			return Window{Tokens: t, Source: "top_provider.context_length"}, true
		}
	}
	return Window{}, false
}

// windowInObject reads a single model's answer ({...} or {"data":{...}}).
func windowInObject(body []byte) (Window, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return Window{}, false
	}
	if w, ok := objectWindow(m); ok {
		return w, true
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(m["data"], &inner) == nil {
		return objectWindow(inner)
	}
	return Window{}, false
}

// windowInList finds model in a /models list and reads its window. A list
// of one model stands for it whatever its name: such servers (llama.cpp,
// llamafile, vLLM with one model) answer to any.
func windowInList(body []byte, model string) (Window, bool) {
	var list struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return Window{}, false
	}
	idOf := func(m map[string]json.RawMessage) string {
		var id string
		_ = json.Unmarshal(m["id"], &id)
		return id
	}
	for _, m := range list.Data {
		if id := idOf(m); id == model || id == model+":latest" || id+":latest" == model {
			return objectWindow(m)
		}
	}
	if len(list.Data) == 1 {
		return objectWindow(list.Data[0])
	}
	return Window{}, false
}

// llamaCppWindow reads llama.cpp's /props: the n_ctx of its default
// generation settings (the slot's context), or a top-level n_ctx.
func llamaCppWindow(body []byte) (Window, bool, error) {
	var props struct {
		Settings map[string]json.RawMessage `json:"default_generation_settings"`
		NCtx     json.RawMessage            `json:"n_ctx"`
	}
	if err := json.Unmarshal(body, &props); err != nil {
		return Window{}, false, errors.New("not llama.cpp's /props")
	}
	if n, ok := tokens(props.Settings["n_ctx"]); ok {
		return Window{Tokens: n, Source: "llama.cpp GET /props default_generation_settings.n_ctx"}, true, nil
	}
	if n, ok := tokens(props.NCtx); ok {
		return Window{Tokens: n, Source: "llama.cpp GET /props n_ctx"}, true, nil
	}
	return Window{}, false, nil
}

// ollamaWindow asks Ollama's native API: the model's own window from
// /api/show, and the window it runs with: /api/ps's context_length when the
// model is loaded, else the num_ctx of its parameters, else Ollama's
// default ([OllamaDefaultContext]).
func (c *Client) ollamaWindow(ctx context.Context, root, model string) (Window, bool, error) {
	body, err := c.probe(ctx, http.MethodPost, root+"/api/show", map[string]string{"model": model}, maxProbeBody)
	if err != nil {
		return Window{}, false, err
	}
	var show struct {
		Parameters   json.RawMessage            `json:"parameters"`
		ModelInfo    map[string]json.RawMessage `json:"model_info"`
		Capabilities json.RawMessage            `json:"capabilities"`
	}
	if err := json.Unmarshal(body, &show); err != nil || show.ModelInfo == nil && len(show.Parameters) == 0 {
		return Window{}, false, errors.New("not Ollama's /api/show")
	}
	modelMax := 0
	var arch string
	if json.Unmarshal(show.ModelInfo["general.architecture"], &arch) == nil && arch != "" {
		modelMax, _ = tokens(show.ModelInfo[arch+".context_length"])
	}
	if modelMax == 0 {
		for k, v := range show.ModelInfo { // an architecture not named
			if strings.HasSuffix(k, ".context_length") {
				if n, ok := tokens(v); ok {
					modelMax = n
					break
				}
			}
		}
	}
	w := Window{Max: modelMax, NoTools: listsNoTools(show.Capabilities), NoVision: ollamaNoVision(show.Capabilities)}
	if n := c.ollamaLoaded(ctx, root, model); n > 0 {
		w.Tokens, w.Source = n, "Ollama GET /api/ps context_length (the model as loaded)"
	} else if n := numCtx(show.Parameters); n > 0 {
		w.Tokens, w.Source = n, "Ollama POST /api/show parameters num_ctx"
	} else {
		w.Tokens, w.Source = OllamaDefaultContext, fmt.Sprintf("Ollama's default num_ctx (assumed %d: neither the model's parameters nor a loaded model say)", OllamaDefaultContext)
	}
	if modelMax > 0 && modelMax <= w.Tokens {
		w.Max = 0 // the model gets all it can read
		return w, true, nil
	}
	raise := 32768
	if modelMax > 0 {
		raise = min(modelMax, raise)
	}
	if raise <= w.Tokens {
		raise = modelMax
	}
	can := "more"
	if modelMax > 0 {
		can = strconv.Itoa(modelMax)
	}
	w.Warning = fmt.Sprintf("Ollama runs %s with a context window of %d tokens (%s) though the model can read %s, so Zero keeps every prompt within %d tokens; "+
		"to give it more, start the server with OLLAMA_CONTEXT_LENGTH=%d (OLLAMA_CONTEXT_LENGTH=%d ollama serve), "+
		"or create a model whose Modelfile has PARAMETER num_ctx %d (ollama create)",
		model, w.Tokens, w.Source, can, w.Tokens, raise, raise, raise)
	return w, true, nil
}

// ollamaLoaded is the context_length /api/ps reports for model, 0 when it
// is not loaded or the server does not say.
func (c *Client) ollamaLoaded(ctx context.Context, root, model string) int {
	body, err := c.probe(ctx, http.MethodGet, root+"/api/ps", nil, maxProbeBody)
	if err != nil {
		return 0
	}
	var ps struct {
		Models []map[string]json.RawMessage `json:"models"`
	}
	if json.Unmarshal(body, &ps) != nil {
		return 0
	}
	for _, m := range ps.Models {
		for _, f := range [...]string{"model", "name"} {
			var name string
			if json.Unmarshal(m[f], &name) == nil && (name == model || name == model+":latest") {
				if n, ok := tokens(m["context_length"]); ok {
					return n
				}
			}
		}
	}
	return 0
}

// numCtx reads num_ctx from Ollama's parameters, the Modelfile's
// PARAMETER lines as text ("num_ctx 8192\nstop …").
func numCtx(raw json.RawMessage) int {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, ok := tokens(json.RawMessage(f[1])); ok {
				return n
			}
		}
	}
	return 0
}
