package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm/llmtest"
)

// BenchmarkWarmTurn is one prompt on a warm session (its shell already
// open) in each face, against the same scripted model: two model calls and
// an echo in the local sandbox. It reports the time from sending the
// request to its answer.
func BenchmarkWarmTurn(b *testing.B) {
	const turns = 20
	bin := buildZero(b)
	script := func() []llmtest.Reply {
		var out []llmtest.Reply
		for range turns + 1 {
			out = append(out,
				llmtest.Reply{Content: `{"thoughts":["run it"],"headline":"Echo","tool_name":"code_execution_tool","tool_args":{"runtime":"terminal","code":"echo hi"}}`},
				llmtest.Reply{Content: `{"thoughts":["done"],"headline":"Answer","tool_name":"response","tool_args":{"text":"done"}}`})
		}
		return out
	}
	for _, face := range []string{"acp", "mcp"} {
		b.Run(face, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				srv := llmtest.NewServer(b, script()...)
				ws := b.TempDir()
				cmd := exec.Command(bin, face, "--workspace", ws)
				cmd.Env = faceEnv(b, srv.URL())
				in, _ := cmd.StdinPipe()
				outPipe, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				out := bufio.NewReaderSize(outPipe, 1<<20)
				id := 0
				call := func(method string, params any) json.RawMessage {
					id++
					return rpc(b, in, out, lines, id, method, params)
				}
				var turn func() time.Duration
				if face == "acp" {
					call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
					var s struct {
						SessionID string `json:"sessionId"`
					}
					json.Unmarshal(call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s)
					turn = func() time.Duration {
						start := time.Now()
						call("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "echo"}}})
						return time.Since(start)
					}
				} else {
					call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}})
					rpc(b, in, out, lines, 0, "notifications/initialized", map[string]any{})
					session := ""
					turn = func() time.Duration {
						args := map[string]any{"message": "echo", "workspace": ws}
						if session != "" {
							args["session"] = session
						}
						start := time.Now()
						res := call("tools/call", map[string]any{"name": "zero_run", "arguments": args})
						d := time.Since(start)
						var r struct {
							Structured struct {
								Session string `json:"session"`
							} `json:"structuredContent"`
						}
						json.Unmarshal(res, &r)
						session = r.Structured.Session
						return d
					}
				}
				turn() // warms the session: its shell starts
				for range turns {
					times = append(times, turn())
				}
				in.Close()
				cmd.Wait()
			}
			slices.Sort(times)
			b.ReportMetric(percentile(times, 0.5), "p50-turn-ms")
			b.ReportMetric(percentile(times, 0.9), "p90-turn-ms")
		})
	}
}
