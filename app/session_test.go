package app

import (
	"log/slog"
	"testing"

	"github.com/zeroagent/zero/loop"
)

// A session that cannot be set up (an unknown profile) leaves nothing
// behind in its app: a long-running editor face would keep one per
// failed session/new.
func TestFailedSessionLeavesNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := Env{"HOME=" + home, "ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "ZERO_SANDBOX=local", "ZERO_STORE=off"}
	a, err := NewAppAt(t.TempDir(), nil, nil, slog.New(slog.DiscardHandler), env)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 3 {
		if _, err := a.SessionFor(SessionOpts{ID: NewID(), Profile: "nosuch"}, func(loop.Event) {}, true); err == nil {
			t.Fatal("a session with an unknown profile was made")
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pulls) != 0 || len(a.editorMCP) != 0 || len(a.pools) != 0 {
		t.Errorf("failed sessions left %d pull reporters, %d editor MCP lists, %d pools", len(a.pulls), len(a.editorMCP), len(a.pools))
	}
}
