package loop_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
)

// overflowEnv is a session whose chat model is the real client talking to
// a scripted server that refuses prompts over its window; the utility
// model (summaries) is in process.
type overflowEnv struct {
	srv  *llmtest.Server
	sess *loop.Session
	rec  *recorder
	util *utilityModel
}

func newOverflowEnv(t *testing.T, win llmtest.Window, limits loop.Limits, replies ...llmtest.Reply) *overflowEnv {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"agent.system.main.md":  "You are {{agent_name}}. Answer with one JSON tool request.",
		"agent.system.tools.md": "Tools: big, response.",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.NewServer(t, replies...)
	srv.ServeWindow(win)
	client, err := llm.New(llm.Options{Model: llmtest.ModelName, BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	env := &overflowEnv{srv: srv, rec: &recorder{}, util: &utilityModel{fn: summaries}}
	limits.CriticalRetryDelay = time.Millisecond
	env.sess = loop.NewSession("overflow", loop.Config{
		Setup: loop.Setup{
			Model:        client,
			UtilityModel: env.util,
			Prompts:      profiles.New(os.DirFS(dir)),
			Tools:        []loop.Tool{responseTool, bigTool},
		},
		Workspace: t.TempDir(),
		Limits:    limits,
	}, env.rec.sink)
	return env
}

// A run whose request the server refuses as too long (llama.cpp's answer,
// stating its n_ctx) learns the window, compresses the history, sends the
// request again and completes; the requests after it fit the window.
func TestOverflowRecovered(t *testing.T) {
	t.Parallel()
	const window = 2000
	var replies []llmtest.Reply
	for i := range 6 {
		replies = append(replies, llmtest.Reply{Content: big(i, 300)})
	}
	replies = append(replies, llmtest.Reply{Content: respond("done")})
	env := newOverflowEnv(t, llmtest.Window{Tokens: window, Enforce: true, Overflow: llmtest.OverflowLlamaCpp}, loop.Limits{}, replies...)
	got, err := env.sess.Run(runCtx(t), "work")
	if err != nil || got != "done" {
		t.Fatalf("run = %q, %v; warnings %s", got, err, env.rec.text(loop.EventWarning))
	}
	prompts := env.srv.PromptTokens()
	if env.srv.Refused() != 1 {
		t.Fatalf("%d requests refused, want 1 (prompts %v)", env.srv.Refused(), prompts)
	}
	over := 0
	for i, p := range prompts {
		if p > window {
			over++
			if over == 1 {
				continue // the one refused
			}
			t.Errorf("request %d is %d tokens, over the window of %d it was told (prompts %v)", i, p, window, prompts)
		}
	}
	warn := env.rec.text(loop.EventWarning)
	if !strings.Contains(warn, fmt.Sprintf("the window is %d tokens", window)) || !strings.Contains(warn, "compressed") {
		t.Errorf("warnings: %s", warn)
	}
	if len(env.rec.ofType(loop.EventHistoryCompressed)) == 0 {
		t.Error("no history_compressed event")
	}
	if errs := env.rec.ofType(loop.EventError); len(errs) != 0 {
		t.Errorf("error events: %+v", errs)
	}
}

// A second overflow in a row (the system prompt and the message alone are
// over the window, which the server does not state) ends the run with an
// error that says what to do.
func TestOverflowTwiceEnds(t *testing.T) {
	t.Parallel()
	env := newOverflowEnv(t, llmtest.Window{Tokens: 20, Enforce: true, Overflow: llmtest.OverflowNoWindow}, loop.Limits{},
		llmtest.Reply{Content: respond("never")})
	_, err := env.sess.Run(runCtx(t), "a message "+strings.Repeat("word ", 40))
	var oe *loop.OverflowError
	if !errors.As(err, &oe) || !errors.Is(err, loop.ErrContextFull) || !errors.Is(err, llm.ErrContextOverflow) {
		t.Fatalf("err = %v, want an OverflowError", err)
	}
	for _, want := range []string{"twice in a row", "models.chat.context_length", "OLLAMA_CONTEXT_LENGTH", "new session"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if n := env.srv.Refused(); n != 2 {
		t.Errorf("%d requests refused, want 2", n)
	}
	ended := env.rec.ofType(loop.EventRunEnded)
	if len(ended) != 1 || ended[0].StopReason != loop.StopError {
		t.Errorf("run_ended %+v", ended)
	}
}

// The chat model's requests carry the output cap: a quarter of the window
// at most 8192 by default, within what the prompt leaves; the utility
// model's its own; -1 sends none.
func TestOutputCaps(t *testing.T) {
	t.Parallel()
	env := newOverflowEnv(t, llmtest.Window{Tokens: 100000}, loop.Limits{ContextTokens: 16000},
		llmtest.Reply{Content: respond("ok")})
	if _, err := env.sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if body := string(env.srv.Requests()[0].Body); !strings.Contains(body, `"max_tokens":4000`) {
		t.Errorf("a 16k window's request: %s", body)
	}

	env = newOverflowEnv(t, llmtest.Window{Tokens: 100000}, loop.Limits{ContextTokens: 1000, MaxOutputTokens: 5000},
		llmtest.Reply{Content: respond("ok")})
	if _, err := env.sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	body := string(env.srv.Requests()[0].Body)
	if strings.Contains(body, `"max_tokens":5000`) || !strings.Contains(body, `"max_tokens":`) {
		t.Errorf("a cap larger than the room the prompt leaves was sent: %s", body)
	}

	env = newOverflowEnv(t, llmtest.Window{Tokens: 100000}, loop.Limits{MaxOutputTokens: -1},
		llmtest.Reply{Content: respond("ok")})
	if _, err := env.sess.Run(runCtx(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if body := string(env.srv.Requests()[0].Body); strings.Contains(body, "max_tokens") {
		t.Errorf("-1 sent a cap: %s", body)
	}

	// The utility model: 2048 unless set.
	a := env.sess.Agent0()
	if _, err := a.CallUtilityModel(runCtx(t), "sys", "msg"); err != nil {
		t.Fatal(err)
	}
	if reqs := env.util.requests(); len(reqs) != 1 || reqs[0].MaxOutputTokens != 2048 {
		t.Errorf("utility requests %+v", reqs)
	}
}
