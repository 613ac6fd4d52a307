package llm

import (
	"net/url"
	"strings"
)

// capOutput puts the request's cap on the answer's tokens into p, under the
// name the endpoint takes: OpenAI's own API (and Azure's) refuses
// max_tokens for its reasoning models and wants max_completion_tokens,
// while Ollama, LM Studio, llama.cpp's server and many proxies know only
// max_tokens. A cap of 0 (or less) sends neither.
func (c *Client) capOutput(w *wireRequest, n int) {
	if n <= 0 {
		return
	}
	if completionTokensField(c.opts.BaseURL) {
		w.MaxCompletionTokens = n
		return
	}
	w.MaxTokens = n
}

// completionTokensField reports whether the endpoint at base is OpenAI's
// (or Azure OpenAI's), which take max_completion_tokens.
func completionTokensField(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	return host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com")
}
