package loop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/profiles"
)

// funcModel answers utility requests with fn and records them.
type funcModel struct {
	mu    sync.Mutex
	asked []string // the user message of each request
	fn    func(n int) string
}

func (m *funcModel) Stream(_ context.Context, req llm.Request, _ llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.asked = append(m.asked, req.Messages[len(req.Messages)-1].Content)
	n := len(m.asked)
	m.mu.Unlock()
	return llm.Result{Content: m.fn(n)}, nil
}

// compressSession is a session whose agent 0 has the history st, a context
// of window tokens (words) and a utility model answering "SUM<n>".
func compressSession(t *testing.T, window int, st HistoryState) (*Session, *funcModel) {
	t.Helper()
	util := &funcModel{fn: func(n int) string { return fmt.Sprintf("SUM%d", n) }}
	s := NewSession("t", Config{
		Setup:       Setup{Model: nopModel{}, UtilityModel: util, Prompts: profiles.New()},
		Limits:      Limits{ContextTokens: window},
		CountTokens: words,
	}, nil)
	if err := s.RestoreHistory(0, st); err != nil {
		t.Fatal(err)
	}
	return s, util
}

// topicsState is a history of topics, each of the given sizes (messages),
// every message "m<N>" followed by filler words.
func topicsState(filler int, sizes ...int) HistoryState {
	var st HistoryState
	for topic, size := range sizes {
		for range size {
			n := len(st.Messages)
			st.Messages = append(st.Messages, HistoryMessage{N: n, Topic: topic, AI: n%2 == 1,
				Content: fmt.Sprintf("m%d", n) + strings.Repeat(" x", filler)})
		}
	}
	return st
}

func summariesOf(s *Session) []HistorySummary {
	sums := s.agent0.History.State().Summaries
	for i := range sums {
		sums[i].Content, sums[i].Tokens = "", 0
	}
	return sums
}

func TestCompressCurrentTopicAttention(t *testing.T) {
	t.Parallel()
	// One topic of 13 messages of 10 words: 130 tokens over a limit of 70.
	s, util := compressSession(t, 100, topicsState(9, 13))
	if !s.agent0.compressHistory(t.Context()) {
		t.Fatal("nothing was compressed")
	}
	got := summariesOf(s)
	// The middle is 11 messages; all but floor(11*0.65) = 7 of them, the
	// oldest 4 (1..4), are summarised first.
	if len(got) == 0 || got[0] != (HistorySummary{ID: 1, Kind: SummaryMessages, From: 1, To: 4}) {
		t.Fatalf("first summary = %+v", got)
	}
	if !strings.HasPrefix(util.asked[0], "# Message history to summarize:\nai: m1 x") || !strings.Contains(util.asked[0], "\nuser: m2 x") ||
		!strings.Contains(util.asked[0], "\nai: m3 x") || strings.Contains(util.asked[0], "m5") {
		t.Errorf("first utility request = %q", util.asked[0])
	}
	out := s.agent0.History.Output()
	if first := out[0].Content; !strings.HasPrefix(first, "m0 x") || !strings.Contains(first, `"messages_summary": "SUM`) {
		t.Errorf("first message = %q", first)
	}
	if last := out[len(out)-1].Content; !strings.HasSuffix(last, "m12"+strings.Repeat(" x", 9)) {
		t.Errorf("the topic's last message must stay: %q", last)
	}
	if h := s.agent0.History; h.Tokens() > s.agent0.HistoryLimit() {
		t.Errorf("still over the limit: %d tokens", h.Tokens())
	}
}

func TestCompressOlderTopics(t *testing.T) {
	t.Parallel()
	// Old topics of 6 messages of 5 words (30 tokens) and a current one of
	// 2: limit 70, target 56; older topics may take 16.8.
	s, _ := compressSession(t, 100, topicsState(4, 6, 6, 6, 2))
	s.agent0.compressHistory(t.Context())
	got := summariesOf(s)
	want := []HistorySummary{
		{ID: 1, Kind: SummaryMessages, From: 1, To: 4},   // topic 0's middle: its first and last message stay
		{ID: 2, Kind: SummaryMessages, From: 7, To: 10},  // topic 1's
		{ID: 3, Kind: SummaryMessages, From: 13, To: 16}, // topic 2's
		{ID: 4, Kind: SummaryBulk, From: 0, To: 17},      // then the three oldest topics into a bulk
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summaries (-want +got):\n%s", diff)
	}
}

func TestCompressBulks(t *testing.T) {
	t.Parallel()
	bulks := func(n, size int) HistoryState {
		st := topicsState(1, 2, 2, 2, 2, 2)
		for i := range n {
			st.Summaries = append(st.Summaries, HistorySummary{ID: i + 1, Kind: SummaryBulk, From: 2 * i, To: 2*i + 1,
				Content: "bulk" + strings.Repeat(" y", size-1), Tokens: size})
		}
		return st
	}
	t.Run("merged in threes", func(t *testing.T) {
		t.Parallel()
		// 4 bulks of 40 words: limit 70, target 56, bulks may take 11.2.
		s, util := compressSession(t, 100, bulks(4, 40))
		if !s.agent0.compressHistory(t.Context()) {
			t.Fatal("nothing was compressed")
		}
		got := summariesOf(s)[4:]
		want := []HistorySummary{
			{ID: 5, Kind: SummaryBulk, From: 0, To: 5}, // the first three
			{ID: 6, Kind: SummaryBulk, From: 0, To: 7}, // then that one and the fourth
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("summaries (-want +got):\n%s", diff)
		}
		if n := strings.Count(util.asked[0], "user: bulk y"); n != 3 {
			t.Errorf("the first merge summarised %d bulks: %q", n, util.asked[0])
		}
	})
	t.Run("a last bulk over its share is dropped", func(t *testing.T) {
		t.Parallel()
		s, util := compressSession(t, 100, bulks(1, 80))
		if !s.agent0.compressHistory(t.Context()) {
			t.Fatal("nothing was compressed")
		}
		got := summariesOf(s)[1:]
		if diff := cmp.Diff([]HistorySummary{{ID: 2, Kind: SummaryDropped, From: 0, To: 1}}, got); diff != "" {
			t.Errorf("summaries (-want +got):\n%s", diff)
		}
		if len(util.asked) != 0 {
			t.Errorf("dropping needs no model: %q", util.asked)
		}
		if out := s.agent0.History.Output(); strings.Contains(out[0].Content, "bulk") || !strings.HasPrefix(out[0].Content, "m2 x") {
			t.Errorf("the dropped bulk is still shown: %q", out[0].Content)
		}
	})
}

// A summary that is not shorter than what it replaces is left out, and
// compression stops there.
func TestCompressIgnoresLongerSummary(t *testing.T) {
	t.Parallel()
	s, util := compressSession(t, 100, topicsState(9, 13))
	util.fn = func(int) string { return strings.Repeat("long ", 100) }
	if s.agent0.compressHistory(t.Context()) {
		t.Error("a bloated summary counted as compression")
	}
	if sums := s.agent0.History.State().Summaries; len(sums) != 0 {
		t.Errorf("summaries = %+v", sums)
	}
}
