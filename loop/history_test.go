package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/profiles"
)

// words counts whitespace-separated words: merging messages with "\n\n"
// adds none, so sums of counts are exact.
func words(s string) int { return len(strings.Fields(s)) }

// journalRec records what a history journals, in order.
type journalRec struct {
	mu    sync.Mutex
	calls []string
	state map[int]*HistoryState
}

func newJournalRec() *journalRec { return &journalRec{state: map[int]*HistoryState{}} }

func (j *journalRec) st(agent int) *HistoryState {
	if j.state[agent] == nil {
		j.state[agent] = &HistoryState{}
	}
	return j.state[agent]
}

func (j *journalRec) AddMessage(agent int, m HistoryMessage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, "message")
	j.st(agent).Messages = append(j.st(agent).Messages, m)
}

func (j *journalRec) AddSummary(agent int, s HistorySummary) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, "summary "+s.Kind)
	j.st(agent).Summaries = append(j.st(agent).Summaries, s)
}

func (j *journalRec) CountTokens(agent, n, tokens int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, "count")
	if st := j.st(agent); n < len(st.Messages) { // a restored history counts messages this journal never saw
		st.Messages[n].Tokens = tokens
	}
}

func (j *journalRec) snapshot(agent int) HistoryState {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := j.st(agent)
	return HistoryState{Messages: append([]HistoryMessage(nil), st.Messages...), Summaries: append([]HistorySummary(nil), st.Summaries...)}
}

func user(s string) llm.Message { return llm.Message{Role: llm.User, Content: s} }
func ai(s string) llm.Message   { return llm.Message{Role: llm.Assistant, Content: s} }

// sample is a history of two topics: 0 = u0 a1 u2 a3, 1 = u4 a5 u6 a7.
func sample(t *testing.T, j HistoryJournal) *History {
	t.Helper()
	h := newHistory(0, words, j)
	for i, m := range []string{"u0 x", "a1 x x", "u2 x x x", "a3 x", "u4 x x", "a5 x", "u6 x x x x", "a7 x x"} {
		if i == 4 {
			h.NewTopic()
		}
		h.Add(i%2 == 1, m)
	}
	return h
}

func mustSummary(t *testing.T, h *History, kind string, from, to int, content string) {
	t.Helper()
	if _, err := h.addSummary(HistorySummary{Kind: kind, From: from, To: to, Content: content, Tokens: words(content)}); err != nil {
		t.Fatalf("addSummary(%s %d..%d): %v", kind, from, to, err)
	}
}

func TestHistoryOverlay(t *testing.T) {
	t.Parallel()
	type sum struct {
		kind     string
		from, to int
		content  string
	}
	tests := []struct {
		name   string
		sums   []sum
		want   []llm.Message
		tokens int
	}{
		{
			name:   "no summaries",
			want:   []llm.Message{user("u0 x"), ai("a1 x x"), user("u2 x x x"), ai("a3 x"), user("u4 x x"), ai("a5 x"), user("u6 x x x x"), ai("a7 x x")},
			tokens: 24,
		},
		{
			name:   "a shortened message keeps its role",
			sums:   []sum{{SummaryMessage, 6, 6, "u6 cut"}, {SummaryMessage, 5, 5, "a5 cut"}},
			want:   []llm.Message{user("u0 x"), ai("a1 x x"), user("u2 x x x"), ai("a3 x"), user("u4 x x"), ai("a5 cut"), user("u6 cut"), ai("a7 x x")},
			tokens: 21,
		},
		{
			name:   "a summary is a user message merged with its neighbours",
			sums:   []sum{{SummaryMessages, 1, 1, "S1"}},
			want:   []llm.Message{user("u0 x\n\nS1\n\nu2 x x x"), ai("a3 x"), user("u4 x x"), ai("a5 x"), user("u6 x x x x"), ai("a7 x x")},
			tokens: 22,
		},
		{
			name: "a covering summary replaces the ones it covers",
			sums: []sum{{SummaryMessage, 2, 2, "u2 cut"}, {SummaryMessages, 1, 2, "S12"}, {SummaryMessage, 5, 5, "a5 cut"},
				{SummaryBulk, 0, 3, "B03"}},
			want:   []llm.Message{user("B03\n\nu4 x x"), ai("a5 cut"), user("u6 x x x x"), ai("a7 x x")},
			tokens: 1 + 3 + 2 + 5 + 3,
		},
		{
			name:   "dropped hides its range",
			sums:   []sum{{SummaryBulk, 0, 3, "B03"}, {SummaryDropped, 0, 3, ""}},
			want:   []llm.Message{user("u4 x x"), ai("a5 x"), user("u6 x x x x"), ai("a7 x x")},
			tokens: 3 + 2 + 5 + 3,
		},
		{
			name:   "summaries side by side",
			sums:   []sum{{SummaryTopic, 4, 7, "T1"}, {SummaryTopic, 0, 3, "T0"}},
			want:   []llm.Message{user("T0\n\nT1")},
			tokens: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := sample(t, nil)
			h.Tokens() // counted before the summaries too: their ranges leave the total
			for _, s := range tt.sums {
				mustSummary(t, h, s.kind, s.from, s.to, s.content)
			}
			if diff := cmp.Diff(tt.want, h.Output()); diff != "" {
				t.Errorf("Output (-want +got):\n%s", diff)
			}
			if got := h.Tokens(); got != tt.tokens {
				t.Errorf("Tokens = %d, want %d", got, tt.tokens)
			}
			var all int
			for _, m := range h.Output() {
				all += words(m.Content)
			}
			if all != tt.tokens {
				t.Errorf("Output has %d words, Tokens says %d", all, tt.tokens)
			}
			if h.Len() != 8 || len(h.Messages()) != 8 || h.Topics() != 2 {
				t.Errorf("raw messages changed: Len %d, Topics %d", h.Len(), h.Topics())
			}
			// The history as restored from its state is the same.
			r := newHistory(0, words, nil)
			if err := r.restore(h.State()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(h.Output(), r.Output()); diff != "" || r.Tokens() != h.Tokens() {
				t.Errorf("restored history differs (tokens %d, %d):\n%s", r.Tokens(), h.Tokens(), diff)
			}
		})
	}
}

// After a summary the output is rebuilt; the messages added later go
// through the fast path and must give what a full rebuild gives.
func TestHistoryAddAfterSummary(t *testing.T) {
	t.Parallel()
	h := sample(t, nil)
	mustSummary(t, h, SummaryMessages, 5, 7, "S57")
	h.Add(false, "tool result")
	h.Add(false, "another")
	h.Add(true, "reply")
	want := []llm.Message{user("u0 x"), ai("a1 x x"), user("u2 x x x"), ai("a3 x"), user("u4 x x\n\nS57\n\ntool result\n\nanother"), ai("reply")}
	if diff := cmp.Diff(want, h.Output()); diff != "" {
		t.Errorf("Output (-want +got):\n%s", diff)
	}
	if got, want := h.Tokens(), 2+3+4+2+3+1+2+1+1; got != want {
		t.Errorf("Tokens = %d, want %d", got, want)
	}
	// Output's slice cannot be appended into the history's.
	out := h.Output()
	_ = append(out, ai("mine"))
	if n := len(h.Output()); n != 6 {
		t.Errorf("appending to Output changed the history: %d messages", n)
	}
}

func TestHistoryTopics(t *testing.T) {
	t.Parallel()
	h := newHistory(0, words, nil)
	h.NewTopic() // empty: not ended
	h.Add(false, "a")
	h.NewTopic()
	h.NewTopic()
	h.Add(true, "b")
	h.Add(false, "c")
	st := h.State()
	if got := []int{st.Messages[0].Topic, st.Messages[1].Topic, st.Messages[2].Topic}; !cmp.Equal(got, []int{0, 1, 1}) {
		t.Errorf("topics = %v", got)
	}
	if h.Topics() != 2 {
		t.Errorf("Topics = %d, want 2", h.Topics())
	}
}

// The journal sees every change in order, and the state it recorded
// restores the same history, which goes on from where it was without
// journaling what it restored.
func TestHistoryJournalRoundTrip(t *testing.T) {
	t.Parallel()
	j := newJournalRec()
	h := sample(t, j)
	h.Tokens()
	mustSummary(t, h, SummaryMessage, 2, 2, "cut")
	mustSummary(t, h, SummaryMessages, 1, 3, "S13")
	h.Add(false, "late message")
	wantCalls := []string{"message", "message", "message", "message", "message", "message", "message", "message",
		"count", "count", "count", "count", "count", "count", "count", "count", "summary message", "summary messages", "message"}
	if diff := cmp.Diff(wantCalls, j.calls); diff != "" {
		t.Errorf("journal calls (-want +got):\n%s", diff)
	}
	st := j.snapshot(0)
	if diff := cmp.Diff(h.State(), st); diff != "" {
		t.Errorf("journal state differs from the history's (-history +journal):\n%s", diff)
	}

	j2 := newJournalRec()
	r := newHistory(0, words, j2)
	if err := r.restore(st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h.Output(), r.Output()); diff != "" {
		t.Errorf("restored Output (-live +restored):\n%s", diff)
	}
	if r.Tokens() != h.Tokens() || r.Topics() != h.Topics() || r.Len() != h.Len() {
		t.Errorf("restored Tokens %d Topics %d Len %d, live %d %d %d", r.Tokens(), r.Topics(), r.Len(), h.Tokens(), h.Topics(), h.Len())
	}
	if diff := cmp.Diff([]string{"count"}, j2.calls); diff != "" { // only the late message was not counted yet
		t.Errorf("restore journaled (-want +got):\n%s", diff)
	}
	r.NewTopic()
	r.Add(false, "next")
	mustSummary(t, r, SummaryMessages, 4, 7, "S47")
	got := j2.snapshot(0)
	if len(got.Messages) != 1 || got.Messages[0].N != 9 || got.Messages[0].Topic != 2 {
		t.Errorf("the next message = %+v, want N 9, topic 2", got.Messages)
	}
	if len(got.Summaries) != 1 || got.Summaries[0].ID != 3 {
		t.Errorf("the next summary = %+v, want id 3", got.Summaries)
	}
	if err := r.restore(st); !errors.Is(err, ErrHistoryState) {
		t.Errorf("restoring over a history: %v, want ErrHistoryState", err)
	}
}

func TestHistoryRestoreRejects(t *testing.T) {
	t.Parallel()
	msgs := func(topics ...int) []HistoryMessage {
		var out []HistoryMessage
		for i, tp := range topics {
			out = append(out, HistoryMessage{N: i, Topic: tp, AI: i%2 == 1, Content: "m"})
		}
		return out
	}
	tests := []struct {
		name string
		st   HistoryState
		want string
	}{
		{"numbers not from 0", HistoryState{Messages: []HistoryMessage{{N: 1, Content: "m"}}}, "number 1"},
		{"a gap in the numbers", HistoryState{Messages: append(msgs(0, 0), HistoryMessage{N: 3, Content: "m"})}, "number 3"},
		{"topic going back", HistoryState{Messages: msgs(0, 1, 0)}, "topic 0 after topic 1"},
		{"negative tokens", HistoryState{Messages: []HistoryMessage{{N: 0, Content: "m", Tokens: -1}}}, "negative"},
		{"summary past the end", HistoryState{Messages: msgs(0, 0), Summaries: []HistorySummary{{ID: 1, Kind: SummaryBulk, From: 0, To: 2, Content: "s"}}}, "not inside"},
		{"summary backwards", HistoryState{Messages: msgs(0, 0, 0), Summaries: []HistorySummary{{ID: 1, Kind: SummaryBulk, From: 2, To: 1, Content: "s"}}}, "not inside"},
		{"unknown kind", HistoryState{Messages: msgs(0), Summaries: []HistorySummary{{ID: 1, Kind: "haiku", Content: "s"}}}, "unknown kind"},
		{"message kind over two", HistoryState{Messages: msgs(0, 0), Summaries: []HistorySummary{{ID: 1, Kind: SummaryMessage, From: 0, To: 1, Content: "s"}}}, "covers one message"},
		{"ids with a gap", HistoryState{Messages: msgs(0, 0), Summaries: []HistorySummary{{ID: 2, Kind: SummaryMessage, Content: "s"}}}, "without gaps"},
		{"partial overlap", HistoryState{Messages: msgs(0, 0, 0, 0), Summaries: []HistorySummary{
			{ID: 1, Kind: SummaryMessages, From: 0, To: 2, Content: "s"}, {ID: 2, Kind: SummaryMessages, From: 1, To: 3, Content: "s"}}}, "overlaps"},
		{"later summary inside an earlier one", HistoryState{Messages: msgs(0, 0, 0, 0), Summaries: []HistorySummary{
			{ID: 1, Kind: SummaryMessages, From: 0, To: 3, Content: "s"}, {ID: 2, Kind: SummaryMessage, From: 1, To: 1, Content: "s"}}}, "overlaps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHistory(0, words, nil)
			err := h.restore(tt.st)
			if !errors.Is(err, ErrHistoryState) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("restore = %v, want ErrHistoryState mentioning %q", err, tt.want)
			}
			if h.Len() != 0 || len(h.Output()) != 0 {
				t.Errorf("a rejected state changed the history")
			}
		})
	}
}

func TestTruncateByRatio(t *testing.T) {
	t.Parallel()
	s := NewSession("t", Config{Setup: Setup{Model: nopModel{}, Prompts: profiles.New()}}, nil)
	c := &compressor{a: s.agent0}
	big := strings.Repeat("é0123456789", 300) // 3300 bytes
	obj := `{"tool_name": "code_execution_tool", "tool_result": ` + jsonText(big) + `, "exit": 0}`
	got := c.truncateByRatio(obj, 400, 300)
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("the shortened tool result is not JSON: %v\n%s", err, got)
	}
	res, _ := v["tool_result"].(string)
	if v["tool_name"] != "code_execution_tool" || v["exit"] != 0.0 || len(res) > 300 || !strings.Contains(res, "CHARACTERS REMOVED TO SAVE SPACE") ||
		!strings.HasPrefix(res, "é012") || !strings.HasSuffix(res, "789") {
		t.Errorf("shortened = %s", got)
	}
	if !strings.HasPrefix(got, `{"tool_name": "code_execution_tool", "tool_result": "`) {
		t.Errorf("key order or spacing changed: %.80s", got)
	}
	plain := c.truncateByRatio(big, 400, 300)
	if len(plain) > 300 || !strings.HasPrefix(plain, "é0") || !strings.HasSuffix(plain, "89") || !strings.Contains(plain, "<<\n") {
		t.Errorf("plain text shortened to %q", plain)
	}
	if got := c.truncateByRatio("short", 400, 300); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
}

// nopModel stands for the chat model of sessions that never call it.
type nopModel struct{}

func (nopModel) Stream(context.Context, llm.Request, llm.StreamFunc) (llm.Result, error) {
	return llm.Result{}, errors.New("no model")
}
