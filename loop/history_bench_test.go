package loop

import (
	"fmt"
	"strings"
	"testing"
)

// longHistory is a history of n messages in topics of 20, with a summary
// over the middle of every other topic, as compression leaves it.
func longHistory(b *testing.B, n int) *History {
	b.Helper()
	filler := strings.Repeat("some earlier conversation text ", 8)
	st := HistoryState{}
	for i := range n {
		st.Messages = append(st.Messages, HistoryMessage{N: i, Topic: i / 20, AI: i%2 == 1, Content: filler, Tokens: 40})
	}
	for t := 0; t+1 < n/20; t += 2 {
		st.Summaries = append(st.Summaries, HistorySummary{ID: len(st.Summaries) + 1, Kind: SummaryMessages,
			From: t*20 + 1, To: t*20 + 12, Content: "a summary of the topic", Tokens: 5})
	}
	h := newHistory(0, func(s string) int { return len(s) / 4 }, nil)
	if err := h.restore(st); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkHistoryTurn is what a message-loop turn asks of the history:
// two messages added, the output and the token count read. Its cost must
// not grow with the history.
func BenchmarkHistoryTurn(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := longHistory(b, n)
			reply := `{"tool_name": "code_execution_tool", "tool_args": {"code": "ls"}}`
			result := `{"tool_name": "code_execution_tool", "tool_result": "a.txt b.txt"}`
			b.ReportAllocs()
			for b.Loop() {
				h.Add(true, reply)
				h.Add(false, result)
				if len(h.Output()) == 0 || h.Tokens() == 0 {
					b.Fatal("empty history")
				}
			}
		})
	}
}

// BenchmarkHistoryRebuild is the cost of laying a summary: the output is
// rebuilt from all messages.
func BenchmarkHistoryRebuild(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			h := longHistory(b, n)
			b.ReportAllocs()
			for b.Loop() {
				h.mu.Lock()
				h.rebuild()
				h.mu.Unlock()
			}
		})
	}
}
