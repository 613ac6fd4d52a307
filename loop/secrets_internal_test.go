package loop

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/secrets"
)

const (
	internalValue = "val-0123456789-abcdef"
	internalAlias = "§§secret(K)"
)

type nopPrompts struct{}

func (nopPrompts) Render(string, map[string]any) (string, error) { return "", nil }
func (nopPrompts) Names(string) []string                         { return nil }

func internalSession(set *secrets.Set) *Session {
	return NewSession("s", Config{Setup: Setup{Model: nopModel{}, Prompts: nopPrompts{}}, Secrets: set}, nil)
}

// History masks whatever reaches it, by any path: Add (a tool may call it
// directly), a summary, and a restored state written before the secret
// was known.
func TestHistoryMasks(t *testing.T) {
	t.Parallel()
	var set *secrets.Set
	s := internalSession(set.With("K", internalValue))
	h := s.Agent0().History
	h.Add(true, "said "+internalValue)
	h.Add(false, "result "+internalValue)
	h.Add(true, "more")
	if _, err := h.addSummary(HistorySummary{Kind: SummaryMessages, From: 0, To: 1, Content: "summary of " + internalValue, Tokens: 1}); err != nil {
		t.Fatal(err)
	}
	r := internalSession(set.With("K", internalValue)).Agent0().History
	if err := r.restore(HistoryState{
		Messages:  []HistoryMessage{{N: 0, AI: false, Content: "stored " + internalValue}, {N: 1, AI: true, Content: "ok"}},
		Summaries: []HistorySummary{{ID: 1, Kind: SummaryMessage, From: 0, To: 0, Content: "old " + internalValue, Tokens: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]*History{"live": h, "restored": r} {
		b, _ := json.Marshal(h.State())
		out, _ := json.Marshal(h.Output())
		for _, text := range []string{string(b), string(out)} {
			if strings.Contains(text, internalValue) || !strings.Contains(text, internalAlias) {
				t.Errorf("%s history: %s", name, text)
			}
		}
	}
}

// The session's logger masks, whatever the engine logs.
func TestLoggerMasks(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	var set *secrets.Set
	s := NewSession("s", Config{
		Setup:   Setup{Model: nopModel{}, Prompts: nopPrompts{}},
		Secrets: set.With("K", internalValue),
		Logger:  slog.New(slog.NewTextHandler(&buf, nil)),
	}, nil)
	s.cfg.Logger.Warn("failed with "+internalValue, "err", errors.New("no "+internalValue))
	if strings.Contains(buf.String(), internalValue) || strings.Count(buf.String(), internalAlias) != 2 {
		t.Errorf("log: %s", buf.String())
	}
}

// A JSON document masked where a value is not inside a string stays valid.
func TestMaskJSON(t *testing.T) {
	t.Parallel()
	var set *secrets.Set
	set = set.With("PIN", "123456789")
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x 123456789"}`, `{"a":"x §§secret(PIN)"}`},
		{`{"n":123456789,"s":"123456789"}`, `{"n":123456789,"s":"§§secret(PIN)"}`},
		{`{"a":1}`, `{"a":1}`},
	} {
		if got := string(internalSession(set).maskJSON(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("maskJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Without secrets, the masking steps cost no allocation.
func TestNilSecretsAllocateNothing(t *testing.T) {
	s := internalSession(nil)
	a := s.Agent0()
	msgs := []llm.Message{{Role: llm.User, Content: "hello"}}
	args := map[string]any{"cmd": "ls " + internalAlias}
	res := ToolResult{Text: "ok", Diffs: []FileDiff{{Path: "p", NewText: "n"}}}
	err := errors.New("x")
	call := &ToolCall{Agent: a, ID: "tool-1"}
	if n := testing.AllocsPerRun(100, func() {
		_ = s.mask("some text")
		_ = s.maskMessages(msgs, nil)
		_ = a.maskSystem("system")
		s.remask(&res, resultSnapshot{})
		_ = call.maskedOutput()
		_ = s.maskError(err)
		s.maskResult(&res)
		if got, refused := a.expandArgs(args); refused != "" || got["cmd"] != args["cmd"] {
			t.Fatal("expandArgs changed the arguments without secrets")
		}
		call.flushOutput(context.Background())
	}); n != 0 {
		t.Errorf("%v allocations per run without secrets", n)
	}
}

// A huge message is shown clipped: a value cut by the clip does not show
// its first bytes.
func TestClipMasked(t *testing.T) {
	t.Parallel()
	var set *secrets.Set
	s := internalSession(set.With("K", internalValue))
	text := strings.Repeat("a", 4090) + internalValue + strings.Repeat("b", 100)
	got := s.clipMasked(text, 4096)
	if strings.Contains(got, internalValue[:6]) || !strings.HasSuffix(got, "a"+secrets.PartialMask+"…") {
		t.Errorf("clipMasked = …%q", got[len(got)-20:])
	}
	short := "x " + internalValue
	if got := s.clipMasked(short, 4096); got != "x "+internalAlias {
		t.Errorf("clipMasked(short) = %q", got)
	}
	if got := internalSession(nil).clipMasked(text, 4096); got != cut.Clip(text, 4096) {
		t.Error("without secrets clipMasked is not Clip")
	}
}

// A logger that masks with the session's own Set already (the process's,
// as cmd/zero gives it) is not wrapped to mask again: a log line is masked
// once. (A Set with a value inside another's alias tells once from twice.)
func TestLoggerMasksOnce(t *testing.T) {
	t.Parallel()
	var set *secrets.Set
	set = set.With("A", internalValue).With("B", "secret(A)")
	var buf strings.Builder
	process := slog.New(secrets.NewHandler(slog.NewTextHandler(&buf, nil), func() *secrets.Set { return set }))
	s := NewSession("s", Config{
		Setup:   Setup{Model: nopModel{}, Prompts: nopPrompts{}},
		Secrets: set,
		Logger:  process.With("component", "loop"),
	}, nil)
	s.cfg.Logger.Warn("failed with " + internalValue)
	if got := buf.String(); !strings.Contains(got, "failed with §§secret(A)") {
		t.Errorf("log: %s", got)
	}
}
