package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm"
)

func TestRunServesDemoScript(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()

	outR, outW := io.Pipe()
	stderr := &proctest.Buffer{}
	done := make(chan int, 1)
	go func() { // owned: the test waits on done
		defer outW.Close()
		done <- run(runCtx, []string{"-script", "testdata/demo.json", "-addr", "127.0.0.1:0"}, outW, stderr)
	}()

	sc := bufio.NewScanner(outR)
	if !sc.Scan() {
		t.Fatalf("no URL on stdout: %v", sc.Err())
	}
	url := sc.Text()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("stdout line = %q, want a loopback base URL", url)
	}

	c, err := llm.New(llm.Options{Model: "fake", BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var tool struct {
		Thoughts []string          `json:"thoughts"`
		Headline string            `json:"headline"`
		ToolName string            `json:"tool_name"`
		ToolArgs map[string]string `json:"tool_args"`
	}
	if err := json.Unmarshal([]byte(res.Content), &tool); err != nil {
		t.Fatalf("demo reply is not a JSON tool request: %v\n%s", err, res.Content)
	}
	if diff := cmp.Diff(map[string]string{"text": "Hello from fakellm"}, tool.ToolArgs); diff != "" || tool.ToolName != "response" {
		t.Errorf("tool %q args (-want +got):\n%s", tool.ToolName, diff)
	}
	if res.Reasoning == "" {
		t.Error("demo reply has no reasoning")
	}

	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("run exit code = %d, want 0", code)
		}
	case <-ctx.Done():
		t.Fatal("run did not return after cancel")
	}
	if sc.Scan() {
		t.Errorf("more than one line on stdout: %q", sc.Text())
	}
	logs := stderr.String()
	if !strings.Contains(logs, "llmtest request") || !strings.Contains(logs, "client_closed=false") {
		t.Errorf("stderr lacks the request log:\n%s", logs)
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no script", nil, 2},
		{"bad flag", []string{"-nope"}, 2},
		{"missing file", []string{"-script", "testdata/missing.json"}, 1},
		{"public address", []string{"-script", "testdata/demo.json", "-addr", "0.0.0.0:0"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			if got := run(t.Context(), tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestRunCounts serves a repeated script on both wire APIs and writes the
// request counts when stopped: the scripted requests and the memory
// requests it answered itself.
func TestRunCounts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	dir := t.TempDir()
	script, counts := filepath.Join(dir, "script.json"), filepath.Join(dir, "counts.json")
	if err := os.WriteFile(script, []byte(`{"repeat":2,"replies":[{"content":"once"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { // owned: the test waits on done
		defer outW.Close()
		done <- run(runCtx, []string{"-script", script, "-counts", counts}, outW, io.Discard)
	}()
	sc := bufio.NewScanner(outR)
	if !sc.Scan() {
		t.Fatalf("no URL on stdout: %v", sc.Err())
	}
	url := sc.Text()
	post := func(path, body string) string {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if got := post("/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`); !strings.Contains(got, `"once"`) {
		t.Errorf("chat answer: %s", got)
	}
	if got := post("/responses", `{"model":"m","input":"hi"}`); !strings.Contains(got, `"once"`) {
		t.Errorf("responses answer: %s", got)
	}
	post("/chat/completions", `{"model":"m","messages":[{"role":"system","content":"AI provide a search query for search engine where previous memories are stored"},{"role":"user","content":"x"}]}`)
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
	b, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != `{"memory_requests":1,"requests":2}` {
		t.Errorf("counts = %s", got)
	}
}
