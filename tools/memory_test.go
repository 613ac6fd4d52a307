package tools_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/store"
	"github.com/zeroagent/zero/tools"
)

// memoryRun runs one task whose replies call the memory tools, and returns
// the tool results the model got, in order.
func memoryRun(t *testing.T, svc *memory.Service, ws string, replies ...llmtest.Reply) []string {
	t.Helper()
	srv := llmtest.NewServer(t, replies...)
	client, err := llm.New(llm.Options{Model: "test", BaseURL: srv.URL(), RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	sess := loop.NewSession("mem", loop.Config{
		Setup: loop.Setup{
			Model:   client,
			Prompts: profiles.New(),
			Tools:   append([]loop.Tool{tools.Response{}}, tools.NewMemory(svc, ws).Tools()...),
		},
		Workspace: ws,
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, func(e loop.Event) {
		if e.Type == loop.EventToolResult && e.Tool != "response" {
			results = append(results, e.Text)
		}
	})
	if _, err := sess.Run(ctx(t), "go"); err != nil {
		t.Fatalf("run: %v", err)
	}
	return results
}

func memoryService(t *testing.T) *memory.Service {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return memory.New(memory.Options{Store: st})
}

func TestMemoryTools(t *testing.T) {
	svc := memoryService(t)
	ws := t.TempDir()
	// The user's own memory: the agent reads it, never deletes it.
	user, err := svc.Save(context.Background(), memory.Memory{Scope: "", Text: "The user's editor is Zed and the deploy port policy is strict."})
	if err != nil {
		t.Fatal(err)
	}
	res := memoryRun(t, svc, ws,
		call("memory_save", `{"text": "The deploy port is 8443.", "area": "main", "topic": "deploy", "id": "forged", "timestamp": "1999"}`),
		call("memory_load", `{"query": "deploy port", "threshold": "0.5", "limit": 5}`),
		call("memory_load", `{"query": "kubernetes helm chart"}`),
		call("memory_load", `{"query": "deploy", "filter": "area == "}`),
		call("memory_load", `{"query": "deploy", "threshold": "very"}`),
		call("memory_load", `{"query": "deploy", "threshold": 3}`),
		call("memory_save", `{"text": "`+strings.Repeat("x", tools.MaxMemoryBytes+1)+`"}`),
		call("memory_save", `{"text": "x", "area": "../../etc"}`),
		call("memory_delete", `{"ids": "`+user[0].ID+`, nosuchid"}`),
		call("memory_forget", `{"query": "deploy port"}`),
		call("memory_delete", `{}`),
		answer("done"),
	)
	if len(res) != 11 {
		t.Fatalf("%d tool results:\n%s", len(res), strings.Join(res, "\n---\n"))
	}
	want := []string{
		"Memory saved with id",
		"Content: The deploy port is 8443.",
		"No memories found for specified query: kubernetes helm chart",
		"memory filter",
		"tool_args.threshold must be a number",
		"a similarity from 0 to 1",
		"a memory holds at most",
		"tool_args.area must be a short name",
		"the user's own memories, which only the user changes",
		`"memories_deleted": "1"`,
		"memory_delete needs tool_args.ids",
	}
	for i, w := range want {
		if !strings.Contains(res[i], w) {
			t.Errorf("result %d lacks %q:\n%s", i, w, res[i])
		}
	}
	// The metadata the model sent is kept, except the keys Zero sets.
	if !strings.Contains(res[1], "topic: deploy") || strings.Contains(res[1], "forged") || strings.Contains(res[1], "1999") {
		t.Errorf("memory_load shows metadata:\n%s", res[1])
	}
	// The user's memory is still there; the workspace's is forgotten.
	if got, _ := svc.Get([]string{user[0].ID}); len(got) != 1 {
		t.Error("the agent deleted the user's own memory")
	}
	if n, _ := svc.Search(context.Background(), memory.Query{Text: "deploy port 8443", Scopes: []string{ws}, Threshold: -1}); len(n) != 0 {
		t.Errorf("memory_forget left %+v", n)
	}
}
