package llm

import (
	"strings"
	"testing"
)

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"openai", `{"error":{"message":"Rate limit reached","type":"requests"}}`, 429, "Rate limit reached"},
		{"ollama", `{"error":"model \"llama9\" not found, try pulling it first"}`, 404, `model "llama9" not found, try pulling it first`},
		{"top-level message", `{"message":"nope"}`, 400, "nope"},
		{"fastapi detail string", `{"detail":"Not Found"}`, 404, "Not Found"},
		{"fastapi detail list", `{"detail":[{"loc":["body"]}]}`, 422, "Unprocessable Entity"},
		{"plain text", "upstream timed out\n", 504, "upstream timed out"},
		{"html", "<html><body>Bad Gateway</body></html>", 502, "Bad Gateway"},
		{"empty", "", 500, "Internal Server Error"},
		{"long", `{"error":{"message":"` + strings.Repeat("x", 600) + `"}}`, 400, strings.Repeat("x", 500) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := errorMessage([]byte(tt.body), tt.status); got != tt.want {
				t.Errorf("errorMessage(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, key, want string }{
		{"key abc123secret here", "abc123secret", "key [redacted] here"},
		{"Incorrect API key provided: sk-proj-ab***wxyz.", "", "Incorrect API key provided: sk-[redacted]"},
		{"nothing to hide", "k3y", "nothing to hide"},
	}
	for _, tt := range tests {
		if got := redact(tt.in, tt.key); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAPIErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *APIError
		want string
	}{
		{&APIError{StatusCode: 401, Message: "bad key"}, "model API error 401: bad key (the API key was rejected; check OPENAI_API_KEY)"},
		{&APIError{StatusCode: 401, Message: "bad key", NoKey: true}, "model API error 401: bad key (no API key was sent; set OPENAI_API_KEY)"},
		{&APIError{StatusCode: 500, Message: "oops"}, "model API error 500: oops"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
