package llm_test

import (
	"context"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

type ctxKey struct{}

// The embedder tells OnUsage what each call used (usage.prompt_tokens),
// with the call's own context, so the caller can count it for its run.
func TestEmbedderOnUsage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	var got []llm.Usage
	var ctxs []any
	e, err := llm.NewEmbedder(llm.EmbedderOptions{Model: "e", BaseURL: srv.URL(), OnUsage: func(ctx context.Context, u llm.Usage) {
		got = append(got, u)
		ctxs = append(ctxs, ctx.Value(ctxKey{}))
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(t.Context(), ctxKey{}, "run-1")
	if _, err := e.Embed(ctx, []string{"twelve chars", "four"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PromptTokens != 3+1 || got[0].TotalTokens != 4 || ctxs[0] != "run-1" {
		t.Errorf("OnUsage got %+v with %v, want one call of 4 tokens with the call's context", got, ctxs)
	}
}
