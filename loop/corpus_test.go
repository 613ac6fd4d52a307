package loop_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/tools/texteditor"
)

// TestCorpus runs the engine over answers in the shapes real servers
// stream them (testdata/corpus: OpenAI, Anthropic through OpenRouter, Qwen
// on vLLM with and without a tool parser, Llama on Ollama, Mistral,
// DeepSeek, Gemini, llama.cpp; native calls and Agent Zero's JSON
// protocol), each sent byte for byte by the scripted server to the real
// client. Every call the file names must run, with those arguments, in
// that order, and the run must end with the answer that follows.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil || len(files) < 12 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var protocol string
			var want []string
			for line := range strings.Lines(string(ar.Comment)) {
				key, val, _ := strings.Cut(strings.TrimSpace(line), ": ")
				switch key {
				case "protocol":
					protocol = val
				case "call":
					name, args, _ := strings.Cut(val, " ")
					want = append(want, name+" "+canonicalJSON(t, args))
				}
			}
			if protocol == "" || len(want) == 0 || len(ar.Files) != 1 || ar.Files[0].Name != "reply" {
				t.Fatalf("%s: want protocol, call lines and one reply section", file)
			}
			final := llmtest.Reply{Content: "All done."}
			if protocol == loop.ProtocolJSON {
				final.Content = `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "All done."}}`
			}
			srv := llmtest.NewServer(t, llmtest.Reply{Raw: string(ar.Files[0].Data)}, final)
			client, err := llm.New(llm.Options{Model: "corpus", BaseURL: srv.URL(), APIKey: "k", RetryDelay: time.Millisecond, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			ws := t.TempDir()
			for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
				if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			exec := &recordingExec{}
			sess := loop.NewSession("corpus", loop.Config{
				Setup: loop.Setup{Model: client, Prompts: profiles.New(), ToolProtocol: protocol,
					Tools: []loop.Tool{tools.Response{}, texteditor.New(ws), exec}},
				Workspace: ws,
				Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
			}, func(loop.Event) {})
			var mu sync.Mutex
			var ran []string
			sess.SetGate(func(_ context.Context, p *loop.ToolBeforePayload) error {
				if p.ToolName != "response" {
					name := p.ToolName
					if p.Method != "" {
						name += ":" + p.Method
					}
					raw, _ := json.Marshal(p.Args)
					mu.Lock()
					ran = append(ran, name+" "+string(raw))
					mu.Unlock()
				}
				return nil
			})
			answer, err := sess.Run(runCtx(t), "do the task")
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if answer != "All done." {
				t.Errorf("answer = %q", answer)
			}
			if !slices.Equal(ran, want) {
				t.Errorf("calls run:\n%s\nwant:\n%s", strings.Join(ran, "\n"), strings.Join(want, "\n"))
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			// Every native call went back paired with its result.
			var calls, results []string
			for _, m := range reqs[1].Messages {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.ID)
				}
				if m.Role == llm.Tool {
					results = append(results, m.ToolCallID)
				}
			}
			slices.Sort(calls)
			slices.Sort(results)
			if !slices.Equal(calls, results) {
				t.Errorf("calls %v and results %v sent back do not pair", calls, results)
			}
		})
	}
}

func canonicalJSON(t *testing.T, s string) string {
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("corpus call arguments %s: %v", s, err)
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// recordingExec stands in for code_execution_tool: it runs nothing.
type recordingExec struct{}

func (*recordingExec) Name() string       { return "code_execution_tool" }
func (*recordingExec) Kind(string) string { return "execute" }
func (*recordingExec) PromptFile() string { return "agent.system.tool.code_exe.md" }
func (*recordingExec) Execute(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
	return loop.ToolResult{Text: "ok"}, nil
}
