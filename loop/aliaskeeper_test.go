package loop_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
)

// keeperTool is a tool that records its arguments and may keep aliases
// (loop.AliasKeeper).
type keeperTool struct {
	name  string
	keeps bool
	mu    *sync.Mutex
	got   *[]map[string]any // the arguments of every run
}

func newKeeper(name string, keeps bool) keeperTool {
	return keeperTool{name: name, keeps: keeps, mu: &sync.Mutex{}, got: &[]map[string]any{}}
}

func (k keeperTool) Name() string       { return k.name }
func (k keeperTool) KeepsAliases() bool { return k.keeps }
func (k keeperTool) Execute(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
	k.mu.Lock()
	*k.got = append(*k.got, c.Args)
	k.mu.Unlock()
	return loop.ToolResult{Text: "kept"}, nil
}

// runs returns the "text" argument of every run.
func (k keeperTool) runs() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, args := range *k.got {
		text, _ := args["text"].(string)
		out = append(out, text)
	}
	return out
}

// first returns the arguments of the first run.
func (k keeperTool) first() map[string]any {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(*k.got) == 0 {
		return nil
	}
	return (*k.got)[0]
}

// TestAliasKeeperGetsAliases: a tool that keeps aliases gets §§secret(NAME)
// as the model wrote it, nested too, and even when an extension put the
// value in its arguments; one whose KeepsAliases is false, and any other
// tool, gets the value. The gate sees aliases for both.
func TestAliasKeeperGetsAliases(t *testing.T) {
	t.Parallel()
	keeper := newKeeper("keep", true)
	notKeeper := newKeeper("nokeep", false)
	var plainGot []string
	var plainMu sync.Mutex
	plain := toolFunc{"plain", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		text, _ := c.Args["text"].(string)
		plainMu.Lock()
		plainGot = append(plainGot, text)
		plainMu.Unlock()
		return loop.ToolResult{Text: "ok"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("a", "keep", map[string]any{"text": "token is " + tokenAlias, "meta": map[string]any{"k": []any{tokenAlias}}})},
		{content: toolReq("b", "nokeep", map[string]any{"text": "token is " + tokenAlias})},
		{content: toolReq("c", "plain", map[string]any{"text": "token is " + tokenAlias})},
		{content: toolReq("d", "keep", map[string]any{"text": "rewritten"})},
		{content: respond("done")},
	}}
	reg := loop.Builtins()
	reg.Register(hooks.ToolExecuteBefore, "_60_rewrite", func(_ context.Context, p hooks.Payload) error {
		if bp := p.(*loop.ToolBeforePayload); bp.ToolName == "keep" && bp.Args["text"] == "rewritten" {
			bp.Args["text"] = "value " + secretToken
		}
		return nil
	})
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, keeper, notKeeper, plain}, registry: reg, secrets: secretSet(t)})
	var gateMu sync.Mutex
	var gateSaw []string
	sess.SetGate(func(_ context.Context, p *loop.ToolBeforePayload) error {
		text, _ := p.Args["text"].(string)
		gateMu.Lock()
		gateSaw = append(gateSaw, p.ToolName+": "+text)
		gateMu.Unlock()
		return nil
	})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got := keeper.runs(); len(got) != 2 || got[0] != "token is "+tokenAlias || got[1] != "value "+tokenAlias {
		t.Errorf("the keeper got %q, want the aliases", got)
	}
	if m, ok := keeper.first()["meta"].(map[string]any); !ok || len(m["k"].([]any)) != 1 || m["k"].([]any)[0] != tokenAlias {
		t.Errorf("the keeper got the nested argument as %v, want the alias", keeper.first()["meta"])
	}
	if got := notKeeper.runs(); len(got) != 1 || got[0] != "token is "+secretToken {
		t.Errorf("a tool whose KeepsAliases is false got %q, want the value", got)
	}
	plainMu.Lock()
	if len(plainGot) != 1 || plainGot[0] != "token is "+secretToken {
		t.Errorf("a tool that is no AliasKeeper got %q, want the value", plainGot)
	}
	plainMu.Unlock()
	gateMu.Lock()
	defer gateMu.Unlock()
	for _, g := range gateSaw {
		if strings.Contains(g, tokenCore) {
			t.Errorf("the gate saw a value: %s", g)
		}
	}
	if len(gateSaw) != 5 {
		t.Errorf("the gate was asked %d times, want 5: %q", len(gateSaw), gateSaw)
	}
}

// TestAliasKeeperRefusesUnknownAlias: an alias of no secret refuses the
// call for a tool that keeps aliases as for any other; neither runs, and
// the gate is not asked.
func TestAliasKeeperRefusesUnknownAlias(t *testing.T) {
	t.Parallel()
	keeper := newKeeper("keep", true)
	plain := newKeeper("plain", false)
	model := &fakeModel{replies: []reply{
		{content: toolReq("a", "keep", map[string]any{"text": "token is §§secret(NOPE)"})},
		{content: toolReq("b", "plain", map[string]any{"text": "token is §§secret(NOPE)"})},
		{content: toolReq("c", "keep", map[string]any{"text": "both " + tokenAlias + " and §§secret(other_one)"})},
		{content: respond("done")},
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, keeper, plain}, secrets: secretSet(t)})
	var gateMu sync.Mutex
	var asked []string
	sess.SetGate(func(_ context.Context, p *loop.ToolBeforePayload) error {
		gateMu.Lock()
		asked = append(asked, p.ToolName)
		gateMu.Unlock()
		return nil
	})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got := keeper.runs(); len(got) != 0 {
		t.Errorf("the keeper ran with an unknown alias: %q", got)
	}
	if got := plain.runs(); len(got) != 0 {
		t.Errorf("the plain tool ran with an unknown alias: %q", got)
	}
	results := rec.ofType(loop.EventToolResult)
	var refused []string
	for _, e := range results {
		if e.Tool == "keep" || e.Tool == "plain" {
			refused = append(refused, e.Text)
			if e.Status != loop.ToolFailed || !strings.Contains(e.Text, "unknown secret") || !strings.Contains(e.Text, tokenAlias) {
				t.Errorf("%s: result %s %q, want the refusal naming the secrets that exist", e.Tool, e.Status, e.Text)
			}
		}
	}
	if len(refused) != 3 {
		t.Errorf("%d refusals, want 3: %q", len(refused), refused)
	}
	if !strings.Contains(refused[len(refused)-1], "§§secret(OTHER_ONE)") {
		t.Errorf("the refusal does not name the unknown alias: %q", refused[len(refused)-1])
	}
	gateMu.Lock()
	defer gateMu.Unlock()
	for _, name := range asked {
		if name != "response" {
			t.Errorf("the gate was asked about %s, whose call cannot run", name)
		}
	}
}

// TestAliasKeeperWithoutSecrets: with no secrets at all the keeper gets its
// arguments as they are.
func TestAliasKeeperWithoutSecrets(t *testing.T) {
	t.Parallel()
	keeper := newKeeper("keep", true)
	model := &fakeModel{replies: []reply{
		{content: toolReq("a", "keep", map[string]any{"text": "token is " + tokenAlias})},
		{content: respond("done")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, keeper}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got := keeper.runs(); len(got) != 1 || got[0] != "token is "+tokenAlias {
		t.Errorf("the keeper got %q", got)
	}
}
