package loop_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
)

// instantModel answers every request at once: turns-1 no-op tool requests,
// then the response. With calls set it answers natively: each of the
// first turns-1 answers makes calls[n] (one or more native calls), the
// last is the answer in text.
type instantModel struct {
	turns int
	n     int
	noop  []string
	final string
	calls [][]llm.ToolCall
}

func (m *instantModel) Stream(_ context.Context, _ llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	if m.calls != nil {
		return m.native(fn)
	}
	text := m.final
	if m.n < m.turns-1 {
		text = m.noop[m.n]
	}
	m.n++
	if err := fn(llm.Delta{Kind: llm.Content, Text: text}); err != nil && err != llm.ErrStop {
		return llm.Result{}, err
	}
	return llm.Result{Content: text, Stopped: true, Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}, nil
}

func (m *instantModel) native(fn llm.StreamFunc) (llm.Result, error) {
	res := llm.Result{Usage: llm.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}
	if m.n >= m.turns-1 {
		m.n++
		res.Content = m.final
		return res, fn(llm.Delta{Kind: llm.Content, Text: m.final})
	}
	res.ToolCalls, res.FinishReason = m.calls[m.n], "tool_calls"
	m.n++
	for i, c := range res.ToolCalls {
		if err := fn(llm.Delta{Kind: llm.ToolCallArgs, Call: i, ID: c.ID, Name: c.Name, Text: c.Arguments}); err != nil {
			return res, err
		}
	}
	return res, nil
}

// benchmarkTurns measures the engine's own cost per message-loop turn: an
// in-process model that answers instantly and a no-op tool, with a history
// of about size messages. Runs of 10 turns start from a fresh session whose
// history is pre-filled outside the timer, so the history stays near size.
func benchmarkTurns(b *testing.B, size int) { benchmarkTurnsWith(b, size, nil) }

func benchmarkTurnsWith(b *testing.B, size int, set *secrets.Set) {
	benchmarkProtocol(b, size, set, loop.ProtocolJSON, 0)
}

// benchmarkProtocol is benchmarkTurns in either protocol; natively each
// turn makes calls native calls of the no-op tool (read-only).
func benchmarkProtocol(b *testing.B, size int, set *secrets.Set, protocol string, calls int) {
	const turnsPerRun = 10
	noop := make([]string, turnsPerRun)
	var native [][]llm.ToolCall
	for i := range noop {
		noop[i] = toolReq(fmt.Sprintf("step %d", i), "noop", map[string]any{"i": i})
		var turn []llm.ToolCall
		for j := range calls {
			turn = append(turn, llm.ToolCall{ID: fmt.Sprintf("call_%d_%d", i, j), Name: "noop", Arguments: fmt.Sprintf(`{"i": %d, "j": %d}`, i, j)})
		}
		native = append(native, turn)
	}
	final := respond("done")
	if protocol == loop.ProtocolNative {
		final = "done"
	}
	filler := strings.Repeat("some earlier conversation text ", 8)
	prompts := profiles.New()
	tools := []loop.Tool{responseTool, noopTool("noop")}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += turnsPerRun {
		b.StopTimer()
		model := &instantModel{turns: turnsPerRun, noop: noop, final: final}
		if protocol == loop.ProtocolNative {
			model.calls = native
		}
		sess := loop.NewSession("bench", loop.Config{Setup: loop.Setup{Model: model, Prompts: prompts, Tools: tools, ToolProtocol: protocol},
			Workspace: "/work", Secrets: set}, func(loop.Event) {})
		for i := range size {
			sess.Agent0().History.Add(i%2 == 1, filler)
		}
		// A live session has counted its earlier messages one turn at a
		// time (the history limit needs their tokens once the history's
		// bytes pass it); only this run's new messages are counted below.
		sess.Agent0().History.Tokens()
		b.StartTimer()
		if _, err := sess.Run(ctx, "benchmark task"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTurn10(b *testing.B)   { benchmarkTurns(b, 10) }
func BenchmarkTurn1000(b *testing.B) { benchmarkTurns(b, 1000) }

// The same turns with native tool calls: one call a turn, and three
// read-only calls in one answer.
func BenchmarkTurnNative10(b *testing.B)   { benchmarkProtocol(b, 10, nil, loop.ProtocolNative, 1) }
func BenchmarkTurnNative1000(b *testing.B) { benchmarkProtocol(b, 1000, nil, loop.ProtocolNative, 1) }
func BenchmarkTurnNativeThreeCalls(b *testing.B) {
	benchmarkProtocol(b, 10, nil, loop.ProtocolNative, 3)
}
