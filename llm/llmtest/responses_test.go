package llmtest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/zeroagent/zero/llm"
)

// TestResponsesStream reads the Responses API stream with OpenAI's own
// client: the events in OpenAI's order, a function call, then a text
// answer, each completed with its usage.
func TestResponsesStream(t *testing.T) {
	t.Parallel()
	srv := NewServer(t,
		Reply{ToolCalls: []ScriptedCall{{ID: "call_a", Name: "shell", Arguments: `{"command":["bash","-lc","echo hello"]}`}}, ChunkSize: 8},
		Reply{Content: "done, all of it", ChunkSize: 4},
	)
	client := openai.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	type turn struct {
		Types     []string
		Text      string // the text deltas joined
		Args      string // the argument deltas joined
		Completed responses.Response
	}
	run := func(input string) turn {
		stream := client.Responses.NewStreaming(testCtx(t), responses.ResponseNewParams{
			Model: "m",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(input)},
		})
		defer stream.Close()
		var got turn
		for stream.Next() {
			ev := stream.Current()
			got.Types = append(got.Types, ev.Type)
			switch ev.Type {
			case "response.output_text.delta":
				got.Text += ev.Delta
			case "response.function_call_arguments.delta":
				got.Args += ev.Delta
			case "response.completed":
				got.Completed = ev.AsResponseCompleted().Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream: %v", err)
		}
		return got
	}

	call := run("run echo hello")
	wantTypes := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	if diff := cmp.Diff(wantTypes, call.Types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if call.Args != `{"command":["bash","-lc","echo hello"]}` {
		t.Errorf("argument deltas = %q", call.Args)
	}
	if n := len(call.Completed.Output); n != 1 {
		t.Fatalf("completed output has %d items, want 1", n)
	}
	fc := call.Completed.Output[0].AsFunctionCall()
	if fc.Type != "function_call" || fc.Name != "shell" || fc.CallID != "call_a" || fc.Arguments != call.Args || !strings.HasPrefix(fc.ID, "fc_") {
		t.Errorf("function call item = %+v", fc)
	}
	if call.Completed.Status != "completed" || call.Completed.Usage.InputTokens == 0 || call.Completed.Usage.TotalTokens == 0 || !strings.HasPrefix(call.Completed.ID, "resp_") {
		t.Errorf("completed response: status %q, id %q, usage %+v", call.Completed.Status, call.Completed.ID, call.Completed.Usage)
	}

	answer := run("and now?")
	wantTypes = []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if diff := cmp.Diff(wantTypes, answer.Types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if answer.Text != "done, all of it" || answer.Completed.OutputText() != "done, all of it" {
		t.Errorf("text deltas %q, completed text %q", answer.Text, answer.Completed.OutputText())
	}
	if answer.Completed.ID == call.Completed.ID {
		t.Errorf("both responses have id %q", answer.Completed.ID)
	}
	if answer.Completed.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v, want output tokens", answer.Completed.Usage)
	}

	var apiErr *openai.Error
	if _, err := client.Responses.New(testCtx(t), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("more")},
	}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Message != NoReplyMessage {
		t.Errorf("request past the script: err = %v, want 400 %q", err, NoReplyMessage)
	}
}

// TestResponsesInput records a Responses request as chat messages (the
// instructions, the items, a call and its output) and answers a request
// not streamed with the whole response object.
func TestResponsesInput(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Reply{Match: "hello\n", Content: "done", Usage: &Usage{PromptTokens: 7, CompletionTokens: 1, TotalTokens: 8}})
	body := `{"model":"gpt-x","instructions":"be brief","stream":false,
		"tools":[{"type":"function","name":"shell","parameters":{}},{"type":"web_search"}],
		"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"say hello"}]},
			{"type":"function_call","name":"shell","arguments":"{\"command\":[\"echo\",\"hello\"]}","call_id":"c1"},
			{"type":"function_call_output","call_id":"c1","output":"hello\n"},
			{"type":"reasoning","summary":[]}
		]}`
	res, err := http.Post(srv.URL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var got struct {
		Object string `json:"object"`
		Status string `json:"status"`
		Model  string `json:"model"`
		Output []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage map[string]any `json:"usage"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v: %s", res.StatusCode, err, raw)
	}
	if got.Object != "response" || got.Status != "completed" || got.Model != "gpt-x" || len(got.Output) != 1 ||
		got.Output[0].Type != "message" || got.Output[0].Role != "assistant" || len(got.Output[0].Content) != 1 ||
		got.Output[0].Content[0].Type != "output_text" || got.Output[0].Content[0].Text != "done" {
		t.Errorf("response = %s", raw)
	}
	if got.Usage["input_tokens"] != 7.0 || got.Usage["output_tokens"] != 1.0 || got.Usage["total_tokens"] != 8.0 {
		t.Errorf("usage = %v", got.Usage)
	}

	recs := srv.Requests()
	if len(recs) != 1 {
		t.Fatalf("%d requests recorded, want 1", len(recs))
	}
	want := []llm.Message{
		{Role: llm.System, Content: "be brief"},
		{Role: llm.User, Content: "say hello"},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":["echo","hello"]}`}}},
		{Role: llm.Tool, ToolCallID: "c1", Content: "hello\n"},
	}
	if diff := cmp.Diff(want, recs[0].Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shell", "web_search"}, recs[0].Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if recs[0].Model != "gpt-x" || recs[0].Reply != 0 {
		t.Errorf("model %q, reply %d", recs[0].Model, recs[0].Reply)
	}
}

// TestResponsesMemory answers one of Zero's memory requests that reaches
// the Responses endpoint as the chat endpoint does, without the script.
func TestResponsesMemory(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	body := `{"model":"m","input":[{"role":"system","content":"` + markMemorize + `"},{"role":"user","content":"history"}]}`
	res, err := http.Post(srv.URL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(raw), `"text":"[]"`) {
		t.Errorf("status %d: %s", res.StatusCode, raw)
	}
	if n, m := len(srv.Requests()), len(srv.MemoryRequests()); n != 0 || m != 1 {
		t.Errorf("%d requests, %d memory requests; want 0 and 1", n, m)
	}
}

func TestLoadScriptRepeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := LoadScript(write("loop.json", `{"repeat":3,"replies":[{"content":"call"},{"content":"answer"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, r := range got.Replies {
		contents = append(contents, r.Content)
	}
	if diff := cmp.Diff([]string{"call", "answer", "call", "answer", "call", "answer"}, contents); diff != "" || got.Repeat != 0 {
		t.Errorf("replies (-want +got):\n%s\nrepeat %d", diff, got.Repeat)
	}

	srv := NewServer(t, got.Replies...)
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for range 7 {
		res, err := ask(t, c, "go")
		if err != nil {
			answers = append(answers, "error")
			continue
		}
		answers = append(answers, res.Content)
	}
	if diff := cmp.Diff([]string{"call", "answer", "call", "answer", "call", "answer", "error"}, answers); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	for name, text := range map[string]string{
		"negative": `{"repeat":-1,"replies":[{"content":"x"}]}`,
		"too many": `{"repeat":1048576,"replies":[{"content":"x"},{"content":"y"}]}`,
	} {
		if _, err := LoadScript(write(name+".json", text)); !errors.Is(err, ErrBadScript) {
			t.Errorf("%s: err = %v, want ErrBadScript", name, err)
		}
	}
}
