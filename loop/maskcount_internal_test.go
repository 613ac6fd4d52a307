package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
)

// maskMarker is a word of the user's message that no prompt holds: a pass
// of the masking code over a text that holds it is a pass over the message.
const maskMarker = "marker-4f1e9c"

// maskPasses records the masking passes over texts that hold maskMarker,
// each named by the innermost function of the engine that asked for it
// (the masking helpers themselves left out).
type maskPasses struct {
	mu     sync.Mutex
	passes []string
}

// maskHelpers are the functions that mask on another's behalf.
var maskHelpers = []string{
	"(*Session).mask", "(*Session).maskMessages", "(*Session).maskEvent", "(*Session).maskJSON",
	"(*Session).maskDiffs", "(*Session).maskResult", "(*Session).maskError", "(*Agent).scriptInput",
}

func (m *maskPasses) hook(text string) {
	if !strings.Contains(text, maskMarker) {
		return
	}
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	where := "?"
	for {
		f, more := frames.Next()
		name, ok := strings.CutPrefix(f.Function, "github.com/zeroagent/zero/loop.")
		if ok && !slices.Contains(maskHelpers, name) {
			where = name
			break
		}
		if !more {
			break
		}
	}
	m.mu.Lock()
	m.passes = append(m.passes, where)
	m.mu.Unlock()
}

func (m *maskPasses) snapshot() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.passes)
}

// passModel answers the first request with a request for a tool the agent
// does not have (the loop warns and asks again) and fails the second; at
// each request it notes the passes made so far.
type passModel struct {
	passes *maskPasses
	mu     sync.Mutex
	at     [][]string
	sent   []llm.Request
}

func (m *passModel) Stream(_ context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.at = append(m.at, m.passes.snapshot())
	m.sent = append(m.sent, req)
	n := len(m.at)
	m.mu.Unlock()
	if n > 1 {
		return llm.Result{}, errors.New("enough")
	}
	text := `{"thoughts": ["ok"], "headline": "trying", "tool_name": "nope", "tool_args": {}}`
	if err := fn(llm.Delta{Kind: llm.Content, Text: text}); err != nil && !errors.Is(err, llm.ErrStop) {
		return llm.Result{}, err
	}
	return llm.Result{Content: text}, nil
}

// The user's message goes through the masking code once on its way to the
// model, as it enters the history; a later request does not mask it again.
// The passes are counted by the engine function that asked for each.
func TestUserMessageMaskPasses(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("chat_model_call_before=%v", ext), func(t *testing.T) { userMessageMaskPasses(t, ext) })
	}
}

// userMessageMaskPasses counts the passes; ext adds an extension at
// chat_model_call_before that changes nothing.
func userMessageMaskPasses(t *testing.T, ext bool) {
	reg := Builtins()
	if ext {
		reg.Register(hooks.ChatModelCallBefore, "_50_nothing", func(context.Context, hooks.Payload) error { return nil })
	}
	h, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var set *secrets.Set
	set = set.With("K", internalValue)
	passes := &maskPasses{}
	model := &passModel{passes: passes}
	s := NewSession("s", Config{
		Setup:   Setup{Model: model, Prompts: profiles.New(), Hooks: h},
		Secrets: set,
		Limits:  Limits{CriticalRetries: new(0)},
	}, nil)
	s.maskHook = passes.hook
	if _, err := s.Run(context.Background(), "please use "+internalValue+" for "+maskMarker); err == nil {
		t.Fatal("the run should end on the model's failure")
	}
	if len(model.at) != 2 {
		t.Fatalf("%d model requests, want 2", len(model.at))
	}
	for i, req := range model.sent {
		text := fmt.Sprint(req.Messages)
		if strings.Contains(text, internalValue) || !strings.Contains(text, maskMarker) || !strings.Contains(text, internalAlias) {
			t.Errorf("request %d holds the value, or lacks the message or the alias:\n%s", i, text)
		}
	}
	first, second := model.at[0], model.at[1][len(model.at[0]):]
	t.Logf("passes over the user's message before the first request: %d %v", len(first), first)
	t.Logf("passes over it between the first and the second request: %d %v", len(second), second)
	// Before this issue: 5 before the first request (the event, histAdd,
	// History.Add, LoopData.UserMessage and the request), 6 with an
	// extension at chat_model_call_before, and the request's one or two
	// again at every later request. Now: once into the history, which the
	// request carries as it is; once at the event sink (run_started); and
	// once for the extensions' LoopData.UserMessage, which is not sent.
	var toModel []string
	for _, p := range first {
		if p != "(*Session).emit" && p != "(*Agent).histAddUser" {
			toModel = append(toModel, p)
		}
	}
	if len(toModel) != 1 || toModel[0] != "(*Agent).histAdd" {
		t.Errorf("on its way to the model the message was masked by %v, want once, as it entered the history", toModel)
	}
	if want := []string{"(*Session).emit", "(*Agent).histAdd", "(*Agent).histAddUser"}; !slices.Equal(first, want) {
		t.Errorf("passes before the first request: %v, want %v", first, want)
	}
	if len(second) > 0 {
		t.Errorf("the next request masked the message again: %v", second)
	}
}
