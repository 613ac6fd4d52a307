package llm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

func TestModels(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL(), APIKey: "sk-secret-for-models"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.Models(context.Background())
	if err != nil || !slices.Contains(ids, llmtest.ModelName) {
		t.Errorf("Models = %v, %v; want %q listed", ids, err, llmtest.ModelName)
	}

	c, _ = llm.New(llm.Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-secret-for-models"})
	if _, err := c.Models(context.Background()); err == nil || strings.Contains(err.Error(), "sk-secret") || !strings.Contains(err.Error(), "connection") {
		t.Errorf("unreachable endpoint: %v", err)
	}
}
