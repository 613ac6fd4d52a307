package loop_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/secrets"
)

// countWords is the sessions' token counter in these tests: merging
// messages with "\n\n" adds no words, so a request's tokens are the sum of
// its messages'.
func countWords(s string) int { return len(strings.Fields(s)) }

func requestTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += countWords(m.Content)
	}
	return n
}

// utilityModel is a utility model made of a function; it records what it
// was asked.
type utilityModel struct {
	mu    sync.Mutex
	asked []llm.Request
	fn    func(ctx context.Context, n int) (string, error) // n counts calls from 1
}

func (m *utilityModel) Stream(ctx context.Context, req llm.Request, _ llm.StreamFunc) (llm.Result, error) {
	m.mu.Lock()
	m.asked = append(m.asked, req)
	n := len(m.asked)
	m.mu.Unlock()
	text, err := m.fn(ctx, n)
	return llm.Result{Content: text}, err
}

func (m *utilityModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.asked...)
}

// stream sends text as one delta, as a model would.
func stream(fn llm.StreamFunc, text string) (llm.Result, error) {
	if err := fn(llm.Delta{Kind: llm.Content, Text: text}); err != nil && !errors.Is(err, llm.ErrStop) {
		return llm.Result{}, err
	}
	return llm.Result{Content: text}, nil
}

// summaries answers every request at once with a short numbered summary.
func summaries(_ context.Context, n int) (string, error) {
	return fmt.Sprintf("SUMMARY-%d of the work so far", n), nil
}

// journal records what the engine journals for agent 0, as a store would.
type journal struct {
	mu sync.Mutex
	st loop.HistoryState
}

func (j *journal) AddMessage(agent int, m loop.HistoryMessage) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if agent == 0 {
		j.st.Messages = append(j.st.Messages, m)
	}
}

func (j *journal) AddSummary(agent int, s loop.HistorySummary) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if agent == 0 {
		j.st.Summaries = append(j.st.Summaries, s)
	}
}

func (j *journal) CountTokens(agent, n, tokens int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.st.Messages { // after a restore, it only has the new messages
		if m := &j.st.Messages[i]; agent == 0 && m.N == n {
			m.Tokens = tokens
		}
	}
}

func (j *journal) state() loop.HistoryState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return loop.HistoryState{
		Messages:  append([]loop.HistoryMessage(nil), j.st.Messages...),
		Summaries: append([]loop.HistorySummary(nil), j.st.Summaries...),
	}
}

// bigTool answers with as many words as its "words" argument asks.
var bigTool = toolFunc{"big", func(_ context.Context, c *loop.ToolCall) (loop.ToolResult, error) {
	n, _ := c.Args["words"].(float64)
	w := make([]string, int(n))
	for i := range w {
		w[i] = fmt.Sprintf("w%d", i)
	}
	return loop.ToolResult{Text: strings.Join(w, " ")}, nil
}}

func big(step, words int) string {
	return toolReq(fmt.Sprintf("step %d", step), "big", map[string]any{"words": words, "step": step})
}

// compressEnv is a session with a small context, a short system prompt, a
// word-counting token counter, a utility model and a journal.
type compressEnv struct {
	chat    *fakeModel
	util    *utilityModel
	journal *journal
	rec     *recorder
	sess    *loop.Session
	prompts *profiles.Prompts
}

type compressOpts struct {
	chat     *fakeModel
	util     func(ctx context.Context, n int) (string, error)
	window   int
	system   int      // words added to the system prompt
	disabled []string // "point/name" of built-ins to disable
	// onEvent sees every event after the recorder.
	onEvent func(loop.Event)
	secrets *secrets.Set
}

func newCompressEnv(t testing.TB, o compressOpts) *compressEnv {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"agent.system.main.md":  "You are {{agent_name}}. Answer with one JSON tool request." + strings.Repeat(" pad", o.system),
		"agent.system.tools.md": "Tools: big, response.",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ext := t.TempDir()
	for _, d := range o.disabled {
		point, name, _ := strings.Cut(d, "/")
		if err := os.MkdirAll(filepath.Join(ext, point), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ext, point, name+".disabled"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := hooks.Resolve(loop.Builtins(), []hooks.Layer{{Name: "test", Dir: ext}}, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.util == nil {
		o.util = summaries
	}
	env := &compressEnv{chat: o.chat, util: &utilityModel{fn: o.util}, journal: &journal{}, rec: &recorder{}, prompts: profiles.New(os.DirFS(dir))}
	env.sess = loop.NewSession("compress", loop.Config{
		Setup: loop.Setup{
			Model:        o.chat,
			UtilityModel: env.util,
			Prompts:      env.prompts,
			Tools:        []loop.Tool{responseTool, bigTool},
			Hooks:        set,
			ToolProtocol: loop.ProtocolJSON, // the replies' protocol
		},
		Workspace:   t.TempDir(),
		Limits:      loop.Limits{ContextTokens: o.window, CriticalRetryDelay: time.Millisecond},
		CountTokens: countWords,
		Journal:     env.journal,
		Secrets:     o.secrets,
		Now:         func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) },
	}, func(e loop.Event) {
		env.rec.sink(e)
		if o.onEvent != nil {
			o.onEvent(e)
		}
	})
	return env
}

// Many turns with large tool results in a small context: every run
// completes, no request is larger than the context, the utility model
// writes the summaries with Agent Zero's prompts and the chat model sees
// them, and the journal rebuilds the same history.
func TestCompressionLongSession(t *testing.T) {
	t.Parallel()
	const (
		window = 600
		runs   = 10
		turns  = 4
	)
	var replies []reply
	for r := range runs {
		for i := range turns {
			replies = append(replies, reply{content: big(r*100+i, 100+50*(i%3))})
		}
		replies = append(replies, reply{content: respond(fmt.Sprintf("run %d done", r))})
	}
	chat := &fakeModel{replies: replies}
	env := newCompressEnv(t, compressOpts{chat: chat, window: window})
	for r := range runs {
		got, err := env.sess.Run(runCtx(t), fmt.Sprintf("task %d", r))
		if err != nil || got != fmt.Sprintf("run %d done", r) {
			t.Fatalf("run %d = %q, %v; warnings %v", r, got, err, env.rec.text(loop.EventWarning))
		}
	}
	if w := env.rec.ofType(loop.EventWarning); len(w) != 0 {
		t.Errorf("warnings: %+v", w)
	}

	reqs := chat.requests()
	if len(reqs) != runs*(turns+1) {
		t.Fatalf("%d chat requests, want %d", len(reqs), runs*(turns+1))
	}
	for i, req := range reqs {
		if n := requestTokens(req); n > window {
			t.Errorf("request %d has %d tokens, more than the context of %d", i, n, window)
		}
	}

	sys, err := env.prompts.Render("fw.topic_summary.sys.md", nil)
	if err != nil || !strings.Contains(sys, "You are AI summarization assistant") {
		t.Fatalf("fw.topic_summary.sys.md = %q, %v", sys, err)
	}
	asked := env.util.requests()
	if len(asked) == 0 {
		t.Fatal("the utility model was never asked for a summary")
	}
	for i, req := range asked {
		if len(req.Messages) != 2 || req.Messages[0].Role != llm.System || req.Messages[0].Content != sys ||
			!strings.HasPrefix(req.Messages[1].Content, "# Message history to summarize:\n") {
			t.Errorf("utility request %d is not Agent Zero's topic summary prompt: %+v", i, req.Messages)
		}
	}
	last := reqs[len(reqs)-1]
	var seen bool
	for _, m := range last {
		seen = seen || strings.Contains(m.Content, "SUMMARY-")
	}
	if !seen {
		t.Errorf("the last chat request holds no summary:\n%s", chat.requestText(len(reqs)-1))
	}

	events := env.rec.ofType(loop.EventHistoryCompressed)
	if len(events) == 0 {
		t.Fatal("no history_compressed event")
	}
	for _, e := range events {
		if e.Tokens == nil || e.Tokens.Before <= e.Tokens.After || e.Agent != 0 {
			t.Errorf("history_compressed %+v (tokens %+v)", e, e.Tokens)
		}
	}

	st := env.journal.state()
	kinds := map[string]int{}
	for _, s := range st.Summaries {
		kinds[s.Kind]++
	}
	for _, k := range []string{loop.SummaryMessage, loop.SummaryMessages, loop.SummaryBulk} {
		if kinds[k] == 0 {
			t.Errorf("no %q summary was made; kinds %v", k, kinds)
		}
	}
	live := env.sess.Agent0().History
	var uncompressed int
	for _, m := range live.Messages() {
		uncompressed += countWords(m.Content)
	}
	if diff := cmp.Diff(live.State(), st); diff != "" {
		t.Errorf("journal differs from the live history (-live +journal):\n%s", diff)
	}
	restored := newCompressEnv(t, compressOpts{chat: &fakeModel{}, window: window})
	if err := restored.sess.RestoreHistory(0, st); err != nil {
		t.Fatal(err)
	}
	rh := restored.sess.Agent0().History
	if diff := cmp.Diff(live.Output(), rh.Output()); diff != "" {
		t.Errorf("restored Output (-live +restored):\n%s", diff)
	}
	if rh.Tokens() != live.Tokens() || rh.Len() != live.Len() || rh.Topics() != runs {
		t.Errorf("restored Tokens %d Len %d Topics %d, live %d %d %d", rh.Tokens(), rh.Len(), rh.Topics(), live.Tokens(), live.Len(), live.Topics())
	}
	if live.Tokens() >= uncompressed {
		t.Errorf("live history has %d tokens (uncompressed %d)", live.Tokens(), uncompressed)
	}
}

// The wait extension blocks a turn only while the history is over its
// limit: a background compression still running does not hold up a turn
// whose history is already within it.
func TestOrganizeHistoryWait(t *testing.T) {
	t.Parallel()
	// window 1000: limit 700, a message is large over 175 tokens.
	t.Run("over the limit the turn waits", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var replied atomic.Int32
			util := func(ctx context.Context, n int) (string, error) {
				select {
				case <-release:
				case <-ctx.Done():
					return "", ctx.Err()
				}
				replied.Add(1)
				return fmt.Sprintf("SUMMARY-%d", n), nil
			}
			// Six results of 120 words put the history over 700; none is
			// large, so the first step needs the utility model.
			var replies []reply
			for i := range 6 {
				replies = append(replies, reply{content: big(i, 120)})
			}
			var repliedAtLast int32
			replies = append(replies, reply{fn: func(_ context.Context, fn llm.StreamFunc) (llm.Result, error) {
				repliedAtLast = replied.Load()
				return stream(fn, respond("done"))
			}})
			chat := &fakeModel{replies: replies}
			env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, util: util})
			type result struct {
				answer string
				err    error
			}
			done := make(chan result, 1)
			go func() {
				answer, err := env.sess.Run(context.Background(), "task")
				done <- result{answer, err}
			}()
			synctest.Wait() // the compression waits for the utility model; the turn waits for it
			if n := len(env.util.requests()); n != 1 {
				t.Fatalf("utility model asked %d times, want 1", n)
			}
			if n := len(chat.requests()); n != 6 {
				t.Fatalf("%d chat requests while the over-limit history was being compressed, want 6", n)
			}
			close(release)
			res := <-done
			if res.err != nil || res.answer != "done" {
				t.Fatalf("Run = %q, %v", res.answer, res.err)
			}
			if repliedAtLast == 0 || !strings.Contains(chat.requestText(6), "SUMMARY-") {
				t.Errorf("the turn after the limit went on before the summary (%d summaries then):\n%s", repliedAtLast, chat.requestText(6))
			}
		})
	})
	t.Run("within the limit the turn goes on", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			// The utility model never answers: only the run's end stops it.
			asked := make(chan struct{})
			util := func(ctx context.Context, n int) (string, error) {
				if n == 1 {
					close(asked)
				}
				<-ctx.Done()
				return "", ctx.Err()
			}
			// A large first result (400 words) and three of 100: over 700.
			// Shortening the large one (no model call) brings the history
			// within the limit; the next step waits for the utility model,
			// and the last turn answers only once it does: a turn that
			// waited for that summary would never come (synctest reports
			// the deadlock).
			replies := []reply{{content: big(0, 400)}, {content: big(1, 100)}, {content: big(2, 100)}, {content: big(3, 100)},
				{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
					<-asked
					return stream(fn, respond("done"))
				}}}
			chat := &fakeModel{replies: replies}
			env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, util: util})
			answer, err := env.sess.Run(context.Background(), "task")
			if err != nil || answer != "done" {
				t.Fatalf("Run = %q, %v", answer, err)
			}
			if n := len(env.util.requests()); n != 1 {
				t.Errorf("utility model asked %d times, want 1 (cancelled by the run's end)", n)
			}
			if text := chat.requestText(4); !strings.Contains(text, "CHARACTERS REMOVED TO SAVE SPACE") || strings.Contains(text, "w300 ") {
				t.Errorf("the last request should hold the shortened result:\n%s", text)
			}
			ev := env.rec.ofType(loop.EventHistoryCompressed)
			all := env.rec.all()
			if len(ev) != 1 || ev[0].Tokens.Before <= ev[0].Tokens.After || all[len(all)-1].Type != loop.EventRunEnded {
				t.Errorf("history_compressed = %+v; the run must end after it", ev)
			}
			if w := env.rec.ofType(loop.EventWarning); len(w) != 0 {
				t.Errorf("a compression cancelled by the run's end is no warning: %+v", w)
			}
		})
	})
}

// A prompt that cannot fit ends the run before it is sent, with an error
// that names the largest message.
func TestContextFull(t *testing.T) {
	t.Parallel()
	off := []string{"message_loop_end/_10_organize_history", "message_loop_prompts_before/_90_organize_history_wait"}
	t.Run("one message larger than the context", func(t *testing.T) {
		t.Parallel()
		chat := &fakeModel{replies: []reply{{content: big(0, 1200)}, {content: respond("never")}}}
		env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, disabled: off})
		_, err := env.sess.Run(runCtx(t), "task")
		var cf *loop.ContextFullError
		if !errors.As(err, &cf) || !errors.Is(err, loop.ErrContextFull) || !errors.Is(err, loop.ErrMessageTooLarge) {
			t.Fatalf("Run error = %v, want a ContextFullError", err)
		}
		if cf.Role != "user" || cf.Tokens != 1203 || !strings.HasPrefix(cf.Start, `{"tool_name": "big", "tool_result": "w0 w1`) {
			t.Errorf("the error names %s %q (%d tokens)", cf.Role, cf.Start, cf.Tokens)
		}
		if msg := err.Error(); !strings.Contains(msg, "1203 tokens") || !strings.Contains(msg, "user message") || !strings.Contains(msg, "tool_name") {
			t.Errorf("error text = %q", msg)
		}
		if n := len(chat.requests()); n != 1 {
			t.Errorf("%d model requests, want only the first (the large result was never sent)", n)
		}
		if errs := env.rec.ofType(loop.EventError); len(errs) != 1 || !strings.Contains(errs[0].Text, "1203 tokens") {
			t.Errorf("error events = %+v", errs)
		}
		if end := env.rec.ofType(loop.EventRunEnded); len(end) != 1 || end[0].StopReason != loop.StopError {
			t.Errorf("run_ended = %+v", end)
		}
	})
	t.Run("many messages", func(t *testing.T) {
		t.Parallel()
		chat := &fakeModel{replies: []reply{{content: big(0, 400)}, {content: big(1, 300)}, {content: big(2, 300)}, {content: respond("never")}}}
		env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, disabled: off})
		_, err := env.sess.Run(runCtx(t), "task")
		var cf *loop.ContextFullError
		if !errors.As(err, &cf) || errors.Is(err, loop.ErrMessageTooLarge) {
			t.Fatalf("Run error = %v, want a ContextFullError that is no ErrMessageTooLarge", err)
		}
		if cf.Role != "user" || cf.Tokens != 403 || cf.Prompt <= 1000 || !strings.Contains(err.Error(), "largest message") {
			t.Errorf("error = %v (%+v)", err, cf)
		}
		for i, req := range chat.requests() {
			if n := requestTokens(req); n > 1000 {
				t.Errorf("request %d has %d tokens", i, n)
			}
		}
		if n := len(env.util.requests()); n != 0 {
			t.Errorf("compression disabled, yet the utility model was asked %d times", n)
		}
	})
}

// The built-ins are Agent Zero's extensions, overridable and disablable by
// name.
func TestOrganizeHistoryDisabledByName(t *testing.T) {
	t.Parallel()
	// window 1000: six results of 120 words go over the 700 limit, not
	// over the context.
	script := func() []reply {
		var r []reply
		for i := range 6 {
			r = append(r, reply{content: big(i, 120)})
		}
		return r
	}
	t.Run("both disabled: no compression", func(t *testing.T) {
		t.Parallel()
		chat := &fakeModel{replies: append(script(), reply{content: respond("done")})}
		env := newCompressEnv(t, compressOpts{chat: chat, window: 1000,
			disabled: []string{"message_loop_end/_10_organize_history", "message_loop_prompts_before/_90_organize_history_wait"}})
		if got, err := env.sess.Run(runCtx(t), "task"); err != nil || got != "done" {
			t.Fatalf("Run = %q, %v", got, err)
		}
		if n := len(env.util.requests()); n != 0 {
			t.Errorf("utility model asked %d times", n)
		}
		if ev := env.rec.ofType(loop.EventHistoryCompressed); len(ev) != 0 {
			t.Errorf("history_compressed = %+v", ev)
		}
		if a := env.sess.Agent0(); a.History.Tokens() <= a.HistoryLimit() {
			t.Errorf("the history should be over its limit: %d tokens", a.History.Tokens())
		}
	})
	t.Run("wait disabled: _10_organize_history compresses in the background", func(t *testing.T) {
		t.Parallel()
		compressed := make(chan struct{})
		var once sync.Once
		// The turn after the history went over the limit answers only
		// once the background compression has reported.
		chat := &fakeModel{replies: append(script(), reply{fn: func(ctx context.Context, fn llm.StreamFunc) (llm.Result, error) {
			select {
			case <-compressed:
			case <-ctx.Done():
				return llm.Result{}, ctx.Err()
			}
			return stream(fn, respond("done"))
		}})}
		env := newCompressEnv(t, compressOpts{chat: chat, window: 1000,
			disabled: []string{"message_loop_prompts_before/_90_organize_history_wait"},
			onEvent: func(e loop.Event) {
				if e.Type == loop.EventHistoryCompressed {
					once.Do(func() { close(compressed) })
				}
			}})
		if got, err := env.sess.Run(runCtx(t), "task"); err != nil || got != "done" {
			t.Fatalf("Run = %q, %v", got, err)
		}
		if n := len(env.util.requests()); n == 0 {
			t.Error("the utility model was never asked")
		}
	})
	t.Run("background disabled: the wait compresses when needed", func(t *testing.T) {
		t.Parallel()
		chat := &fakeModel{replies: append(script(), reply{content: respond("done")})}
		env := newCompressEnv(t, compressOpts{chat: chat, window: 1000,
			disabled: []string{"message_loop_end/_10_organize_history"}})
		if got, err := env.sess.Run(runCtx(t), "task"); err != nil || got != "done" {
			t.Fatalf("Run = %q, %v", got, err)
		}
		if text := chat.requestText(6); !strings.Contains(text, "SUMMARY-") {
			t.Errorf("the turn over the limit should have been compressed first:\n%s", text)
		}
	})
}

// A failing utility model is a warning; the run goes on with the history
// as it was.
func TestCompressionUtilityFails(t *testing.T) {
	t.Parallel()
	var replies []reply
	for i := range 6 {
		replies = append(replies, reply{content: big(i, 120)})
	}
	replies = append(replies, reply{content: respond("done")})
	chat := &fakeModel{replies: replies}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, util: func(context.Context, int) (string, error) {
		return "", errors.New("utility endpoint down")
	}})
	if got, err := env.sess.Run(runCtx(t), "task"); err != nil || got != "done" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	if w := env.rec.text(loop.EventWarning); !strings.Contains(w, "history compression") || !strings.Contains(w, "utility endpoint down") {
		t.Errorf("warnings = %q", w)
	}
	if ev := env.rec.ofType(loop.EventHistoryCompressed); len(ev) != 0 {
		t.Errorf("history_compressed = %+v", ev)
	}
	if st := env.journal.state(); len(st.Summaries) != 0 || len(st.Messages) != env.sess.Agent0().History.Len() {
		t.Errorf("journal: %d summaries, %d messages", len(st.Summaries), len(st.Messages))
	}
}

func TestRestoreHistory(t *testing.T) {
	t.Parallel()
	chat := &fakeModel{replies: []reply{{content: respond("hello again")}}}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 10000})
	st := loop.HistoryState{Messages: []loop.HistoryMessage{
		{N: 0, Topic: 0, Content: `{"user": "first question"}`},
		{N: 1, Topic: 0, AI: true, Content: "first answer"},
		{N: 2, Topic: 1, Content: `{"user": "second question"}`},
		{N: 3, Topic: 1, AI: true, Content: "second answer"},
	}, Summaries: []loop.HistorySummary{{ID: 1, Kind: loop.SummaryTopic, From: 0, To: 1, Content: "they talked about the first question"}}}
	if err := env.sess.RestoreHistory(1, st); err == nil {
		t.Error("restoring a subordinate's history should fail")
	}
	if err := env.sess.RestoreHistory(0, st); err != nil {
		t.Fatal(err)
	}
	if ld := env.sess.Agent0(); ld.History.Topics() != 2 {
		t.Errorf("Topics = %d", ld.History.Topics())
	}
	if got, err := env.sess.Run(runCtx(t), "third question"); err != nil || got != "hello again" {
		t.Fatalf("Run = %q, %v", got, err)
	}
	text := chat.requestText(0)
	if !strings.Contains(text, "they talked about the first question") || strings.Contains(text, "first answer") || !strings.Contains(text, "second answer") {
		t.Errorf("the restored history should reach the model summarised:\n%s", text)
	}
	got := env.journal.state()
	if len(got.Messages) != 2 || got.Messages[0].N != 4 || got.Messages[0].Topic != 2 || len(got.Summaries) != 0 {
		t.Errorf("journaled after restore: %+v", got)
	}
	if err := env.sess.RestoreHistory(0, st); !errors.Is(err, loop.ErrHistoryState) {
		t.Errorf("restoring into a used history = %v, want ErrHistoryState", err)
	}
}

// A system prompt that takes much of a small window leaves the history
// less than its share: the history is compressed to what is left, instead
// of the run ending with "does not fit" before any compression.
func TestCompressionLeavesRoomForTheSystemPrompt(t *testing.T) {
	t.Parallel()
	var replies []reply
	for i := range 8 {
		replies = append(replies, reply{content: big(i, 100)})
	}
	replies = append(replies, reply{content: respond("done")})
	chat := &fakeModel{replies: replies}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 1000, system: 450})
	if _, err := env.sess.Run(runCtx(t), "task"); err != nil {
		t.Fatalf("Run = %v; the history should have been compressed to fit beside the system prompt", err)
	}
	if len(env.util.requests()) == 0 {
		t.Error("the utility model was never asked")
	}
	for i, req := range chat.requests() {
		if n := requestTokens(req); n > 1000 {
			t.Errorf("request %d has %d tokens, over the window", i, n)
		}
	}
	if limit := env.sess.Agent0().HistoryLimit(); limit >= 700 {
		t.Errorf("HistoryLimit = %d; with a system prompt of about 460 tokens it must leave room for it", limit)
	}
}

// A compression that ended still over the limit is not repeated until the
// history changes: the same utility calls would only fail again.
func TestStuckCompressionIsNotRepeated(t *testing.T) {
	t.Parallel()
	var replies []reply
	for i := range 16 { // results too small to shorten: only summaries would help
		replies = append(replies, reply{content: big(i, 150)})
	}
	replies = append(replies, reply{content: respond("done")})
	chat := &fakeModel{replies: replies}
	env := newCompressEnv(t, compressOpts{chat: chat, window: 3000, util: func(context.Context, int) (string, error) {
		return "", errors.New("utility endpoint down")
	}})
	if _, err := env.sess.Run(runCtx(t), "task"); err != nil {
		t.Fatal(err)
	}
	if len(env.util.requests()) == 0 {
		t.Fatal("the history never went over its limit: the test needs more")
	}
	// Within a turn, the wait for the background compression that gave up
	// does not start the same one again: one failure per turn at most. (A
	// failure is reported when the background compression gives up, which
	// may be after the next turn started, so the failures are counted
	// against the turns, not placed in them.)
	turns, failures := 0, 0 // turns counted from the one of the first failure
	for _, e := range env.rec.all() {
		switch {
		case e.Type == loop.EventTurnStarted && failures > 0:
			turns++
		case e.Type == loop.EventWarning && strings.Contains(e.Text, "history compression"):
			if failures == 0 {
				turns = 1
			}
			failures++
		}
	}
	if failures > turns+1 { // +1: the last turn's, reported after it
		t.Fatalf("%d compressions gave up in %d turns: one that gave up was started again in the same turn", failures, turns)
	}
}
