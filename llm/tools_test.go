package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

var readSpec = llm.ToolSpec{Name: "text_editor_read", Description: "read a file",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

// TestToolCallsEveryShape: the calls of an answer come whole, in order,
// with their ids, however the server cuts them.
func TestToolCallsEveryShape(t *testing.T) {
	calls := []llmtest.ScriptedCall{
		{ID: "call_a", Name: "text_editor_read", Arguments: `{"path": "a \"quoted\" name.go"}`},
		{ID: "call_b", Name: "code_execution_tool", Arguments: `{"runtime":"terminal","code":"ls -la\n"}`},
	}
	for _, style := range []string{"", "whole", "no_index", "null_arguments", "name_pieces"} {
		t.Run(style, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.Reply{Content: "Reading both.", ToolCalls: calls, ToolCallStyle: style, ChunkSize: 3})
			c := newClient(t, srv)
			req := hello
			req.Tools = []llm.ToolSpec{readSpec, {Name: "code_execution_tool"}}
			var args [2]strings.Builder
			res, err := c.Stream(testCtx(t), req, func(d llm.Delta) error {
				if d.Kind == llm.ToolCallArgs {
					args[d.Call].WriteString(d.Text)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []llm.ToolCall{{ID: "call_a", Name: "text_editor_read", Arguments: calls[0].Arguments},
				{ID: "call_b", Name: "code_execution_tool", Arguments: calls[1].Arguments}}
			if diff := cmp.Diff(want, res.ToolCalls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if res.Content != "Reading both." || res.FinishReason != "tool_calls" {
				t.Errorf("content %q, finish %q", res.Content, res.FinishReason)
			}
			for i := range args {
				if args[i].String() != calls[i].Arguments {
					t.Errorf("streamed arguments of call %d: %q", i, args[i].String())
				}
			}
			rec := srv.Requests()[0]
			if diff := cmp.Diff([]string{"text_editor_read", "code_execution_tool"}, rec.Tools); diff != "" {
				t.Errorf("offered tools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolMessagesSent: an assistant message's calls and the tool results
// answering them reach the server with their ids; a request without tools
// sends no "tools".
func TestToolMessagesSent(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "done"}, llmtest.Reply{Content: "plain"})
	c := newClient(t, srv)
	req := llm.Request{Tools: []llm.ToolSpec{readSpec}, Messages: []llm.Message{
		{Role: llm.System, Content: "sys"},
		{Role: llm.User, Content: "read a.go"},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "text_editor_read", Arguments: `{"path":"a.go"}`}}},
		{Role: llm.Tool, ToolCallID: "c1", Content: "package a"},
	}}
	if _, err := c.Stream(testCtx(t), req, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(testCtx(t), hello, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if diff := cmp.Diff(req.Messages[2:], got[0].Messages[2:]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var body map[string]any
	if err := json.Unmarshal(got[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools = %v", body["tools"])
	}
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "text_editor_read" || fn["description"] != "read a file" || fn["parameters"].(map[string]any)["required"] == nil {
		t.Errorf("function = %v", fn)
	}
	// A message of calls only has no content key: Ollama refuses
	// "content": null ("invalid message content type: <nil>") and an empty
	// string makes some of its models leave structured calls (pydantic-ai
	// #5206, vercel/ai #12390); OpenAI takes it either way.
	var sent struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(got[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if _, has := sent.Messages[2]["content"]; has {
		t.Errorf("a message of calls only carries content %s", sent.Messages[2]["content"])
	}
	if strings.Contains(string(got[1].Body), `"tools"`) {
		t.Errorf("a request without tools sent %s", got[1].Body)
	}
}

// TestBadToolsRefusedBeforeSending: a name the API forbids, parameters
// that are not JSON, a result without its call are refused here with a
// clear error, and nothing is sent.
func TestBadToolsRefusedBeforeSending(t *testing.T) {
	srv := llmtest.NewServer(t)
	c := newClient(t, srv)
	for name, req := range map[string]llm.Request{
		"colon name":   {Messages: hello.Messages, Tools: []llm.ToolSpec{{Name: "text_editor:read"}}},
		"long name":    {Messages: hello.Messages, Tools: []llm.ToolSpec{{Name: strings.Repeat("a", 65)}}},
		"bad schema":   {Messages: hello.Messages, Tools: []llm.ToolSpec{{Name: "x", Parameters: json.RawMessage(`{"type":`)}}},
		"orphan":       {Messages: append(hello.Messages[:2:2], llm.Message{Role: llm.Tool, Content: "r"})},
		"call no id":   {Messages: append(hello.Messages[:2:2], llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{Name: "x"}}})},
		"unknown role": {Messages: []llm.Message{{Role: "function", Content: "x"}}},
	} {
		_, err := c.Stream(testCtx(t), req, nil)
		if !errors.Is(err, llm.ErrBadToolCall) && !errors.Is(err, llm.ErrUnknownRole) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}

// TestRefusesTools: the refusals of real servers are told from other
// errors, and a refusal is remembered per endpoint and model.
func TestRefusesTools(t *testing.T) {
	for _, msg := range []string{
		"registry.ollama.ai/library/gemma:2b does not support tools",
		`"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`,
		"tools param requires --jinja flag",
	} {
		srv := llmtest.NewServer(t, llmtest.Reply{Status: 400, Message: msg})
		c := newClient(t, srv)
		_, err := c.Stream(testCtx(t), llm.Request{Messages: hello.Messages, Tools: []llm.ToolSpec{readSpec}}, nil)
		if !llm.RefusesTools(err) {
			t.Errorf("%q: RefusesTools(%v) = false", msg, err)
		}
	}
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 400, Message: "messages: too many"})
	_, err := newClient(t, srv).Stream(testCtx(t), hello, nil)
	if err == nil || llm.RefusesTools(err) {
		t.Errorf("RefusesTools(%v) = true", err)
	}

	srv = llmtest.NewServer(t)
	a, b := newClient(t, srv), newClient(t, srv)
	other := newClient(t, srv, func(o *llm.Options) { o.Model = "other" })
	a.RefuseTools()
	if !b.ToolsRefused() || other.ToolsRefused() {
		t.Errorf("refused: same model %v, other model %v", b.ToolsRefused(), other.ToolsRefused())
	}
}

// TestEndlessCallNamesBounded: a server that sends a call's name in pieces
// without end is cut at MaxReplyBytes, as one that sends text or
// arguments without end.
func TestEndlessCallNamesBounded(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		piece := strings.Repeat(string(rune('a'+i%2)), 100) // never the name so far
		id := ""
		if i == 0 {
			id = `"id":"c","type":"function",`
		}
		fmt.Fprintf(&b, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,%s\"function\":{\"name\":\"%s\"}}]},\"finish_reason\":null}]}\n\n", id, piece)
	}
	b.WriteString("data: [DONE]\n\n")
	srv := llmtest.NewServer(t, llmtest.Reply{Raw: b.String()})
	c := newClient(t, srv, func(o *llm.Options) { o.MaxReplyBytes = 5000 })
	_, err := c.Stream(testCtx(t), llm.Request{Messages: hello.Messages, Tools: []llm.ToolSpec{readSpec}}, nil)
	if !errors.Is(err, llm.ErrReplyTooLarge) {
		t.Fatalf("err = %v, want ErrReplyTooLarge", err)
	}
}
