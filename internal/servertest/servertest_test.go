package servertest_test

import (
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// The faces' tests run the product's assembly: the agent the scripted
// model is asked by has every built-in tool app gives it, not a test's
// short list.
func TestFacesRunTheRealToolSet(t *testing.T) {
	t.Parallel()
	t.Run("without a store", func(t *testing.T) {
		t.Parallel()
		toolsOffered(t, servertest.Options{}, "response", "call_subordinate", "text_editor", "code_execution_tool", "input", "document_query")
	})
	t.Run("with a store", func(t *testing.T) {
		t.Parallel()
		toolsOffered(t, servertest.Options{Store: true}, "document_query", "memory_save", "memory_load", "memory_delete", "memory_forget", "behaviour_adjustment")
	})
}

func toolsOffered(t *testing.T, opts servertest.Options, want ...string) {
	opts.Replies = []llmtest.Reply{{Content: servertest.Answer("done")}}
	env := servertest.New(t, opts)
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Prompt(t.Context(), "hello")
	if err != nil || res.Err != nil {
		t.Fatalf("prompt: %v, %v", err, res.Err)
	}
	reqs := env.Model.Requests()
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 {
		t.Fatal("the model was not asked")
	}
	for _, tool := range want {
		if !reqs[0].Teaches(tool) {
			t.Errorf("the request teaches no %s tool", tool)
		}
	}
}
