package main

import (
	"io"
	"syscall"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// BenchmarkFloodRSS streams 100 MB of command output through a real `zero
// run --json` and reports how much the process's peak resident memory
// grows over the same run with a one-line command (target: < 50 MB).
func BenchmarkFloodRSS(b *testing.B) {
	peak := func(code string) float64 {
		srv := llmtest.NewServer(b,
			llmtest.Reply{Content: `{"thoughts": ["run"], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "` + code + `"}}`},
			llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done"}}`},
		)
		cmd := zeroCmd(b, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--workspace", b.TempDir(), "go")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatalf("zero run: %v", err)
		}
		return float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024 // KiB → MiB
	}
	var base, flood float64
	for b.Loop() {
		base = peak("echo hi")
		flood = peak("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c 100000000")
	}
	b.ReportMetric(base, "MB-peak-rss-baseline")
	b.ReportMetric(flood, "MB-peak-rss-100MB-output")
	b.ReportMetric(flood-base, "MB-rss-growth")
}
