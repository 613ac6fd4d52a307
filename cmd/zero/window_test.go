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
	for _, protocol := range []string{"json", "native"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			longSessionInWindow(t, protocol)
		})
	}
}

// longSessionInWindow is the long session in one tool protocol: with
// native calls the functions offered and the calls sent back count
// against the window too, as the server counts them.
func longSessionInWindow(t *testing.T, protocol string) {
	const window = 8192
	const turns = 14
	const summarizer = "You are AI summarization assistant" // fw.topic_summary.sys.md
	var replies []llmtest.Reply
	for i := range turns {
		if protocol == "native" {
			replies = append(replies, llmtest.Reply{Content: fmt.Sprintf("Listing numbers %d.", i), ToolCalls: []llmtest.ScriptedCall{{
				ID: fmt.Sprintf("call_%d", i), Name: "code_execution_tool",
				Arguments: fmt.Sprintf(`{"runtime": "terminal", "code": "seq %d %d"}`, i*10000, i*10000+700)}}})
			continue
		}
		replies = append(replies, llmtest.Reply{Content: fmt.Sprintf(
			`{"thoughts": ["step %d"], "headline": "Listing numbers %d", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "seq %d %d"}}`,
			i, i, i*10000, i*10000+700)})
	}
	final := `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "listed them all"}}`
	if protocol == "native" {
		final = "listed them all"
	}
	replies = append(replies, llmtest.Reply{Content: final})
	for i := range 60 {
		replies = append(replies, llmtest.Reply{Match: summarizer, Content: fmt.Sprintf("SUMMARY-%d: the agent listed ranges of numbers.", i)})
	}
	srv := llmtest.NewServer(t, replies...)
	srv.ServeWindow(llmtest.Window{Tokens: window, Shape: llmtest.ShapeVLLM, Enforce: true, Overflow: llmtest.OverflowVLLM})
	cmd := zeroCmd(t, []string{"ZERO_MODEL=llama3", "OPENAI_BASE_URL=" + srv.URL(), "XDG_STATE_HOME=" + t.TempDir(), "ZERO_TOOL_PROTOCOL=" + protocol},
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
	chats, largest, native := 0, 0, 0
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
		// As the server counted it (the functions and calls included):
		// the prompt and the room asked for the answer.
		n := r.PromptTokens + body.MaxTokens
		if n > window {
			t.Errorf("a request of %d tokens (with max_tokens %d), over the window of %d", n, body.MaxTokens, window)
		}
		largest = max(largest, n)
		if !strings.Contains(string(r.Body), summarizer) {
			chats++
			if len(r.Tools) > 0 {
				native++
			}
		}
	}
	if chats != turns+1 || compressed == 0 {
		t.Errorf("%d chat requests (want %d), %d compressions", chats, turns+1, compressed)
	}
	if protocol == "native" && native != chats || protocol == "json" && native != 0 {
		t.Errorf("%d of %d chat requests offered functions with tool_protocol %s", native, chats, protocol)
	}
	t.Logf("%d chat requests, the largest %d tokens with its max_tokens, as the server counts; %d compressions", chats, largest, compressed)
}

// Under tool_protocol auto, a model its endpoint lists without tool
// support (Ollama's capabilities, OpenRouter's supported_parameters) is
// asked in Agent Zero's JSON protocol from the first request; native
// offers it functions all the same, as the user asked.
func TestAutoFollowsTheEndpointsToolListing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shape, protocol string
		noTools, offer  bool
	}{
		{llmtest.ShapeOllama, "auto", true, false},
		{llmtest.ShapeOpenRouter, "auto", true, false},
		{llmtest.ShapeOllama, "auto", false, true},
		{llmtest.ShapeOpenRouter, "auto", false, true},
		{llmtest.ShapeOllama, "native", true, true},
	} {
		t.Run(fmt.Sprintf("%s-%s-notools=%v", tc.shape, tc.protocol, tc.noTools), func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["hi"], "tool_name": "response", "tool_args": {"text": "hello"}}`})
			srv.ServeWindow(llmtest.Window{Tokens: 32768, NumCtx: 32768, Shape: tc.shape, NoTools: tc.noTools})
			out, err := zeroCmd(t, []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "XDG_STATE_HOME=" + t.TempDir(), "ZERO_TOOL_PROTOCOL=" + tc.protocol},
				"run", "--workspace", t.TempDir(), "hi").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "hello") {
				t.Fatalf("zero run: %v\n%s", err, out)
			}
			reqs := srv.Requests()
			if offered := len(reqs[0].Tools) > 0; offered != tc.offer {
				t.Errorf("functions offered: %v, want %v", offered, tc.offer)
			}
		})
	}
}
