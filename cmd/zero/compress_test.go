package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
)

// A run of many large turns in a small context window completes: history
// compression (Agent Zero's, with its prompts, by the utility model) keeps
// every request to the chat model within the window, and the summaries the
// utility model wrote are what later requests carry.
func TestCompressionKeepsRequestsInTheWindow(t *testing.T) {
	t.Parallel()
	const window = 10000
	const summarizer = "You are AI summarization assistant" // fw.topic_summary.sys.md
	var replies []llmtest.Reply
	for i := range 8 {
		replies = append(replies, llmtest.Reply{Content: fmt.Sprintf(
			`{"thoughts": ["step %d"], "headline": "Listing numbers %d", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "seq %d %d"}}`,
			i, i, i*10000, i*10000+900)})
	}
	replies = append(replies, llmtest.Reply{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "listed them all"}}`})
	for i := range 30 {
		replies = append(replies, llmtest.Reply{Match: summarizer, Content: fmt.Sprintf("SUMMARY-%d: the agent listed ranges of numbers.", i)})
	}
	srv := llmtest.NewServer(t, replies...)
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "zero"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "zero", "config.yaml"), []byte(fmt.Sprintf("models:\n  chat:\n    context_length: %d\n", window)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_CONFIG_HOME=" + cfg},
		"run", "--json", "--workspace", t.TempDir(), "list eight ranges of numbers")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("zero run: %v\n%s", err, errb.String())
	}
	var compressed []loop.Event
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e loop.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == loop.EventHistoryCompressed {
			compressed = append(compressed, e)
		}
	}
	if len(compressed) == 0 {
		t.Fatal("no history_compressed event")
	}
	for _, e := range compressed {
		if e.Tokens == nil || e.Tokens.After >= e.Tokens.Before {
			t.Errorf("history_compressed without a reduction: %+v", e.Tokens)
		}
	}
	var chats, utility int
	summaryCarried := false
	for _, r := range srv.Requests() {
		if len(r.Messages) == 0 {
			// A summary the run's end cancelled while its request was
			// being sent: the server could not read it.
			continue
		}
		var text strings.Builder
		tokens := 0
		for _, m := range r.Messages {
			text.WriteString(m.Content)
			tokens += llm.CountTokens(m.Content)
		}
		if strings.Contains(text.String(), summarizer) {
			utility++
			continue
		}
		chats++
		if tokens > window {
			t.Errorf("chat request %d has %d tokens, over the window of %d", chats, tokens, window)
		}
		if strings.Contains(text.String(), "SUMMARY-") {
			summaryCarried = true
		}
	}
	if chats != 9 || utility == 0 || !summaryCarried {
		var log strings.Builder
		for i, r := range srv.Requests() {
			fmt.Fprintf(&log, "request %d: reply %d, %d messages, %.200q\n", i, r.Reply, len(r.Messages), r.Body)
		}
		t.Fatalf("%d chat requests (want 9), %d utility requests, a summary carried: %v\n%s\nstderr:\n%s", chats, utility, summaryCarried, log.String(), errb.String())
	}
}
