package memory

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/store"
)

// utilityFunc is a utility model answering with a function of the request.
type utilityFunc func(system, message string) string

func (f utilityFunc) Stream(_ context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	text := f(req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content)
	return llm.Result{Content: text}, nil
}

func consolidationRig(t *testing.T, answer utilityFunc) (*Extensions, *loop.Agent, *Service) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := New(Options{Store: st})
	sess := loop.NewSession("c", loop.Config{Setup: loop.Setup{Model: answer, Prompts: profiles.New()}}, func(loop.Event) {})
	x := NewExtensions(svc, func(*loop.Agent) string { return "/ws" }, DefaultSettings())
	t.Cleanup(x.Close)
	return x, sess.Agent0(), svc
}

var shownID = regexp.MustCompile(`ID: (\S+)`)

func TestConsolidation(t *testing.T) {
	ctx := context.Background()
	old := "The staging database runs on port 5432 on host heron."

	t.Run("merge removes the similar memory and saves the merged text", func(t *testing.T) {
		x, a, svc := consolidationRig(t, func(system, message string) string {
			ids := shownID.FindAllStringSubmatch(message, -1)
			if !strings.Contains(system, "Memory Consolidation") || len(ids) != 1 {
				t.Errorf("not a consolidation request with one similar memory:\n%s", message)
				return "{}"
			}
			return `{"action": "merge", "memories_to_remove": ["` + ids[0][1] + `"], "new_memory_content": "The staging database runs on port 5433 on host heron (moved from 5432)."}`
		})
		if _, err := svc.Save(ctx, Memory{Scope: "/ws", Area: AreaFragments, Text: old}); err != nil {
			t.Fatal(err)
		}
		saved, err := x.consolidate(ctx, a, Memory{Scope: "/ws", Area: AreaFragments, Text: "The staging database now runs on port 5433 on host heron.", Meta: map[string]any{}})
		if err != nil || len(saved) != 1 || !strings.Contains(saved[0].Text, "moved from 5432") {
			t.Fatalf("merge: %+v, %v", saved, err)
		}
		all, _ := svc.List([]string{"/ws"}, "", 0)
		if len(all) != 1 || all[0].ID != saved[0].ID {
			t.Fatalf("after a merge: %+v", all)
		}
	})

	t.Run("a hostile answer cannot delete what it was not shown, nor replace what is not near", func(t *testing.T) {
		var other string
		x, a, svc := consolidationRig(t, func(_, message string) string {
			return `{"action": "replace", "memories_to_remove": ["` + other + `", "nosuchid"` +
				strings.Repeat(`, "x"`, 3) + `], "new_memory_content": "` + strings.Repeat("A", 1<<20) + `"}`
		})
		ms, err := svc.Save(ctx,
			Memory{Scope: "/ws", Area: AreaFragments, Text: old},
			Memory{Scope: "/ws", Area: AreaMain, Text: "The user's cat is called Miso."}, // another area: never shown
			Memory{Scope: "", Area: AreaFragments, Text: old + " (the user's own)"},      // another scope: never shown
		)
		if err != nil {
			t.Fatal(err)
		}
		other = ms[1].ID
		saved, err := x.consolidate(ctx, a, Memory{Scope: "/ws", Area: AreaFragments, Text: "The staging database runs on port 5433 on host heron.", Meta: map[string]any{}})
		if err != nil || len(saved) != 1 {
			t.Fatalf("consolidate: %+v, %v", saved, err)
		}
		if saved[0].Text != "The staging database runs on port 5433 on host heron." {
			t.Errorf("a 1 MiB answer became the memory (%d bytes)", len(saved[0].Text))
		}
		left, _ := svc.Get([]string{ms[0].ID, ms[1].ID, ms[2].ID})
		if len(left) != 3 {
			t.Errorf("the answer deleted memories: %d of 3 left", len(left))
		}
	})

	t.Run("nonsense from the utility model keeps both", func(t *testing.T) {
		x, a, svc := consolidationRig(t, func(_, _ string) string { return "I cannot help with that." })
		if _, err := svc.Save(ctx, Memory{Scope: "/ws", Area: AreaFragments, Text: old}); err != nil {
			t.Fatal(err)
		}
		if _, err := x.consolidate(ctx, a, Memory{Scope: "/ws", Area: AreaFragments, Text: "The staging database runs on port 5432 on host heron today.", Meta: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if all, _ := svc.List([]string{"/ws"}, "", 0); len(all) != 2 {
			t.Errorf("%d memories, want both", len(all))
		}
	})
}

func TestParseItemsBounds(t *testing.T) {
	huge := "[" + strings.Repeat(`"a fact", `, 10000) + `"` + strings.Repeat("x", 1<<20) + `"]`
	if got := parseItems(huge); len(got) != maxItems {
		t.Errorf("%d items from a flood, want at most %d", len(got), maxItems)
	}
	for _, in := range []string{"", "nothing to see", "{", "[1, 2, null, true]", `{"problem": "p"}`} {
		for _, it := range parseItems(in) {
			if strings.TrimSpace(it) == "" {
				t.Errorf("parseItems(%q) gave an empty item", in)
			}
		}
	}
	got := parseItems("Here you go:\n~~~json\n[\n  {\"problem\": \"tests hang\", \"solution\": \"kill docker\"},\n  'single quoted',\n]\n~~~")
	if len(got) != 2 || !strings.HasPrefix(got[0], "# Problem\ntests hang\n# Solution\nkill docker") || got[1] != "single quoted" {
		t.Errorf("lenient parse: %q", got)
	}
}
