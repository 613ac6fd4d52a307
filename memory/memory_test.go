package memory_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "zero.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// embedder is the real OpenAI client against the scripted server's
// /v1/embeddings (a deterministic bag of words).
func embedder(t *testing.T) *llm.Embedder {
	t.Helper()
	srv := llmtest.NewServer(t)
	e, err := llm.NewEmbedder(llm.EmbedderOptions{Model: "llmtest-embed", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const ws = "/home/u/project"

var facts = []memory.Memory{
	{Scope: ws, Area: memory.AreaMain, Text: "The user prefers tabs over spaces in Go files."},
	{Scope: ws, Area: memory.AreaFragments, Text: "The deploy script is scripts/deploy.sh and needs the staging token."},
	{Scope: ws, Area: memory.AreaSolutions, Text: "# Problem\nThe tests hang on CI.\n# Solution\nSet GOFLAGS=-count=1 and kill the leftover docker containers."},
	{Scope: "", Area: memory.AreaMain, Text: "The user's name is Ada and she likes short answers."},
}

func TestSearchByKeywords(t *testing.T) {
	for _, emb := range []bool{false, true} {
		name := map[bool]string{false: "keywords only", true: "hybrid"}[emb]
		t.Run(name, func(t *testing.T) {
			var e memory.Embedder
			if emb {
				e = embedder(t)
			}
			svc := memory.New(memory.Options{Store: openStore(t), Embedder: e})
			ctx := context.Background()
			saved, err := svc.Save(ctx, facts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != 4 || saved[0].ID == "" || saved[0].ID == saved[1].ID {
				t.Fatalf("saved %+v", saved)
			}
			scopes := []string{ws, ""}

			hits, err := svc.Search(ctx, memory.Query{Text: "does the user prefer tabs or spaces?", Scopes: scopes})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || !strings.Contains(hits[0].Text, "tabs over spaces") {
				t.Fatalf("tabs: %+v", hits)
			}

			// A word and its plural are one term (files, file): a strict
			// query that names each of the memory's words finds it.
			hits, err = svc.Search(ctx, memory.Query{Text: "Go file tab", Scopes: scopes, Strict: true, Threshold: 0.9})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || !strings.Contains(hits[0].Text, "tabs over spaces") {
				t.Fatalf("file, tab: %+v", hits)
			}

			// The user's own scope is searched too.
			hits, err = svc.Search(ctx, memory.Query{Text: "user name", Scopes: scopes, Threshold: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || !strings.Contains(hits[0].Text, "Ada") {
				t.Fatalf("name: %+v", hits)
			}

			// A filter on the area (Agent Zero's recall filters this way).
			hits, err = svc.Search(ctx, memory.Query{Text: "tests hang CI docker", Scopes: scopes, Filter: "area == 'solutions'", Threshold: 0.3})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].Area != memory.AreaSolutions {
				t.Fatalf("solutions: %+v", hits)
			}
			hits, err = svc.Search(ctx, memory.Query{Text: "tests hang CI docker", Scopes: scopes, Filter: "area == 'main' or area == 'fragments'", Threshold: 0.3})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Area == memory.AreaSolutions {
					t.Fatalf("the filter let a solution through: %+v", hits)
				}
			}

			// Nothing related: nothing found.
			hits, err = svc.Search(ctx, memory.Query{Text: "kubernetes helm chart values", Scopes: scopes})
			if err != nil || len(hits) != 0 {
				t.Fatalf("unrelated: %+v, %v", hits, err)
			}

			// Another workspace sees none of this one's memories.
			hits, err = svc.Search(ctx, memory.Query{Text: "tabs spaces deploy script", Scopes: []string{"/other", ""}, Threshold: -1})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Scope == ws {
					t.Fatalf("another workspace found %q", h.Text)
				}
			}
		})
	}
}

func TestFilterErrorsAndVars(t *testing.T) {
	svc := memory.New(memory.Options{Store: openStore(t)})
	ctx := context.Background()
	if _, err := svc.Save(ctx, memory.Memory{Scope: ws, Text: "tagged fact about caching", Meta: map[string]any{"topic": "cache", "priority": 2}}); err != nil {
		t.Fatal(err)
	}
	_, err := svc.Search(ctx, memory.Query{Text: "caching", Scopes: []string{ws}, Filter: "area == "})
	if !errors.Is(err, memory.ErrFilter) {
		t.Fatalf("a broken filter: %v", err)
	}
	hits, err := svc.Search(ctx, memory.Query{Text: "caching fact", Scopes: []string{ws}, Filter: "topic == 'cache' and priority >= 2 and area == 'main'"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("metadata filter: %+v, %v", hits, err)
	}
	// A name that is not there reads as None: false, not an error.
	hits, err = svc.Search(ctx, memory.Query{Text: "caching fact", Scopes: []string{ws}, Filter: "missing == 'x'"})
	if err != nil || len(hits) != 0 {
		t.Fatalf("missing name: %+v, %v", hits, err)
	}
	out := memory.Format([]memory.Memory{hits0(t, svc)})
	for _, want := range []string{"id: ", "timestamp: ", "area: main", "topic: cache", "Content: tagged fact about caching"} {
		if !strings.Contains(out, want) {
			t.Errorf("Format lacks %q:\n%s", want, out)
		}
	}
}

func hits0(t *testing.T, svc *memory.Service) memory.Memory {
	t.Helper()
	hits, err := svc.Search(context.Background(), memory.Query{Text: "caching fact", Scopes: []string{ws}})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %+v, %v", hits, err)
	}
	return hits[0].Memory
}

func TestForget(t *testing.T) {
	for _, emb := range []bool{false, true} {
		t.Run(map[bool]string{false: "keywords only", true: "hybrid"}[emb], func(t *testing.T) {
			var e memory.Embedder
			if emb {
				e = embedder(t)
			}
			svc := memory.New(memory.Options{Store: openStore(t), Embedder: e})
			ctx := context.Background()
			if _, err := svc.Save(ctx, facts...); err != nil {
				t.Fatal(err)
			}
			gone, err := svc.Forget(ctx, memory.Query{Text: "deploy script staging token", Scopes: []string{ws, ""}, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(gone) != 1 || !strings.Contains(gone[0].Text, "deploy script") {
				t.Fatalf("forgot %+v", gone)
			}
			n, _ := memory.New(memory.Options{Store: openStore(t)}).Forget(ctx, memory.Query{Text: "x y z"})
			_ = n
			hits, err := svc.Search(ctx, memory.Query{Text: "deploy script staging token", Scopes: []string{ws, ""}, Threshold: -1})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if strings.Contains(h.Text, "deploy script") {
					t.Fatalf("still there: %+v", h)
				}
			}
		})
	}
}

func TestEmbedLater(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	// Saved without a model (or while the endpoint was down)...
	if _, err := memory.New(memory.Options{Store: st}).Save(ctx, facts...); err != nil {
		t.Fatal(err)
	}
	// ... then a model is configured: Embed fills in the vectors.
	svc := memory.New(memory.Options{Store: st, Embedder: embedder(t)})
	n, err := svc.Embed(ctx, []string{ws, ""})
	if err != nil || n != len(facts) {
		t.Fatalf("embedded %d, %v", n, err)
	}
	n, err = svc.Embed(ctx, []string{ws, ""})
	if err != nil || n != 0 {
		t.Fatalf("embedded again %d, %v", n, err)
	}
	// Another model: everything is embedded again, and the old vectors go.
	srv := llmtest.NewServer(t)
	other, err := llm.NewEmbedder(llm.EmbedderOptions{Model: "another-embed", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if n, err = memory.New(memory.Options{Store: st, Embedder: other}).Embed(ctx, []string{ws, ""}); err != nil || n != len(facts) {
		t.Fatalf("embedded with another model %d, %v", n, err)
	}
	old := 0
	for _, sc := range []string{ws, ""} {
		st.MemoryVectors(sc, "llmtest-embed", func(string, string, []float32) { old++ })
	}
	if old != 0 {
		t.Errorf("%d vectors of the earlier model left", old)
	}
}
