package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
)

// A long session against an endpoint with an 8,192-token window, which
// Zero learns by asking it (no context_length is configured), never sends
// a request over it: the server, which counts 15 % more tokens than cl100k
// and counts the output cap against the window as vLLM and OpenAI do,
// refuses none, though the tool outputs add up to many windows.
func TestLongSessionStaysInADiscoveredWindow(t *testing.T) {
	t.Parallel()
	const window = 8192
	const turns = 14
	const summarizer = "You are AI summarization assistant" // fw.topic_summary.sys.md
	var replies []llmtest.Reply
	for i := range turns {
		replies = append(replies, llmtest.Reply{Content: fmt.Sprintf(
			`{"thoughts": ["step %d"], "headline": "Listing numbers %d", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "seq %d %d"}}`,
			i, i, i*10000, i*10000+700)})
	}
	replies = append(replies, llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "listed them all"}}`})
	for i := range 60 {
		replies = append(replies, llmtest.Reply{Match: summarizer, Content: fmt.Sprintf("SUMMARY-%d: the agent listed ranges of numbers.", i)})
	}
	srv := llmtest.NewServer(t, replies...)
	srv.ServeWindow(llmtest.Window{Tokens: window, Shape: llmtest.ShapeVLLM, Enforce: true, Overflow: llmtest.OverflowVLLM})
	cmd := zeroCmd(t, []string{"ZERO_MODEL=llama3", "OPENAI_BASE_URL=" + srv.URL(), "XDG_STATE_HOME=" + t.TempDir()},
		"run", "--json", "--workspace", t.TempDir(), "list many ranges of numbers")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	prompts := srv.PromptTokens()
	if err != nil {
		t.Fatalf("zero run: %v (prompts %v)\n%s", err, prompts, errb.String())
	}
	if n := srv.Refused(); n != 0 {
		t.Errorf("%d requests refused as over the window (prompts %v)", n, prompts)
	}
	compressed := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e loop.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == loop.EventHistoryCompressed {
			compressed++
		}
	}
	chats, largest := 0, 0
	for _, r := range srv.Requests() {
		if len(r.Messages) == 0 {
			// A summary the run's end cancelled while its request was
			// being sent: the server could not read it.
			continue
		}
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if body.MaxTokens <= 0 {
			t.Errorf("a request without max_tokens: %.300s", r.Body)
		}
		// As the server counted it: the prompt and the room asked for the answer.
		n := llmtest.CountPrompt(r.Messages, llmtest.DefaultRatio) + body.MaxTokens
		if n > window {
			t.Errorf("a request of %d tokens (with max_tokens %d), over the window of %d", n, body.MaxTokens, window)
		}
		largest = max(largest, n)
		if !strings.Contains(string(r.Body), summarizer) {
			chats++
		}
	}
	if chats != turns+1 || compressed == 0 {
		t.Errorf("%d chat requests (want %d), %d compressions", chats, turns+1, compressed)
	}
	t.Logf("%d chat requests, the largest %d tokens with its max_tokens, as the server counts; %d compressions", chats, largest, compressed)
}
