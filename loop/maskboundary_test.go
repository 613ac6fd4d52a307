package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/secrets"
)

// The engine masks a text once, where it enters (the history, a reply's
// streams, a tool's result) or leaves (the events, the request), and trusts
// what it masked not to need it again. These runs attack that trust: every
// extension point that may change a text puts the value into it, in place
// where it can, and a value is split between an extension's text and the
// model's or a tool's. Nothing may leave in clear.
func TestSecretsExtensionsRewrite(t *testing.T) {
	t.Parallel()
	set := secretSet(t)
	half := len(secretToken) / 2

	var sess *loop.Session
	tool := toolFunc{"work", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		ans, err := c.Agent.CallUtilityModel(ctx, "system", "question")
		if err != nil {
			return loop.ToolResult{}, err
		}
		old := "old"
		return loop.ToolResult{Text: "worked: " + ans, Diffs: []loop.FileDiff{{Path: "/ws/f", OldText: &old, NewText: "new"}}}, nil
	}}
	// A tool interrupted by the user's message: its result is its live
	// output, which an extension rewrote.
	slow := toolFunc{"slow", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "progress PLACEHOLDER")
		c.Progress(ctx, secretToken[half:]+" done\n")
		if err := sess.Intervene("carry on"); err != nil {
			return loop.ToolResult{}, err
		}
		<-ctx.Done()
		return loop.ToolResult{}, context.Cause(ctx)
	}}
	chat := &fakeModel{replies: []reply{
		// An extension puts the value into the reply, in one delta of
		// two.
		{fn: func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
			content := toolReq("plan WHOLE end", "work", map[string]any{})
			i := strings.Index(content, " end")
			for _, d := range []string{content[:i], content[i:]} {
				if err := fn(llm.Delta{Kind: llm.Content, Text: d}); err != nil {
					return llm.Result{Content: content}, nil
				}
			}
			return llm.Result{Content: content}, nil
		}},
		{content: toolReq("slowly", "slow", map[string]any{})},
		{content: respond("done")},
	}}
	util := &fakeModel{replies: []reply{{content: "the answer"}}}

	reg := loop.Builtins()
	value := func(s string) string { return strings.ReplaceAll(s, "PLACEHOLDER", secretToken[:half]) }
	reg.Register(hooks.ResponseStreamChunk, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		c := p.(*loop.StreamChunkPayload)
		c.Chunk = strings.ReplaceAll(c.Chunk, "WHOLE", secretToken)
		return nil
	})
	reg.Register(hooks.ToolOutputUpdate, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		o := p.(*loop.ToolOutputPayload)
		o.Content = value(o.Content)
		return nil
	})
	reg.Register(hooks.HistAddBefore, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		h := p.(*loop.HistAddPayload)
		if strings.Contains(h.Content, "carry on") {
			h.Content += " and the token " + secretToken
		}
		return nil
	})
	reg.Register(hooks.SystemPrompt, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		sp := p.(*loop.SystemPromptPayload)
		*sp.System = append(*sp.System, "prompt "+secretToken)
		return nil
	})
	reg.Register(hooks.MessageLoopPromptsAfter, "_70_rewrite", func(_ context.Context, p hooks.Payload) error {
		ld := p.(*loop.LoopPayload).Loop
		if n := len(ld.HistoryOutput); n > 0 {
			ld.HistoryOutput[n-1].Content += " history " + secretToken // in place
		}
		return nil
	})
	reg.Register(hooks.ChatModelCallBefore, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		m := p.(*loop.ModelCallPayload)
		m.Messages[0].Content += " system " + secretToken // in place
		return nil
	})
	reg.Register(hooks.UtilModelCallBefore, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		u := p.(*loop.UtilModelCallPayload)
		u.Message += " " + secretToken
		return nil
	})
	reg.Register(hooks.UtilModelCallAfter, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		u := p.(*loop.UtilModelCallPayload)
		u.Response += " " + secretToken
		return nil
	})
	reg.Register(hooks.ToolExecuteAfter, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		r := p.(*loop.ToolAfterPayload).Result
		r.Text += " after " + secretToken
		for i := range r.Diffs {
			if r.Diffs[i].OldText != nil {
				*r.Diffs[i].OldText += secretToken // in place
			}
		}
		return nil
	})
	sp := &spy{} // _50_spy: it sees what the engine gives, before _55_rewrite changes it
	sp.register(reg)

	var rec *recorder
	sess, rec = newSession(t, setup{model: chat, utility: util, tools: []loop.Tool{responseTool, tool, slow}, registry: reg, secrets: set})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}

	for i := range chat.requests() {
		assertClean(t, fmt.Sprintf("chat request %d", i), chat.requestText(i))
	}
	if got := chat.requestText(1); !strings.Contains(got, "history "+tokenAlias) || !strings.Contains(got, "system "+tokenAlias) ||
		!strings.Contains(got, "prompt "+tokenAlias) {
		t.Errorf("the extensions' changes should reach the model masked:\n%s", got)
	}
	assertClean(t, "the utility request", util.requestText(0))
	for _, e := range rec.all() {
		b, _ := json.Marshal(e)
		assertClean(t, "event "+string(e.Type), string(b))
	}
	for point, texts := range sp.all() {
		for _, text := range texts {
			assertClean(t, "the payload of "+point, text)
		}
	}
	hist := sess.Agent0().History
	st, _ := json.Marshal(hist.State())
	assertClean(t, "the history's state", string(st))
	out, _ := json.Marshal(hist.Output())
	assertClean(t, "the history's output", string(out))
	var all strings.Builder
	for _, m := range hist.Messages() {
		all.WriteString(m.Content + "\n")
	}
	for _, want := range []string{
		"plan " + tokenAlias + " end",            // the reply, split between an extension and the model
		`worked: the answer §§secret(API_TOKEN)`, // the utility model's answer, rewritten
		`after ` + tokenAlias,                    // tool_execute_after's text
		"progress " + tokenAlias + " done",       // live output, split between an extension and the tool
		"} and the token " + tokenAlias,          // hist_add_before
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the history should hold %q:\n%s", want, all.String())
		}
	}
	if strings.Contains(all.String(), "history "+tokenAlias) {
		t.Errorf("an extension's change to the request reached the history:\n%s", all.String())
	}
}

// Consecutive messages of one role are merged in what the model sees: a
// value written half at the end of one and half at the start of the next,
// across the join, is masked there too.
func TestSecretsAcrossMergedMessages(t *testing.T) {
	t.Parallel()
	const pem = "-----BEGIN KEY-----\n\nMIIEabcdef0123456789\n-----END KEY-----"
	var set *secrets.Set
	set = set.With("PEM", pem)
	model := &fakeModel{replies: []reply{{content: respond("done")}}}
	sess, rec := newSession(t, setup{model: model, secrets: set})
	h := sess.Agent0().History
	cut := strings.Index(pem, "\n\n")
	h.Add(false, "first half: "+pem[:cut])
	h.Add(false, pem[cut+2:]+" second half")
	if _, err := sess.Run(runCtx(t), "go on"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	check := func(where, text string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(text, pem) {
			t.Errorf("%s holds the value:\n%s", where, text)
		}
	}
	check("the request", model.requestText(0))
	out, _ := json.Marshal(h.Output())
	check("the history's output", string(out))
	for _, e := range rec.all() {
		b, _ := json.Marshal(e)
		check("event "+string(e.Type), string(b))
	}
	if !strings.Contains(model.requestText(0), "first half: §§secret(PEM) second half") {
		t.Errorf("the merged message should hold the alias:\n%s", model.requestText(0))
	}
}

// An extension that writes half a value into a chunk of the reply, the
// model writing the other half in the next: each chunk is masked alone,
// so the value is whole only in the reply, which the history masks again
// before it keeps it or sends it back to the model. (The chunk extensions
// and the joined deltas of the events can show it: an extension of the
// engine's own that holds a value can always show it.)
func TestSecretsReplyRewriteStraddles(t *testing.T) {
	t.Parallel()
	half := len(secretToken) / 2
	chat := &fakeModel{replies: []reply{
		{fn: func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
			content := toolReq("plan PLACEHOLDER"+secretToken[half:]+" end", "noop", map[string]any{})
			i := strings.Index(content, secretToken[half:])
			for _, d := range []string{content[:i], content[i:]} {
				if err := fn(llm.Delta{Kind: llm.Content, Text: d}); err != nil {
					return llm.Result{Content: content}, nil
				}
			}
			return llm.Result{Content: content}, nil
		}},
		{content: respond("done")},
	}}
	reg := loop.Builtins()
	reg.Register(hooks.ResponseStreamChunk, "_55_rewrite", func(_ context.Context, p hooks.Payload) error {
		c := p.(*loop.StreamChunkPayload)
		c.Chunk = strings.ReplaceAll(c.Chunk, "PLACEHOLDER", secretToken[:half])
		return nil
	})
	sess, _ := newSession(t, setup{model: chat, tools: []loop.Tool{responseTool, noopTool("noop")}, registry: reg, secrets: secretSet(t)})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	assertClean(t, "the second request", chat.requestText(1))
	st, _ := json.Marshal(sess.Agent0().History.State())
	assertClean(t, "the history's state", string(st))
	if !strings.Contains(string(st), "plan "+tokenAlias+" end") {
		t.Errorf("the history should hold the alias:\n%s", st)
	}
}
