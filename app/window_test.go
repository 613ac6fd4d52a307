package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func windowApp(t *testing.T, state string, log *syncBuffer, extra ...string) *App {
	t.Helper()
	env := Env(append([]string{"HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state, "ZERO_MODEL=llama3", "ZERO_SANDBOX=local", "ZERO_STORE=off"}, extra...))
	logger := slog.New(slog.DiscardHandler)
	if log != nil {
		logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := NewAppAt(t.TempDir(), nil, nil, logger, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// The window: the user's context_length wins; else the endpoint's answer
// (asked once); else the default. The Ollama warning is logged, and the
// doctor shows the window and its source.
func TestWindowSources(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.ServeWindow(llmtest.Window{Tokens: 8192, NumCtx: 8192, ModelMax: 131072, Shape: llmtest.ShapeOllama})
	log := &syncBuffer{}
	a := windowApp(t, t.TempDir(), log, "OPENAI_BASE_URL="+srv.URL())
	p, err := a.Loader.Load(a.Config.Profile)
	if err != nil {
		t.Fatal(err)
	}
	tokens, source := a.Window(context.Background(), "chat", p, "")
	if tokens != 8192 || !strings.Contains(source, "num_ctx") {
		t.Errorf("window %d from %q, want 8192 from Ollama's num_ctx", tokens, source)
	}
	if !strings.Contains(log.String(), "OLLAMA_CONTEXT_LENGTH") {
		t.Errorf("the Ollama warning was not logged: %s", log.String())
	}
	r := checkModel(context.Background(), a)
	if !r.OK || !strings.Contains(r.Detail, "context window 8192 tokens (the endpoint: Ollama POST /api/show parameters num_ctx)") || !strings.Contains(r.Fix, "PARAMETER num_ctx") {
		t.Errorf("doctor: %+v", r)
	}

	// The user's value wins, and the endpoint is not asked.
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "zero"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "zero", "config.yaml"), []byte("models:\n  chat:\n    context_length: 32000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := windowApp(t, t.TempDir(), nil, "OPENAI_BASE_URL="+srv.URL(), "XDG_CONFIG_HOME="+cfg)
	if tokens, source := b.Window(context.Background(), "chat", p, ""); tokens != 32000 || !strings.Contains(source, "models.chat.context_length (user ") {
		t.Errorf("configured window %d from %q", tokens, source)
	}

	// An endpoint that does not say: the default, logged at debug level.
	quiet := llmtest.NewServer(t)
	log = &syncBuffer{}
	c := windowApp(t, t.TempDir(), log, "OPENAI_BASE_URL="+quiet.URL())
	if tokens, source := c.Window(context.Background(), "chat", p, ""); tokens != 128000 || !strings.HasPrefix(source, "default") {
		t.Errorf("unknown window %d from %q", tokens, source)
	}
	if !strings.Contains(log.String(), "level=DEBUG") || !strings.Contains(log.String(), "context window is not known") {
		t.Errorf("log: %s", log.String())
	}
}

// The calibration learns from the usage the endpoint reports, is kept in
// the state folder, and a later process starts from it; a damaged file is
// ignored with a log line.
func TestCalibrationPersists(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "a summary"}, llmtest.Reply{Content: "again"}, llmtest.Reply{Content: "another"})
	srv.SetWindow(100000) // the server counts prompts (1.15 × cl100k) and reports that count
	state := t.TempDir()
	a := windowApp(t, state, nil, "OPENAI_BASE_URL="+srv.URL())
	p, err := a.Loader.Load(a.Config.Profile)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.model("utility", p, "")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Summarise what the agent did with the numbers it listed. ", 60)
	req := llm.Request{Messages: []llm.Message{{Role: llm.System, Content: "You summarise."}, {Role: llm.User, Content: text}}}
	if _, err := m.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	ep, _ := a.endpoint("chat", p, "")
	cal := a.calibrator(ep.m).Calibration()
	if cal.Samples != 1 || cal.Ratio < 1.1 || cal.Ratio > 1.3 {
		t.Fatalf("calibration after one reported request: %+v", cal)
	}
	file := filepath.Join(state, "zero", "calibration.json")
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), `"ratio"`) || !strings.Contains(string(b), "llama3") {
		t.Fatalf("calibration file: %s, %v", b, err)
	}

	// The same ratio again is not written again: the file is not
	// rewritten on every request, on the turn's path.
	if _, err := m.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.calibrator(ep.m).Calibration(); got.Samples != 2 || got.Ratio != cal.Ratio {
		t.Fatalf("calibration after the same request again: %+v", got)
	}
	if b2, err := os.ReadFile(file); err != nil || string(b2) != string(b) {
		t.Errorf("the file was written again for an unchanged ratio: %s, %v", b2, err)
	}

	// A restart: the new process counts as the old one learned.
	a2 := windowApp(t, state, nil, "OPENAI_BASE_URL="+srv.URL())
	if got := a2.calibrator(ep.m).Calibration(); got != cal {
		t.Errorf("after a restart: %+v, want %+v", got, cal)
	}

	// A damaged file: ignored with a log line, never fatal, and replaced.
	if err := os.WriteFile(file, []byte(`{"version":1,"models":{"x": {"ratio": "high"`), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	a3 := windowApp(t, state, log, "OPENAI_BASE_URL="+srv.URL())
	c3 := a3.calibrator(ep.m)
	if got := c3.Calibration(); got.Samples != 0 {
		t.Errorf("from a damaged file: %+v", got)
	}
	if !strings.Contains(log.String(), "damaged") {
		t.Errorf("no log line for the damaged file: %s", log.String())
	}
	m3, err := a3.model("utility", p, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m3.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), `"samples": 1`) {
		t.Errorf("the damaged file was not replaced: %s, %v", b, err)
	}
}
