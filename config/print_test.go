package config

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrint(t *testing.T) {
	t.Parallel()
	src, uf, pf := layout(t,
		"models:\n  chat:\n    model: gpt-4.1\n  utility:\n    api_key_env: UTIL_KEY\nsandbox:\n  memory: 4g\n  user: \"1000\"\n",
		"profile: developer\napproval: \"ask\"\n")
	src.Getenv = env("OPENAI_API_KEY", "sk-secret", "UTIL_KEY", "", "ZERO_SANDBOX", "docker")
	src.Flags = map[string]string{"models.chat.base_url": "http://127.0.0.1:8080/v1", "limits.repeat": "4"}
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := e.Print(&b); err != nil {
		t.Fatal(err)
	}
	got := strings.NewReplacer(uf, "$USER", pf, "$PROJECT").Replace(b.String())
	want := `# Effective configuration: flags > environment > project > user > defaults.
# user file: $USER
# project file: $PROJECT
models:
  chat:
    base_url: http://127.0.0.1:8080/v1  # flag --base-url
    model: gpt-4.1                      # user $USER:3
    api_key_env: OPENAI_API_KEY         # default; key <set>
    context_length: 128000              # default
    max_output_tokens: 0                # default
    tool_protocol: ""                   # default
    vision: ""                          # default
    rate_limit:
      requests: 0                       # default
      input_tokens: 0                   # default
      output_tokens: 0                  # default
    timeouts:
      header: 0                         # default
      idle: 0                           # default
      total: 0                          # default
    price:
      input: 0                          # default
      output: 0                         # default
      cached: 0                         # default
  utility:
    base_url: http://127.0.0.1:8080/v1  # same as models.chat.base_url (flag --base-url)
    model: gpt-4.1                      # same as models.chat.model (user $USER:3)
    api_key_env: UTIL_KEY               # user $USER:5; key <not set>
    context_length: 128000              # same as models.chat.context_length (default)
    max_output_tokens: 0                # same as models.chat.max_output_tokens (default)
    tool_protocol: ""                   # same as models.chat.tool_protocol (default)
    vision: ""                          # same as models.chat.vision (default)
    rate_limit:
      requests: 0                       # same as models.chat.rate_limit.requests (default)
      input_tokens: 0                   # same as models.chat.rate_limit.input_tokens (default)
      output_tokens: 0                  # same as models.chat.rate_limit.output_tokens (default)
    timeouts:
      header: 0                         # same as models.chat.timeouts.header (default)
      idle: 0                           # same as models.chat.timeouts.idle (default)
      total: 0                          # same as models.chat.timeouts.total (default)
    price:
      input: 0                          # same as models.chat.price.input (default)
      output: 0                         # same as models.chat.price.output (default)
      cached: 0                         # same as models.chat.price.cached (default)
  embedding:
    base_url: http://127.0.0.1:8080/v1  # same as models.chat.base_url (flag --base-url)
    model: ""                           # default
    api_key_env: OPENAI_API_KEY         # same as models.chat.api_key_env (default); key <set>
    context_length: 0                   # default
    max_output_tokens: 0                # default
    tool_protocol: ""                   # default
    vision: ""                          # default
    rate_limit:
      requests: 0                       # default
      input_tokens: 0                   # default
      output_tokens: 0                  # default
    timeouts:
      header: 0                         # default
      idle: 0                           # default
      total: 0                          # default
    price:
      input: 0                          # default
      output: 0                         # default
      cached: 0                         # default
profile: developer                      # project $PROJECT:1
sandbox:
  backend: docker                       # env ZERO_SANDBOX
  image: kalilinux/kali-rolling         # default
  network: bridge                       # default
  memory: 4g                            # user $USER:7
  cpus: 0                               # default
  pids: 0                               # default
  user: "1000"                          # user $USER:8
  hide: []                              # default
  provision: ""                         # default
  timeouts:
    first_output: 30s                   # default
    between_output: 15s                 # default
    max: 3m0s                           # default
    dialog: 5s                          # default
  output_timeouts:
    first_output: 1m30s                 # default
    between_output: 45s                 # default
    max: 5m0s                           # default
    dialog: 5s                          # default
approval: ask                           # project $PROJECT:2
limits:
  misformat: 3                          # default
  repeat: 4                             # flag --limits.repeat
  subordinate_depth: 5                  # default
  critical_retries: 1                   # default
  tokens: 0                             # default
  cost: 0                               # default
memory:
  recall: true                          # default
  recall_interval: 3                    # default
  memorize: true                        # default
  consolidation: true                   # default
search:
  url: ""                               # default
  timeout: 0                            # default
document_query:
  allow_private: false                  # default
  timeout: 0                            # default
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Print (-want +got):\n%s", diff)
	}
	if strings.Contains(b.String(), "sk-secret") {
		t.Error("Print shows an API key")
	}
	for _, k := range Keys() {
		name := k[strings.LastIndexByte(k, '.')+1:]
		if !regexp.MustCompile(`(?m)^ *` + name + `: `).MatchString(got) {
			t.Errorf("Print leaves out %s", k)
		}
	}

	// The printout is itself a config file that loads to the same values.
	src2, uf2, _ := layout(t, b.String(), "")
	e2, err := Load(src2)
	if err != nil {
		t.Fatalf("loading Print's output: %v", err)
	}
	if diff := cmp.Diff(e.Config, e2.Config); diff != "" {
		t.Errorf("Print's output loads differently (-printed +reloaded):\n%s", diff)
	}
	if o := e2.Origin("limits.critical_retries"); !strings.HasPrefix(o, "user "+uf2+":") {
		t.Errorf("reloaded origin = %q, want the user file", o)
	}
	if err := e.Print(failWriter{}); err == nil {
		t.Error("Print ignored a write error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// Print works on an Effective not made by Load (no getenv, no origins).
func TestPrintZeroEffective(t *testing.T) {
	t.Parallel()
	e := &Effective{Config: Defaults()}
	var b strings.Builder
	if err := e.Print(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "profile: agent0\n") {
		t.Errorf("Print = %s", b.String())
	}
}
