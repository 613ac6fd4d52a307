package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// env is a fake environment for Sources.Getenv.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// layout writes the user and project files (either may be "" for none) and returns Sources
// pointing at them plus the two file paths.
func layout(t *testing.T, user, project string) (Sources, string, string) {
	t.Helper()
	userDir := filepath.Join(t.TempDir(), "zero")
	ws := t.TempDir()
	uf, pf := UserFile(userDir), ProjectFile(ws)
	write := func(path, content string) {
		if content == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(uf, user)
	write(pf, project)
	return Sources{UserDir: userDir, Workspace: ws, Getenv: env()}, uf, pf
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	const (
		user    = "profile: from-user\nlimits:\n  repeat: 7\nmodels:\n  chat:\n    model: user-model\n    base_url: http://user:1/v1\n"
		project = "profile: from-project\nmodels:\n  chat:\n    model: project-model\n"
	)
	tests := []struct {
		name          string
		user, project string
		env           []string
		flags         map[string]string
		want          map[string]string // dotted key -> value as Print shows it
		origin        map[string]string // dotted key -> origin, "$USER"/"$PROJECT" stand for the file paths
	}{
		{
			name:   "defaults",
			want:   map[string]string{"profile": "agent0", "limits.repeat": "3", "models.chat.model": `""`},
			origin: map[string]string{"profile": "default", "limits.repeat": "default", "models.chat.model": "default"},
		},
		{
			name:   "user over defaults",
			user:   user,
			want:   map[string]string{"profile": "from-user", "limits.repeat": "7", "limits.misformat": "3"},
			origin: map[string]string{"profile": "user $USER:1", "limits.repeat": "user $USER:3", "limits.misformat": "default"},
		},
		{
			name:    "project over user, per key",
			user:    user,
			project: project,
			want:    map[string]string{"profile": "from-project", "limits.repeat": "7", "models.chat.model": "project-model", "models.chat.base_url": "http://user:1/v1"},
			origin:  map[string]string{"profile": "project $PROJECT:1", "limits.repeat": "user $USER:3", "models.chat.model": "project $PROJECT:4", "models.chat.base_url": "user $USER:7"},
		},
		{
			name:    "env over project",
			user:    user,
			project: project,
			env:     []string{"ZERO_PROFILE", "from-env", "ZERO_MODEL", "env-model", "ZERO_APPROVAL", " ask "},
			want:    map[string]string{"profile": "from-env", "models.chat.model": "env-model", "approval": "ask", "limits.repeat": "7"},
			origin:  map[string]string{"profile": "env ZERO_PROFILE", "models.chat.model": "env ZERO_MODEL", "approval": "env ZERO_APPROVAL", "limits.repeat": "user $USER:3"},
		},
		{
			name:    "empty env var is unset",
			project: project,
			env:     []string{"ZERO_MODEL", "", "ZERO_PROFILE", "  "},
			want:    map[string]string{"profile": "from-project", "models.chat.model": "project-model"},
			origin:  map[string]string{"profile": "project $PROJECT:1", "models.chat.model": "project $PROJECT:4"},
		},
		{
			name:    "flag over env",
			user:    user,
			project: project,
			env:     []string{"ZERO_PROFILE", "from-env", "ZERO_MODEL", "env-model", "OPENAI_BASE_URL", "http://env:2/v1", "ZERO_SANDBOX", "docker"},
			flags:   map[string]string{"profile": "from-flag", "models.chat.base_url": "", "limits.subordinate_depth": "2", "sandbox.cpus": "1.5"},
			want: map[string]string{
				"profile": "from-flag", "models.chat.model": "env-model", "models.chat.base_url": `""`,
				"sandbox.backend": "docker", "limits.subordinate_depth": "2", "sandbox.cpus": "1.5", "limits.repeat": "7",
			},
			origin: map[string]string{
				"profile": "flag --profile", "models.chat.model": "env ZERO_MODEL", "models.chat.base_url": "flag --base-url",
				"sandbox.backend": "env ZERO_SANDBOX", "limits.subordinate_depth": "flag --limits.subordinate_depth",
				"sandbox.cpus": "flag --sandbox.cpus", "limits.repeat": "user $USER:3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, uf, pf := layout(t, tt.user, tt.project)
			src.Getenv = env(tt.env...)
			src.Flags = tt.flags
			e, err := Load(src)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			gotVal, gotOrigin := map[string]string{}, map[string]string{}
			for k := range tt.want {
				gotVal[k] = valueOf(t, e, k)
			}
			for k := range tt.origin {
				gotOrigin[k] = strings.NewReplacer(uf, "$USER", pf, "$PROJECT").Replace(e.Origin(k))
			}
			if diff := cmp.Diff(tt.want, gotVal); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.origin, gotOrigin); diff != "" {
				t.Errorf("origins (-want +got):\n%s", diff)
			}
		})
	}
}

// valueOf reads one value of e by dotted key, rendered as Print does.
func valueOf(t *testing.T, e *Effective, key string) string {
	t.Helper()
	l, ok := leafByKey[key]
	if !ok {
		t.Fatalf("no key %q", key)
	}
	return scalar(reflect.ValueOf(e.Config).FieldByIndex(l.index).Interface())
}

func TestLoadTyped(t *testing.T) {
	t.Parallel()
	src, _, _ := layout(t, `
models:
  chat:
    base_url: https://openrouter.ai/api/v1
    model: anthropic/claude-sonnet-4
    api_key_env: OPENROUTER_API_KEY
    context_length: 200_000
    rate_limit: {requests: 60, input_tokens: 100000, output_tokens: 20000}
  utility:
    model: openai/gpt-4.1-mini
    context_length: 64000
  embedding:
    model: text-embedding-3-small
    base_url: https://api.openai.com/v1
profile: developer
approval: ask
sandbox:
  backend: local
  image: debian:stable
  network: none
  memory: 4g
  cpus: 2
  pids: 512
  user: 1000
  provision: "apt-get install -y jq"
  timeouts: {first_output: 60}
limits: {misformat: 4, repeat: 5, subordinate_depth: 0, critical_retries: 0}
memory: {recall: false, recall_interval: 5, consolidation: false}
`, "")
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	chat := Model{
		BaseURL: "https://openrouter.ai/api/v1", Model: "anthropic/claude-sonnet-4", APIKeyEnv: "OPENROUTER_API_KEY",
		ContextLength: 200000, RateLimit: RateLimit{Requests: 60, InputTokens: 100000, OutputTokens: 20000},
	}
	want := Config{
		Models: Models{
			Chat: chat,
			Utility: Model{
				BaseURL: chat.BaseURL, Model: "openai/gpt-4.1-mini", APIKeyEnv: "OPENROUTER_API_KEY",
				ContextLength: 64000, RateLimit: chat.RateLimit,
			},
			Embedding: Model{BaseURL: "https://api.openai.com/v1", Model: "text-embedding-3-small", APIKeyEnv: "OPENROUTER_API_KEY"},
		},
		Profile:  "developer",
		Approval: "ask",
		Sandbox: Sandbox{Backend: "local", Image: "debian:stable", Network: "none", Memory: "4g", CPUs: 2, Pids: 512, User: "1000",
			Provision:      "apt-get install -y jq",
			Timeouts:       Timeouts{FirstOutput: time.Minute, BetweenOutput: 15 * time.Second, Max: 3 * time.Minute, Dialog: 5 * time.Second},
			OutputTimeouts: Timeouts{FirstOutput: 90 * time.Second, BetweenOutput: 45 * time.Second, Max: 5 * time.Minute, Dialog: 5 * time.Second},
		},
		Limits: Limits{Misformat: 4, Repeat: 5, SubordinateDepth: 0, CriticalRetries: 0},
		Memory: Memory{Recall: false, RecallInterval: 5, Memorize: true, Consolidation: false},
	}
	if diff := cmp.Diff(want, e.Config); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}
}

func TestModelFallback(t *testing.T) {
	t.Parallel()
	src, uf, _ := layout(t, "models:\n  chat:\n    base_url: http://localhost:11434/v1\n    model: qwen3:32b\n    rate_limit:\n      requests: 30\n  utility:\n    base_url: \"\"\n  embedding:\n    model: nomic-embed-text\n", "")
	src.Getenv = env("ZERO_UTILITY_MODEL", "qwen3:8b")
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	wantModels := Models{
		Chat:      Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:32b", APIKeyEnv: "OPENAI_API_KEY", ContextLength: 128000, RateLimit: RateLimit{Requests: 30}},
		Utility:   Model{BaseURL: "", Model: "qwen3:8b", APIKeyEnv: "OPENAI_API_KEY", ContextLength: 128000, RateLimit: RateLimit{Requests: 30}},
		Embedding: Model{BaseURL: "http://localhost:11434/v1", Model: "nomic-embed-text", APIKeyEnv: "OPENAI_API_KEY"},
	}
	if diff := cmp.Diff(wantModels, e.Models); diff != "" {
		t.Errorf("Models (-want +got):\n%s", diff)
	}
	wantOrigin := map[string]string{
		"models.utility.model":               "env ZERO_UTILITY_MODEL",
		"models.utility.base_url":            "user " + uf + ":8",
		"models.utility.api_key_env":         "same as models.chat.api_key_env (default)",
		"models.utility.context_length":      "same as models.chat.context_length (default)",
		"models.utility.rate_limit.requests": "same as models.chat.rate_limit.requests (user " + uf + ":6)",
		"models.embedding.base_url":          "same as models.chat.base_url (user " + uf + ":3)",
		"models.embedding.api_key_env":       "same as models.chat.api_key_env (default)",
		"models.embedding.context_length":    "default",
		"models.embedding.model":             "user " + uf + ":10",
		"models.chat":                        "",
		"no.such.key":                        "",
	}
	got := map[string]string{}
	for k := range wantOrigin {
		got[k] = e.Origin(k)
	}
	if diff := cmp.Diff(wantOrigin, got); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		file  string // user file; "$F" in want stands for its path
		env   []string
		flags map[string]string
		want  []string
	}{
		{"unknown key", "profile: x\nmodles:\n  chat: {}\n", nil, nil,
			[]string{`$F:2: modles: unknown key (did you mean "models"?)`}},
		{"unknown nested key", "models:\n  chat:\n    modle: x\n", nil, nil,
			[]string{`$F:3: models.chat.modle: unknown key (did you mean "models.chat.model"?)`}},
		{"key at the wrong level", "sandbox:\n  repeat: 4\n", nil, nil,
			[]string{`$F:2: sandbox.repeat: unknown key (did you mean "limits.repeat"?)`}},
		{"wrong case", "Models: {}\n", nil, nil,
			[]string{`$F:1: Models: unknown key (did you mean "models"?)`}},
		{"unknown key without suggestion", "zzz: 1\n", nil, nil,
			[]string{`$F:1: zzz: unknown key`}},
		{"wrong type: string for number", "limits:\n  repeat: three\n", nil, nil,
			[]string{`$F:2: limits.repeat: must be a number, got "three"`}},
		{"wrong type: float for int", "limits:\n  misformat: 2.5\n", nil, nil,
			[]string{`$F:2: limits.misformat: must be a whole number, got 2.5`}},
		{"wrong type: quoted number", "sandbox:\n  pids: \"5\"\n", nil, nil,
			[]string{`$F:2: sandbox.pids: must be a number, got "5"`}},
		{"wrong type: list for string", "profile: [a, b]\n", nil, nil,
			[]string{`$F:1: profile: must be a single value, got a list`}},
		{"wrong type: value for section", "models:\n  chat: gpt-4\n", nil, nil,
			[]string{`$F:2: models.chat: must be a mapping (base_url, model, api_key_env, context_length, max_output_tokens, tool_protocol, vision, rate_limit, timeouts, price), got "gpt-4"`}},
		{"bad enum", "\nsandbox:\n  backend: podman\n", nil, nil,
			[]string{`$F:3: sandbox.backend: must be one of "auto", "docker", "local", got "podman"`}},
		{"bad enum with suggestion", "approval: asks\n", nil, nil,
			[]string{`$F:1: approval: must be one of "sandbox", "auto", "ask", got "asks" (did you mean "ask"?)`}},
		{"negative limit", "limits:\n  subordinate_depth: -1\n", nil, nil,
			[]string{`$F:2: limits.subordinate_depth: must not be negative, got -1`}},
		{"zero repeat", "limits:\n  repeat: 0\n", nil, nil,
			[]string{`$F:2: limits.repeat: must be at least 1, got 0`}},
		{"negative rate limit", "models:\n  utility:\n    rate_limit:\n      requests: -5\n", nil, nil,
			[]string{`$F:4: models.utility.rate_limit.requests: must not be negative, got -5`}},
		{"bad url", "models:\n  chat:\n    base_url: localhost:11434\n", nil, nil,
			[]string{`$F:3: models.chat.base_url: must be an http:// or https:// URL, got "localhost:11434"`}},
		{"bad memory", "sandbox:\n  memory: lots\n", nil, nil,
			[]string{`$F:2: sandbox.memory: must be a size such as 512m or 4g, got "lots"`}},
		{"empty image", "sandbox:\n  image: \"\"\n", nil, nil,
			[]string{`$F:2: sandbox.image: must not be empty`}},
		{"profile path", "profile: ../x\n", nil, nil,
			[]string{`$F:1: profile: must be a profile name, not a path, got "../x"`}},
		{"duplicate key", "profile: a\nprofile: b\n", nil, nil,
			[]string{`$F:2: profile: duplicate key (first set on line 1)`}},
		{"malformed YAML", "limits:\n  repeat: 3\n  misformat: [1,\n", nil, nil,
			[]string{`$F:3: limits.misformat: malformed YAML: did not find expected node content`}},
		{"malformed YAML: bad indent", "sandbox:\n  image: x\n   memory: 4g\n", nil, nil,
			[]string{`$F:3: sandbox.image.memory: malformed YAML: mapping values are not allowed in this context`}},
		{"malformed YAML: tab", "limits:\n\trepeat: 3\n", nil, nil,
			[]string{`$F:2: limits: malformed YAML: found character that cannot start any token`}},
		{"second document", "profile: a\n---\nprofile: b\n", nil, nil,
			[]string{`$F:2: holds a second YAML document (after ---); put everything in one`}},
		{"top level not a mapping", "- a\n- b\n", nil, nil,
			[]string{`$F:1: must be a mapping of keys such as models:, profile:, sandbox:, got a list`}},
		{"several problems at once", "modles: {}\nlimits:\n  repeat: x\n  misformat: -1\n", nil, nil,
			[]string{
				`$F:1: modles: unknown key (did you mean "models"?)`,
				`$F:3: limits.repeat: must be a number, got "x"`,
				`$F:4: limits.misformat: must be at least 1, got -1`,
			}},
		{"bad env", "", []string{"ZERO_SANDBOX", "podman"}, nil,
			[]string{`env ZERO_SANDBOX: sandbox.backend: must be one of "auto", "docker", "local", got "podman"`}},
		{"bad env url", "", []string{"OPENAI_BASE_URL", "ftp://x"}, nil,
			[]string{`env OPENAI_BASE_URL: models.chat.base_url: must be an http:// or https:// URL, got "ftp://x"`}},
		{"bad flag", "", nil, map[string]string{"models.chat.context_length": "big", "approval": "sometimes"},
			[]string{
				`flag --approval: approval: must be one of "sandbox", "auto", "ask", got "sometimes"`,
				`flag --models.chat.context_length: models.chat.context_length: must be a number, got "big"`,
			}},
		{"bad tool protocol and output cap", "models:\n  chat:\n    tool_protocol: natve\n    max_output_tokens: -2\n  utility:\n    tool_protocol: JSON\n", nil, nil,
			[]string{
				`$F:3: models.chat.tool_protocol: must be one of "auto", "native", "json", got "natve" (did you mean "native"?)`,
				`$F:4: models.chat.max_output_tokens: must be at least 0 (the default cap), or -1 to send no cap, got -2`,
				`$F:6: models.utility.tool_protocol: must be one of "auto", "native", "json", got "JSON" (did you mean "json"?)`,
			}},
		{"unknown flag key", "", nil, map[string]string{"models.chat.modell": "x"},
			[]string{`flag --models.chat.modell: models.chat.modell: unknown key (did you mean "models.chat.model"?)`}},
		{"file, env and flag together", "profile: [x]\n", []string{"ZERO_APPROVAL", "no"}, map[string]string{"sandbox.pids": "-1"},
			[]string{
				`$F:1: profile: must be a single value, got a list`,
				`env ZERO_APPROVAL: approval: must be one of "sandbox", "auto", "ask", got "no"`,
				`flag --sandbox.pids: sandbox.pids: must not be negative, got -1`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src, uf, _ := layout(t, tt.file, "")
			src.Getenv = env(tt.env...)
			src.Flags = tt.flags
			e, err := Load(src)
			if err == nil {
				t.Fatalf("Load succeeded with %+v, want errors", e.Config)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %v holds no *Error", err)
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "$F", uf)
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// A user who pastes the key itself into the config must not see it echoed back.
func TestErrorsNeverShowKeys(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-SECRETSECRET"
	for _, file := range []string{
		"models:\n  chat:\n    api_key_env: " + key + "\n",
		"models:\n  chat:\n    api_key: " + key + "\n",
		"models:\n  utility:\n    apiKey: " + key + "\n",
		"models:\n  chat:\n    api_key_env: {" + key + ": 1}\n",
	} {
		src, uf, _ := layout(t, file, "")
		_, err := Load(src)
		if err == nil {
			t.Fatalf("Load(%q) succeeded, want an error", file)
		}
		if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), uf+":3: models.") {
			t.Errorf("Load(%q) error = %q, want file:line:key and no key", file, err)
		}
	}
}

func TestMissingAndEmptyFiles(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"missing":       "",
		"blank":         "\n\n",
		"comments only": "# nothing yet\n",
		"null document": "~\n",
		"explicit doc":  "---\n",
		"empty values":  "models:\nprofile:\nlimits:\n  repeat:\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, uf, pf := layout(t, "", "")
			if content != "" {
				if err := os.MkdirAll(filepath.Dir(uf), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(uf, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e, err := Load(src)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := Defaults()
			want.Models.Utility = want.Models.Chat
			want.Models.Embedding.APIKeyEnv = want.Models.Chat.APIKeyEnv
			if diff := cmp.Diff(want, e.Config); diff != "" {
				t.Errorf("Config (-want +got):\n%s", diff)
			}
			for _, k := range Keys() {
				if o := e.Origin(k); o != "default" && !strings.HasPrefix(o, "same as models.chat.") {
					t.Errorf("Origin(%q) = %q, want default", k, o)
				}
			}
			var b strings.Builder
			if err := e.Print(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "# project file: "+pf+" (not found)") {
				t.Errorf("Print does not report the missing project file:\n%s", b.String())
			}
		})
	}
}

func TestNoSources(t *testing.T) {
	t.Parallel()
	e, err := Load(Sources{Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	if e.Profile != DefaultProfile || e.Origin("profile") != "default" {
		t.Errorf("profile = %q from %q, want the default", e.Profile, e.Origin("profile"))
	}
}

func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	src, uf, _ := layout(t, "", "")
	if err := os.MkdirAll(uf, 0o755); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	_, err := Load(src)
	if err == nil || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), uf) {
		t.Errorf("Load = %v, want a read error naming %s", err, uf)
	}
}

func TestAliasesAndMerge(t *testing.T) {
	t.Parallel()
	src, uf, _ := layout(t, `
x-common: &common
  base_url: http://localhost:8000/v1
  context_length: 32000
models:
  chat:
    <<: *common
    model: big
    context_length: 64000
  utility:
    <<: *common
    model: small
`, "")
	// "x-common" is not a key: the anchor trick needs a place to live, and Zero has none.
	_, err := Load(src)
	want := uf + `:2: x-common: unknown key`
	if err == nil || err.Error() != want {
		t.Fatalf("Load = %v, want %s", err, want)
	}

	src, uf, _ = layout(t, `
models:
  chat: &common
    base_url: http://localhost:8000/v1
    model: big
    context_length: 64000
  utility:
    <<: *common
    model: small
  embedding: {base_url: *url}
`, "")
	_, err = Load(src)
	if err == nil || !strings.Contains(err.Error(), "malformed YAML") || !strings.HasPrefix(err.Error(), uf+":10: models.embedding") {
		t.Fatalf("Load = %v, want a malformed YAML error on line 10", err)
	}

	src, uf, _ = layout(t, `
models:
  chat: &common
    base_url: &url http://localhost:8000/v1
    model: big
    context_length: 64000
  utility:
    <<: *common
    model: small
  embedding: {base_url: *url}
`, "")
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	want2 := Model{BaseURL: "http://localhost:8000/v1", Model: "small", APIKeyEnv: "OPENAI_API_KEY", ContextLength: 64000}
	if diff := cmp.Diff(want2, e.Models.Utility); diff != "" {
		t.Errorf("utility (-want +got):\n%s", diff)
	}
	if got, want := e.Origin("models.utility.model"), "user "+uf+":9"; got != want {
		t.Errorf("Origin(models.utility.model) = %q, want %q", got, want)
	}
	if got, want := e.Origin("models.utility.context_length"), "user "+uf+":6"; got != want {
		t.Errorf("Origin(models.utility.context_length) = %q, want %q (the merged entry)", got, want)
	}
	if e.Models.Embedding.BaseURL != "http://localhost:8000/v1" {
		t.Errorf("embedding base_url = %q, want the alias's value", e.Models.Embedding.BaseURL)
	}
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	src, _, _ := layout(t, "models:\n  utility:\n    api_key_env: UTIL_KEY\n  embedding:\n    api_key_env: \"\"\n", "")
	src.Getenv = env("OPENAI_API_KEY", " sk-chat\n", "UTIL_KEY", "sk-util")
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, role := range []string{"chat", "utility", "embedding", "nonsense"} {
		got[role] = e.APIKey(role)
	}
	want := map[string]string{"chat": "sk-chat", "utility": "sk-util", "embedding": "", "nonsense": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("APIKey (-want +got):\n%s", diff)
	}
}

func TestErrorFields(t *testing.T) {
	t.Parallel()
	src, uf, _ := layout(t, "limits:\n  repeat: three\n", "")
	_, err := Load(src)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load = %v, want an *Error", err)
	}
	want := &Error{File: uf, Line: 2, Key: "limits.repeat", Msg: `must be a number, got "three"`}
	if diff := cmp.Diff(want, ce); diff != "" {
		t.Errorf("*Error (-want +got):\n%s", diff)
	}
}

func FuzzParseFile(f *testing.F) {
	for _, s := range []string{
		"models:\n  chat:\n    model: x\n    rate_limit: {requests: 1}\n",
		"a: &x {b: 1}\nmodels:\n  <<: *x\n",
		"limits: [1, 2]\n", "sandbox:\n\tcpus: 1\n", "---\n---\n", "profile: *nope\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, errs := parseFile("user", "/x/config.yaml", []byte(s))
		for k, v := range m {
			if _, ok := leafByKey[k]; !ok || v.val == nil {
				t.Fatalf("parseFile(%q) recorded %q = %#v", s, k, v.val)
			}
		}
		for _, err := range errs {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("parseFile(%q) error %v is not ErrInvalid", s, err)
			}
		}
	})
}

func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(UserFile(dir), []byte("models:\n  chat:\n    model: gpt-4.1\n    rate_limit: {requests: 60}\nsandbox:\n  memory: 4g\nlimits: {repeat: 4}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	src := Sources{UserDir: dir, Getenv: env("ZERO_MODEL", "gpt-4.1-mini"), Flags: map[string]string{"profile": "developer"}}
	for b.Loop() {
		if _, err := Load(src); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSandboxImageFromEnvAndFlag(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "ZERO_SANDBOX_IMAGE" {
			return "from-env:1"
		}
		return ""
	}
	e, err := Load(Sources{Getenv: env})
	if err != nil || e.Sandbox.Image != "from-env:1" || e.Origin("sandbox.image") != "env ZERO_SANDBOX_IMAGE" {
		t.Errorf("env: image %q from %q, %v", e.Sandbox.Image, e.Origin("sandbox.image"), err)
	}
	e, err = Load(Sources{Getenv: env, Flags: map[string]string{"sandbox.image": "from-flag:2"}})
	if err != nil || e.Sandbox.Image != "from-flag:2" || e.Origin("sandbox.image") != "flag --image" {
		t.Errorf("flag: image %q from %q, %v", e.Sandbox.Image, e.Origin("sandbox.image"), err)
	}
}

// TestNullIsAbsent: null reads as the shared walker says (yamlwalk): every
// spelling of it, the !!null tag's long form included, leaves a key as if
// absent; a quoted "" is a value; a !!null tag on a value is an error.
func TestNullIsAbsent(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", " ~", " null", " NULL", " !!null", " !!null ~", " !<tag:yaml.org,2002:null> ''", " &n ~\nsandbox:\n  image: *n"} {
		src, _, _ := layout(t, "profile: developer\nmodels:\n  chat:\n    model:"+v+"\n", "")
		src.Getenv = env()
		e, err := Load(src)
		if err != nil {
			t.Errorf("model:%s: %v", v, err)
			continue
		}
		if e.Models.Chat.Model != "" || e.Origin("models.chat.model") != "default" || e.Sandbox.Image != DefaultImage {
			t.Errorf("model:%s = %q from %q (image %q), want the default", v, e.Models.Chat.Model, e.Origin("models.chat.model"), e.Sandbox.Image)
		}
	}
	src, uf, _ := layout(t, "models:\n  chat:\n    base_url: ''\n    model: !!null gpt\n", "")
	src.Getenv = env()
	if _, err := Load(src); err == nil || !strings.Contains(err.Error(), uf+`:4: !!null tags a value that is not null ("gpt")`) {
		t.Errorf("!!null gpt: %v", err)
	}
	src, uf, _ = layout(t, "models:\n  chat:\n    base_url: ''\n", "")
	src.Getenv = env()
	if e, err := Load(src); err != nil || e.Origin("models.chat.base_url") != "user "+uf+":3" {
		t.Errorf("base_url '' is a value of the user file: %v", err)
	}
}

// TestDurations: what was a number of seconds is a time.Duration; a file,
// flag or variable gives a Go duration or, as config files did before,
// whole seconds.
func TestDurations(t *testing.T) {
	t.Parallel()
	src, _, _ := layout(t, "search:\n  timeout: 45\ndocument_query:\n  timeout: 1m30s\nmodels:\n  chat:\n    timeouts: {header: 90, idle: 2m, total: -1}\n", "")
	src.Getenv = env()
	src.Flags = map[string]string{"models.utility.timeouts.idle": "1500ms"}
	e, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	got := []time.Duration{e.Search.Timeout, e.DocumentQuery.Timeout, e.Models.Chat.Timeouts.Header, e.Models.Chat.Timeouts.Idle, e.Models.Chat.Timeouts.Total, e.Models.Utility.Timeouts.Idle, e.Models.Utility.Timeouts.Header}
	want := []time.Duration{45 * time.Second, 90 * time.Second, 90 * time.Second, 2 * time.Minute, NoDeadline, 1500 * time.Millisecond, 90 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("durations (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := e.Print(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"  timeout: 45s ", "  timeout: 1m30s ", "      header: 1m30s ", "      total: -1s ", "      idle: 1.5s "} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("Print lacks %q:\n%s", line, b.String())
		}
	}

	for _, tc := range []struct{ file, want string }{
		{"search:\n  timeout: soon\n", `$F:2: search.timeout: must be a duration such as 20s or 1m30s, or a whole number of seconds, got "soon"`},
		{"search:\n  timeout: 1.5\n", `$F:2: search.timeout: must be a duration such as 20s or 1m30s, or a whole number of seconds, got 1.5`},
		{"search:\n  timeout: [1]\n", `$F:2: search.timeout: must be a duration, got a list`},
		{"search:\n  timeout: -5\n", `$F:2: search.timeout: must not be negative, got -5s`},
		{"document_query:\n  timeout: -1s\n", `$F:2: document_query.timeout: must not be negative, got -1s`},
		{"models:\n  chat:\n    timeouts: {idle: -2}\n", `$F:3: models.chat.timeouts.idle: must be at least 0, or -1 for no limit, got -2s`},
		{"search:\n  timeout: 99999999999999\n", `$F:2: search.timeout: must be a duration that fits in 290 years, got 99999999999999`},
	} {
		src, uf, _ := layout(t, tc.file, "")
		src.Getenv = env()
		_, err := Load(src)
		if want := strings.ReplaceAll(tc.want, "$F", uf); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", tc.file, err, want)
		}
	}
	_, err = Load(Sources{Getenv: env(), Flags: map[string]string{"search.timeout": "20 s"}})
	if err == nil || err.Error() != `flag --search.timeout: search.timeout: must be a duration such as 20s or 1m30s, or a whole number of seconds, got "20 s"` {
		t.Errorf("flag: %v", err)
	}
}
