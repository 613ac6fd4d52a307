package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/tools/texteditor"
)

const (
	restValue = "dt-7c1e5a9b3f0d2468"
	restAlias = "§§secret(DEPLOY_TOKEN)"
)

// TestToolsThatKeepAliases: the memory tools and behaviour_adjustment keep
// the secrets' aliases (they store what they get); the tools that use an
// argument as it is (a command, a file, a request) do not.
func TestToolsThatKeepAliases(t *testing.T) {
	keeps := func(tool loop.Tool) bool {
		k, ok := tool.(loop.AliasKeeper)
		return ok && k.KeepsAliases()
	}
	mem := tools.NewMemory(memoryService(t), t.TempDir()).Tools()
	if len(mem) != 4 {
		t.Fatalf("%d memory tools", len(mem))
	}
	for _, tool := range append(mem, tools.Behaviour{}) {
		if !keeps(tool) {
			t.Errorf("%s does not keep aliases: it would store a secret's value", tool.Name())
		}
	}
	for _, tool := range []loop.Tool{tools.Response{}, tools.CallSubordinate{}, &texteditor.Tool{}, &tools.CodeExecution{}, &tools.DocumentQuery{}, &tools.SearchEngine{}, tools.Input{}} {
		if keeps(tool) {
			t.Errorf("%s keeps aliases: it would run without the value", tool.Name())
		}
	}
}

// recordingAdjuster records the adjustments behaviour_adjustment gets.
type recordingAdjuster struct {
	mu  sync.Mutex
	got []string
}

func (r *recordingAdjuster) AdjustBehaviour(_ context.Context, _ *loop.Agent, adjustments string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, adjustments)
	return adjustments, nil
}

// TestMemoryKeepsAliasesAtRest: in a session with secrets, memory_save
// stores §§secret(NAME) (text and metadata), memory_load and memory_forget
// find it by the alias, behaviour_adjustment gets the alias, and an
// unknown alias is refused before any of them runs.
func TestMemoryKeepsAliasesAtRest(t *testing.T) {
	svc := memoryService(t)
	ws := t.TempDir()
	file := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(file, []byte("# the deploy token\nDEPLOY_TOKEN="+restValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, errs := secrets.Load(file)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	adj := &recordingAdjuster{}
	srv := llmtest.NewServer(t,
		call("memory_save", `{"text": "The deploy token is `+restAlias+`.", "note": "`+restAlias+`"}`),
		call("memory_load", `{"query": "`+restAlias+`", "threshold": 0}`),
		call("memory_save", `{"text": "unknown §§secret(NO_SUCH_TOKEN)"}`),
		call("behaviour_adjustment", `{"adjustments": "Deploy with `+restAlias+`."}`),
		call("behaviour_adjustment", `{"adjustments": "Use §§secret(NO_SUCH_TOKEN)."}`),
		call("memory_forget", `{"query": "`+restAlias+`", "threshold": 0}`),
		answer("done"),
	)
	client, err := llm.New(llm.Options{Model: "test", BaseURL: srv.URL(), RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	var stored []memory.Memory
	sess := loop.NewSession("rest", loop.Config{
		Setup: loop.Setup{
			Model:   client,
			Prompts: profiles.New(),
			Tools:   append([]loop.Tool{tools.Response{}, tools.Behaviour{Adjuster: adj}}, tools.NewMemory(svc, ws).Tools()...),
		},
		Secrets:   set,
		Workspace: ws,
		Limits:    loop.Limits{CriticalRetryDelay: time.Millisecond},
	}, func(e loop.Event) {
		if e.Type == loop.EventToolResult && e.Tool != "response" {
			results = append(results, e.Tool+": "+e.Text)
			if e.Tool == "memory_load" { // what the store held before memory_forget
				stored, _ = svc.List([]string{ws}, "", 0)
			}
		}
	})
	if _, err := sess.Run(ctx(t), "go"); err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(results) != 6 {
		t.Fatalf("%d tool results:\n%s", len(results), strings.Join(results, "\n"))
	}
	if len(stored) != 1 || stored[0].Text != "The deploy token is "+restAlias+"." || stored[0].Meta["note"] != restAlias {
		t.Errorf("the store holds %+v, want the alias in the text and the metadata", stored)
	}
	for i, want := range []string{"Memory saved with id", "The deploy token is " + restAlias, "unknown secret alias §§secret(NO_SUCH_TOKEN)", "", "unknown secret alias §§secret(NO_SUCH_TOKEN)", `"memories_deleted": "1"`} {
		if !strings.Contains(results[i], want) {
			t.Errorf("result %d lacks %q: %s", i, want, results[i])
		}
	}
	adj.mu.Lock()
	if len(adj.got) != 1 || adj.got[0] != "Deploy with "+restAlias+"." {
		t.Errorf("behaviour_adjustment got %q, want the alias once", adj.got)
	}
	adj.mu.Unlock()
	if left, _ := svc.List([]string{ws}, "", 0); len(left) != 0 {
		t.Errorf("memory_forget by the alias left %+v", left)
	}
}
