package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/secrets"
)

const (
	secretToken = "tok-9f8e7d6c5b4a3210-SECRET"
	// tokenCore is a piece of the value: not even a piece may show.
	tokenCore   = "9f8e7d6c5b4a3210"
	tokenAlias  = "§§secret(API_TOKEN)"
	ownKey      = "sk-zero-own-key-0123456789"
	ownKeyAlias = "§§secret(OPENAI_API_KEY)"
)

// secretSet is a user's secrets.env with one secret, plus Zero's own key,
// which is masked but not offered to the agent.
func secretSet(t testing.TB) *secrets.Set {
	t.Helper()
	file := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(file, []byte("# the deploy API's token\nAPI_TOKEN="+secretToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	set, errs := secrets.Load(file)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return set.With("OPENAI_API_KEY", ownKey)
}

// byteStream streams reasoning, then content, one byte per delta, as a
// hostile model would to slip a value past a masker that looks at one
// delta at a time.
func byteStream(reasoning, content string) func(context.Context, llm.StreamFunc) (llm.Result, error) {
	return func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
		res := llm.Result{Reasoning: reasoning, Content: content}
		for i := range len(reasoning) {
			if err := fn(llm.Delta{Kind: llm.Reasoning, Text: reasoning[i : i+1]}); err != nil {
				return res, err
			}
		}
		for i := range len(content) {
			if err := fn(llm.Delta{Kind: llm.Content, Text: content[i : i+1]}); err != nil {
				if errors.Is(err, llm.ErrStop) {
					res.Stopped = true
					return res, nil
				}
				return res, err
			}
		}
		return res, nil
	}
}

// failingPrompts fails to render one file, with an error that quotes the
// vars (the user's message): the engine logs it.
type failingPrompts struct {
	loop.Prompts
	fail string
}

func (p failingPrompts) Render(name string, vars map[string]any) (string, error) {
	if name == p.fail {
		return "", fmt.Errorf("cannot render %s with %v", name, vars)
	}
	return p.Prompts.Render(name, vars)
}

// lockedBuffer is a log destination safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// spy records, at every extension point, what a script would get on its
// stdin (ScriptInput as JSON) and the texts a built-in gets in the payload
// itself.
type spy struct {
	mu   sync.Mutex
	seen map[string][]string // point -> what was seen
}

func (s *spy) register(r *hooks.Registry) {
	s.seen = map[string][]string{}
	for _, point := range hooks.Points() {
		r.Register(point, "_50_spy", func(_ context.Context, p hooks.Payload) error {
			script, err := json.Marshal(p.ScriptInput())
			if err != nil {
				return err
			}
			raw := rawTexts(p)
			s.mu.Lock()
			s.seen[point] = append(s.seen[point], string(script), raw)
			s.mu.Unlock()
			return nil
		})
	}
}

func (s *spy) all() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for k, v := range s.seen {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// rawTexts is the text a built-in extension reads in a payload.
func rawTexts(p hooks.Payload) string {
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch p := p.(type) {
	case *loop.ToolBeforePayload:
		return j(p.Args) + p.Block
	case *loop.ToolOutputPayload:
		return p.Content
	case *loop.StreamChunkPayload:
		return p.Chunk + "|" + p.Full
	case *loop.StreamPayload:
		return p.Text + j(p.Parsed)
	case *loop.HistAddPayload:
		return p.Content
	case *loop.ToolAfterPayload:
		return p.Result.Text + j(p.Result.Diffs)
	case *loop.ToolResultPayload:
		return p.ToolResult + j(p.Data)
	case *loop.ErrorFormatPayload:
		return p.Message
	case *loop.UtilModelCallPayload:
		return p.System + "|" + p.Message + "|" + p.Response
	case *loop.ModelCallPayload:
		return j(p.Messages) + p.Response + p.Reasoning
	case *loop.LoopPayload:
		// The extras are left out: a built-in put a value there (see
		// TestSecretsNeverLeave), and built-ins are the engine's own code.
		return p.Loop.UserMessage + "|" + p.Loop.LastResponse
	case *loop.SystemPromptPayload:
		return strings.Join(*p.System, "\n")
	case *loop.AgentPayload:
		return p.Response
	}
	return fmt.Sprintf("unknown payload %T", p)
}

// assertClean fails when text holds a secret or a piece of one.
func assertClean(t *testing.T, where, text string) {
	t.Helper()
	for _, leak := range []string{secretToken, tokenCore, ownKey, "own-key-0123"} {
		if strings.Contains(text, leak) {
			t.Errorf("%s holds %q:\n%s", where, leak, text)
			return
		}
	}
}

// One run in which the model uses a secret by alias, a tool prints it
// whole and one byte at a time and returns it, a tool fails with it in the
// error, the utility model and the chat model themselves write it (split
// into one-byte deltas), the user's message holds it, and an unknown alias
// is refused. The tool gets the value; nothing else does: no event, no
// history message, no request to either model, no extension's payload
// and no log line holds it, and the aliases stand in its place.
func TestSecretsNeverLeave(t *testing.T) {
	t.Parallel()
	set := secretSet(t)

	var fetchRuns atomic.Int32
	var fetchCmd, echoText atomic.Value
	fetch := toolFunc{"fetch", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		fetchRuns.Add(1)
		cmd, _ := c.Args["cmd"].(string)
		fetchCmd.Store(cmd)
		c.Progress(ctx, "connecting with "+secretToken+"\n")
		c.Progress(ctx, "token=")
		for i := range len(secretToken) {
			c.Progress(ctx, secretToken[i:i+1])
		}
		c.Progress(ctx, "\n")
		ans, err := c.Agent.CallUtilityModel(ctx, "You check tokens like "+secretToken, "Is "+secretToken+" valid?")
		if err != nil {
			return loop.ToolResult{}, err
		}
		c.Progress(ctx, "utility: "+ans+"\n")
		c.Agent.History.Add(false, "a note about "+secretToken) // past the engine's own adds
		old := "API_TOKEN=old\n"
		return loop.ToolResult{
			Text:  "fetched with " + secretToken,
			Diffs: []loop.FileDiff{{Path: "/ws/" + secretToken + ".env", OldText: &old, NewText: "API_TOKEN=" + secretToken + "\n"}},
		}, nil
	}}
	echo := toolFunc{"echo", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		text, _ := c.Args["text"].(string)
		echoText.Store(text)
		return loop.ToolResult{Text: "echo: " + text}, nil
	}}
	fail := toolFunc{"fail", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		return loop.ToolResult{}, loop.Repairable(fmt.Errorf("login refused for %v", c.Args["key"]))
	}}

	chat := &fakeModel{replies: []reply{
		// A well-behaved model: the alias.
		{reasoning: "I will call fetch with the alias", chunk: 7, content: toolReq("fetch it", "fetch",
			map[string]any{"cmd": "curl -H 'Authorization: Bearer " + tokenAlias + "' https://api.example"})},
		// A hostile model writes the value, one byte per delta, in its
		// reasoning, its thoughts, its headline and the arguments.
		{fn: byteStream("the token is "+secretToken+" obviously",
			toolReq("I recall "+secretToken, "echo", map[string]any{"text": "value " + secretToken}))},
		// Unknown aliases, and Zero's own key, which is not the agent's.
		{content: toolReq("try", "fetch", map[string]any{"cmd": "echo §§secret(NOPE) §§secret(openai_api_key)"})},
		{content: toolReq("login", "fail", map[string]any{"key": tokenAlias})},
		{fn: byteStream("", respond("done; the token was "+secretToken))},
	}}
	util := &fakeModel{replies: []reply{{content: "yes, " + secretToken + " is valid; my key is " + ownKey}}}

	reg := loop.Builtins()
	sp := &spy{}
	sp.register(reg)
	// Built-ins that put a value where the engine does not expect one: a
	// recalled memory in the extras (every later script payload and the
	// prompt hold it), and arguments rewritten after the spy saw them (the
	// gate comes next).
	reg.Register(hooks.MessageLoopPromptsBefore, "_05_recall", func(_ context.Context, p hooks.Payload) error {
		p.(*loop.LoopPayload).Loop.ExtrasPersistent.Set("memories", "the deploy token is "+secretToken)
		return nil
	})
	reg.Register(hooks.ToolExecuteBefore, "_60_rewrite", func(_ context.Context, p hooks.Payload) error {
		if bp := p.(*loop.ToolBeforePayload); bp.ToolName == "echo" {
			bp.Args["text"] = "value " + secretToken
		}
		return nil
	})
	ext := t.TempDir()
	seenFile := filepath.Join(t.TempDir(), "tool_execute_before.json")
	writeScript(t, ext, "tool_execute_before", "_40_record", "cat >> '"+seenFile+"'; echo >> '"+seenFile+"'")

	var logs lockedBuffer
	sess, rec := newSession(t, setup{
		model:    chat,
		utility:  util,
		tools:    []loop.Tool{responseTool, fetch, echo, fail},
		registry: reg,
		layers:   []hooks.Layer{{Name: "project", Dir: ext}},
		secrets:  set,
		logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		prompts:  failingPrompts{Prompts: testPrompts(), fail: "fw.user_message.md"},
	})
	var gateMu sync.Mutex
	var gateSaw []string
	sess.SetGate(func(_ context.Context, p *loop.ToolBeforePayload) error {
		b, _ := json.Marshal(p.Args)
		gateMu.Lock()
		gateSaw = append(gateSaw, p.ToolName+" "+string(b))
		gateMu.Unlock()
		return nil
	})

	answer, err := sess.Run(runCtx(t), "deploy with the token "+secretToken+" please")
	if err != nil {
		t.Fatalf("Run: %v\nwarnings: %s", err, rec.text(loop.EventWarning))
	}

	// The tools got the values.
	if got := answer; got != "done; the token was "+tokenAlias {
		t.Errorf("answer = %q", got)
	}
	if n := fetchRuns.Load(); n != 1 {
		t.Errorf("fetch ran %d times, want once (the unknown alias must not run)", n)
	}
	if got, _ := fetchCmd.Load().(string); got != "curl -H 'Authorization: Bearer "+secretToken+"' https://api.example" {
		t.Errorf("fetch got cmd %q, want the value in place of the alias", got)
	}
	if got, _ := echoText.Load().(string); got != "value "+secretToken {
		t.Errorf("echo got %q: the value the model wrote comes back as the alias, then the value", got)
	}

	// The approval gate saw aliases only, and was not asked about the
	// refused call.
	gateMu.Lock()
	saw := strings.Join(gateSaw, "\n")
	gateMu.Unlock()
	assertClean(t, "the approval gate", saw)
	if !strings.Contains(saw, `fetch {"cmd":"curl -H 'Authorization: Bearer `+tokenAlias) || !strings.Contains(saw, `echo {"text":"value `+tokenAlias+`"}`) {
		t.Errorf("the gate should see the aliases:\n%s", saw)
	}
	if strings.Contains(saw, "NOPE") {
		t.Errorf("the gate was asked about a call that cannot run:\n%s", saw)
	}

	// Extensions: built-ins' payloads and scripts' stdin.
	seen := sp.all()
	for point, texts := range seen {
		for _, text := range texts {
			assertClean(t, "the payload of "+point, text)
		}
	}
	if before := strings.Join(seen[hooks.ToolExecuteBefore], "\n"); !strings.Contains(before, "Bearer "+tokenAlias) {
		t.Errorf("tool_execute_before should see the alias:\n%s", before)
	}
	if sys := strings.Join(seen[hooks.SystemPrompt], "\n"); !strings.Contains(sys, "## secret aliases") ||
		!strings.Contains(sys, "# the deploy API's token\n"+tokenAlias) || strings.Contains(sys, "OPENAI_API_KEY") {
		t.Errorf("the system prompt should list the agent's secret by name:\n%s", sys)
	}
	if len(seen[hooks.ReasoningStreamChunk]) == 0 || len(seen[hooks.ResponseStreamChunk]) == 0 || len(seen[hooks.ToolOutputUpdate]) == 0 ||
		len(seen[hooks.UtilModelCallAfter]) == 0 || len(seen[hooks.ErrorFormat]) == 0 || len(seen[hooks.HistAddBefore]) == 0 {
		t.Errorf("some points never ran: %v", keys(seen))
	}
	script, err := os.ReadFile(seenFile)
	if err != nil {
		t.Fatal(err)
	}
	assertClean(t, "the tool_execute_before script's stdin", string(script))
	if !strings.Contains(string(script), "Bearer "+tokenAlias) {
		t.Errorf("the script should see the alias:\n%s", script)
	}

	// Events: every field.
	events := rec.all()
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		assertClean(t, "event "+string(e.Type), string(b))
	}
	// What an editor shows by joining the deltas of a type.
	for _, typ := range []loop.EventType{loop.EventReasoningDelta, loop.EventThoughtsDelta, loop.EventToolOutputDelta, loop.EventResponseDelta} {
		assertClean(t, "the joined "+string(typ)+" events", rec.text(typ))
	}
	for _, tc := range []struct {
		typ  loop.EventType
		want string
	}{
		{loop.EventRunStarted, "deploy with the token " + tokenAlias + " please"},
		{loop.EventReasoningDelta, "the token is " + tokenAlias + " obviously"},
		{loop.EventThoughtsDelta, "I recall " + tokenAlias},
		{loop.EventHeadline, "Doing I recall " + tokenAlias},
		{loop.EventToolOutputDelta, "connecting with " + tokenAlias + "\ntoken=" + tokenAlias + "\nutility: yes, " + tokenAlias + " is valid; my key is " + ownKeyAlias},
		{loop.EventToolResult, "fetched with " + tokenAlias},
		{loop.EventToolResult, "echo: value " + tokenAlias},
		{loop.EventToolResult, "Not run: unknown secret aliases §§secret(NOPE), " + ownKeyAlias + ". The secrets you may use are " + tokenAlias},
		{loop.EventToolResult, "login refused for " + tokenAlias},
		{loop.EventResponse, "done; the token was " + tokenAlias},
	} {
		if got := rec.text(tc.typ); !strings.Contains(got, tc.want) {
			t.Errorf("%s events should hold %q:\n%s", tc.typ, tc.want, got)
		}
	}
	// The repairable failure is said once, by its tool_result (the model
	// gets it as a warning in its history).
	if got := rec.text(loop.EventWarning); strings.Contains(got, "login refused") {
		t.Errorf("the failed tool is said again as a warning:\n%s", got)
	}
	var calls []string
	for _, e := range rec.ofType(loop.EventToolCall) {
		calls = append(calls, string(e.Args))
	}
	if got := strings.Join(calls, "\n"); !strings.Contains(got, "Bearer "+tokenAlias) || !strings.Contains(got, `"value `+tokenAlias+`"`) {
		t.Errorf("tool_call args should show the aliases:\n%s", got)
	}
	var diffs bool
	for _, e := range rec.ofType(loop.EventToolResult) {
		for _, d := range e.Diffs {
			diffs = true
			if d.Path != "/ws/"+tokenAlias+".env" || d.NewText != "API_TOKEN="+tokenAlias+"\n" || d.OldText == nil || *d.OldText != "API_TOKEN=old\n" {
				t.Errorf("diff = %+v", d)
			}
		}
	}
	if !diffs {
		t.Error("the tool_result lost its diffs")
	}

	// History, as the model sees it and as a store keeps it.
	hist := sess.Agent0().History
	var all strings.Builder
	for _, m := range hist.Messages() {
		all.WriteString(m.Content + "\n")
	}
	assertClean(t, "the history", all.String())
	st, _ := json.Marshal(hist.State())
	assertClean(t, "the history's state", string(st))
	for _, want := range []string{"the token " + tokenAlias + " please", "I recall " + tokenAlias, "a note about " + tokenAlias, "fetched with " + tokenAlias, "echo: value " + tokenAlias, "§§secret(NOPE)"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the history should hold %q:\n%s", want, all.String())
		}
	}

	// Requests to the chat and utility models.
	reqs := chat.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d chat requests, want 5", len(reqs))
	}
	for i := range reqs {
		assertClean(t, fmt.Sprintf("chat request %d", i), chat.requestText(i))
	}
	if !strings.Contains(chat.requestText(0), "## secret aliases") || !strings.Contains(chat.requestText(0), tokenAlias) ||
		!strings.Contains(chat.requestText(0), "the deploy token is "+tokenAlias) {
		t.Errorf("the system prompt should name the secret:\n%s", chat.requestText(0))
	}
	if got := chat.requestText(3); !strings.Contains(got, "unknown secret aliases §§secret(NOPE)") || !strings.Contains(got, "you may use are "+tokenAlias) {
		t.Errorf("the model should be told which aliases exist:\n%s", got)
	}
	ureqs := util.requests()
	if len(ureqs) != 1 {
		t.Fatalf("%d utility requests, want 1", len(ureqs))
	}
	assertClean(t, "the utility request", util.requestText(0))
	if !strings.Contains(util.requestText(0), "Is "+tokenAlias+" valid?") {
		t.Errorf("utility request:\n%s", util.requestText(0))
	}

	// Logs: the render failure quoted the user's message.
	logText := logs.String()
	assertClean(t, "the log", logText)
	if !strings.Contains(logText, "prompt render failed") || !strings.Contains(logText, tokenAlias) {
		t.Errorf("the log should hold the render failure, masked:\n%s", logText)
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Without a Set nothing changes: no secrets prompt, aliases reach the tool
// as written.
func TestSecretsNone(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	tool := toolFunc{"fetch", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		got.Store(c.Args["cmd"])
		return loop.ToolResult{Text: "ok"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("x", "fetch", map[string]any{"cmd": "echo " + tokenAlias})},
		{content: respond("done")},
	}}
	sess, _ := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tool}})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "echo "+tokenAlias {
		t.Errorf("tool got %v", got.Load())
	}
	if strings.Contains(model.requestText(0), "secret aliases") {
		t.Error("a secrets prompt without secrets")
	}
}

// A Set holding only Zero's own keys offers the agent nothing: no prompt,
// and any alias is refused.
func TestSecretsOnlyOwnKeys(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	tool := toolFunc{"fetch", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		ran.Add(1)
		return loop.ToolResult{Text: "ok"}, nil
	}}
	model := &fakeModel{replies: []reply{
		{content: toolReq("x", "fetch", map[string]any{"cmd": "echo " + ownKeyAlias})},
		{content: respond("done")},
	}}
	var set *secrets.Set
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tool}, secrets: set.With("OPENAI_API_KEY", ownKey)})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 0 {
		t.Error("the tool ran with an alias of Zero's own key")
	}
	if got := rec.text(loop.EventToolResult); !strings.Contains(got, "No secrets are available") {
		t.Errorf("tool_result = %q", got)
	}
	if strings.Contains(model.requestText(0), "secret aliases") {
		t.Error("a secrets prompt without the agent's secrets")
	}
}

// Output that ends in the first bytes of a value: the tool's end flushes
// the held tail as "***", in a last tool_output_delta.
func TestSecretsPartialValueAtToolEnd(t *testing.T) {
	t.Parallel()
	tool := toolFunc{"cut", func(ctx context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
		c.Progress(ctx, "first part: "+secretToken[:12])
		return loop.ToolResult{Text: "cut"}, nil
	}}
	model := &fakeModel{replies: []reply{{content: toolReq("x", "cut", map[string]any{})}, {content: respond("done")}}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, tool}, secrets: secretSet(t)})
	if _, err := sess.Run(runCtx(t), "go"); err != nil {
		t.Fatal(err)
	}
	deltas := rec.ofType(loop.EventToolOutputDelta)
	if got := rec.text(loop.EventToolOutputDelta); got != "first part: "+secrets.PartialMask || len(deltas) != 2 {
		t.Errorf("tool_output_delta = %q in %d events, want the text then the flushed mask", got, len(deltas))
	}
}

// A summary the utility model writes during history compression is
// masked before it is laid over the history and journaled.
func TestSecretsInCompressionSummary(t *testing.T) {
	t.Parallel()
	var replies []reply
	for i := range 8 {
		replies = append(replies, reply{content: big(i, 150)})
	}
	replies = append(replies, reply{content: respond("done")})
	chat := &fakeModel{replies: replies}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 600, secrets: secretSet(t), util: func(context.Context, int) (string, error) {
		return "SUMMARY: the token is " + secretToken, nil
	}})
	if _, err := env.sess.Run(runCtx(t), "work"); err != nil {
		t.Fatal(err)
	}
	st := env.journal.state()
	if len(st.Summaries) == 0 {
		t.Fatal("no summary was made")
	}
	b, _ := json.Marshal(st)
	assertClean(t, "the journal", string(b))
	if !strings.Contains(string(b), "the token is "+tokenAlias) {
		t.Errorf("the summary should hold the alias:\n%s", b)
	}
	for i := range chat.requests() {
		assertClean(t, fmt.Sprintf("chat request %d", i), chat.requestText(i))
	}
}

// BenchmarkTurn10Secrets is BenchmarkTurn10 with a Set of three secrets,
// for the cost of masking; BenchmarkTurn10 is the nil Set's.
func BenchmarkTurn10Secrets(b *testing.B) {
	var set *secrets.Set
	for i, v := range []string{secretToken, ownKey, "another-value-1234567890"} {
		set = set.With(fmt.Sprintf("KEY_%d", i), v)
	}
	benchmarkTurnsWith(b, 10, set)
}

// A run cancelled while the model is in the middle of writing a value: the
// reply kept in history ends in "***", not in the value's first bytes.
func TestSecretsCancelledMidValue(t *testing.T) {
	t.Parallel()
	var sess *loop.Session
	partial := `{"thoughts": ["the token is ` + secretToken[:15]
	model := &fakeModel{replies: []reply{{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
		for i := range len(partial) {
			if err := fn(llm.Delta{Kind: llm.Content, Text: partial[i : i+1]}); err != nil {
				return llm.Result{}, err
			}
		}
		sess.Cancel()
		<-ctx.Done()
		return llm.Result{Content: partial}, context.Cause(ctx)
	}}}}
	var rec *recorder
	sess, rec = newSession(t, setup{model: model, secrets: secretSet(t)})
	if _, err := sess.Run(runCtx(t), "go"); !errors.Is(err, loop.ErrCancelled) {
		t.Fatalf("Run error = %v, want ErrCancelled", err)
	}
	msgs := sess.Agent0().History.Messages()
	last := msgs[len(msgs)-1].Content
	if !msgs[len(msgs)-1].AI || last != `{"thoughts": ["the token is `+secrets.PartialMask {
		t.Errorf("the kept reply is %q", last)
	}
	for _, e := range rec.all() {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), secretToken[:8]) {
			t.Errorf("event shows the value's start: %s", b)
		}
	}
}

// busyTool is a tool whose process still runs with a secret on its
// command line (as a shell's background job does once its command was
// expanded).
type busyTool struct{ toolFunc }

func (busyTool) Activities(*loop.Agent) []string {
	return []string{"shell 0: 42 curl -H token:" + secretToken + " https://example.invalid"}
}

// What still runs is named without the secret it was started with: the
// rewound event, the store and the faces get the alias.
func TestActivitiesMaskSecrets(t *testing.T) {
	t.Parallel()
	sess, _ := newSession(t, setup{model: &fakeModel{}, tools: []loop.Tool{responseTool, busyTool{noopTool("busy")}}, secrets: secretSet(t)})
	got := sess.Activities()
	if len(got) != 1 || strings.Contains(got[0], secretToken) || !strings.Contains(got[0], "API_TOKEN") {
		t.Errorf("Activities = %q", got)
	}
}
