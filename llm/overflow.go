package llm

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// ErrContextOverflow matches the error of a request the server refused
// because its prompt (with the room asked for the answer) does not fit in
// the model's context window; see [ContextOverflow].
var ErrContextOverflow = errors.New("the request does not fit in the model's context window")

// ContextOverflow reports whether err is a server's "context length
// exceeded" answer, and the window in tokens when the answer states it (0
// when it does not). It knows the shapes of OpenAI (code
// context_length_exceeded; "This model's maximum context length is N
// tokens…"), vLLM ("…maximum context length is N tokens. However, you
// requested M tokens…", "…is longer than the maximum model length of N",
// "…too long to fit into the model (context length N)"), llama.cpp's server
// (type exceed_context_size_error with n_ctx; "the request exceeds the
// available context size"), LM Studio ("…loaded with context length of only
// N tokens", "Context size has been exceeded"), OpenRouter and Anthropic
// ("prompt is too long: M tokens > N maximum"), Mistral ("…too large for
// model with N maximum context length"), Gemini ("The input token count (M)
// exceeds the maximum number of tokens allowed (N)") and DeepSeek, Groq and
// Azure (OpenAI's words or code).
func ContextOverflow(err error) (window int, ok bool) {
	var api *APIError
	if !errors.As(err, &api) {
		return 0, false
	}
	return api.overflow()
}

// Unwrap makes an overflow answer match [ErrContextOverflow].
func (e *APIError) Unwrap() error {
	if _, ok := e.overflow(); ok {
		return ErrContextOverflow
	}
	return nil
}

func (e *APIError) overflow() (int, bool) {
	if e.StatusCode < 400 {
		return 0, false
	}
	code, typ := strings.ToLower(e.Code), strings.ToLower(e.Type)
	hit := code == "context_length_exceeded" || typ == "exceed_context_size_error" ||
		code == "exceed_context_size_error" || typ == "context_length_exceeded"
	msg := strings.ToLower(e.Message)
	if !hit {
		for _, p := range overflowPhrases {
			if strings.Contains(msg, p) {
				hit = true
				break
			}
		}
	}
	if !hit {
		return 0, false
	}
	if e.Window > 0 {
		return e.Window, true
	}
	for _, re := range windowStated {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n <= maxWindow {
				return n, true
			}
		}
	}
	return 0, true
}

// overflowPhrases are the words of a context overflow, lower case. None of
// them is said of a limit on the answer alone ("max_tokens is too large").
var overflowPhrases = []string{
	"maximum context length",               // OpenAI, vLLM, DeepSeek, OpenRouter, Mistral
	"context_length_exceeded",              // a code quoted in the message
	"maximum model length",                 // vLLM V1
	"too long to fit into the model",       // vLLM
	"exceeds the available context size",   // llama.cpp
	"exceed_context_size_error",            //
	"exceed context window",                // llama-cpp-python
	"context size has been exceeded",       // LM Studio (MLX)
	"context length of only",               // LM Studio (GGUF)
	"context the overflows",                // LM Studio's own words
	"prompt is too long",                   // Anthropic, OpenRouter
	"input is too long",                    // Bedrock through a proxy
	"exceeds the maximum number of tokens", // Gemini
	"context window exceeded",              //
	"exceeds the context window",           //
	"exceeds the context length",           //
	"exceeds context length",               // Ollama (when it refuses instead of truncating)
	"context length exceeded",              //
	"reduce the length of the messages",    // OpenAI, Groq
}

// windowStated finds the window in an overflow message, lower case.
var windowStated = []*regexp.Regexp{
	regexp.MustCompile(`maximum context length is (\d+)`),
	regexp.MustCompile(`maximum model length of (\d+)`),
	regexp.MustCompile(`\(context length (\d+)\)`),
	regexp.MustCompile(`context length of only (\d+)`),
	regexp.MustCompile(`tokens? > (\d+) maximum`),
	regexp.MustCompile(`(\d+) maximum context length`),
	regexp.MustCompile(`maximum number of tokens allowed \((\d+)\)`),
	regexp.MustCompile(`exceed context window of (\d+)`),
	regexp.MustCompile(`context (?:length|size|window) (?:is|of) (\d+)`),
}

// errorFields reads what an error body says besides its message: OpenAI's
// error.code and error.type, and llama.cpp's n_ctx (its
// exceed_context_size_error carries the window). A code that is a number
// (llama.cpp's repeats the status) is not kept.
func errorFields(body []byte, key string) (code, typ string, window int) {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", "", 0
	}
	var inner struct {
		Code json.RawMessage `json:"code"`
		Type json.RawMessage `json:"type"`
		NCtx json.RawMessage `json:"n_ctx"`
	}
	if json.Unmarshal(v.Error, &inner) != nil {
		return "", "", 0
	}
	_ = json.Unmarshal(inner.Code, &code)
	_ = json.Unmarshal(inner.Type, &typ)
	window, _ = tokens(inner.NCtx)
	return clip(redact(code, key)), clip(redact(typ, key)), window
}

// clip bounds a code or type: a hostile server's 1 MB "code" is not kept.
func clip(s string) string {
	if len(s) > 100 {
		return ""
	}
	return s
}
