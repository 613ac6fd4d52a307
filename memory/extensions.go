package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/loop/dirtyjson"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/store"
)

// Settings are Agent Zero's memory plugin settings (its default_config.yaml),
// under the same meaning.
type Settings struct {
	Recall             bool    // recall memories into the prompt
	RecallInterval     int     // every this many turns of a monologue, from its first (3)
	RecallHistoryLen   int     // the characters of recent history the query is made from (10,000)
	RecallQueryPrep    bool    // the utility model writes the search query (Zero: on)
	MemoriesMaxSearch  int     // 12
	SolutionsMaxSearch int     // 8
	MemoriesMaxResult  int     // 5
	SolutionsMaxResult int     // 3
	Threshold          float64 // 0.7
	Memorize           bool    // memorize fragments and solutions at the end of a monologue
	Consolidation      bool    // merge new memories with similar ones (the utility model decides)
	ReplaceThreshold   float64 // 0.9: the least similarity for "replace" (and, without consolidation, for dropping a near duplicate)
}

// DefaultSettings are Agent Zero's, except that the utility model writes
// the recall query: without embeddings a search by keywords needs one.
func DefaultSettings() Settings {
	return Settings{
		Recall: true, RecallInterval: 3, RecallHistoryLen: 10000, RecallQueryPrep: true,
		MemoriesMaxSearch: 12, SolutionsMaxSearch: 8, MemoriesMaxResult: 5, SolutionsMaxResult: 3,
		Threshold: DefaultThreshold, Memorize: true, Consolidation: true, ReplaceThreshold: 0.9,
	}
}

// Extensions are the memory plugin's built-in extensions, registered under
// Agent Zero's names so that a user can override or disable them:
// _50_recall_memories and _91_recall_wait (message_loop_prompts_after),
// _50_memorize_fragments and _51_memorize_solutions (monologue_end; they
// choose what to memorize, and Zero's _59_memorize_start sends it in
// the background once the session is idle; its _10_memorize_later,
// monologue_start, puts it off while the session works), and
// _20_behaviour_prompt (system_prompt).
type Extensions struct {
	svc *Service
	// Workspace names the scope an agent's memories go to.
	Workspace func(a *loop.Agent) string
	Settings  Settings
	Logger    *slog.Logger
	// OnMemorized, when set, is told what memorizing saved (for tests and
	// logs); it runs on the background goroutine.
	OnMemorized func(area string, saved []Memory)
	// UserRules, when set, returns the user's own behaviour rules, which
	// every workspace's agents follow besides the workspace's.
	UserRules func() string

	// IdleDelay is how long memorizing waits for its session to be idle
	// after a monologue (0: DefaultIdleDelay).
	IdleDelay time.Duration

	mu      sync.Mutex
	wg      sync.WaitGroup // every background task
	memo    sync.WaitGroup // memorizing (Wait)
	pending map[*loop.Agent]*pendingMemo
	closing bool
	stop    context.CancelFunc
	ctx     context.Context
}

// NewExtensions returns the extensions over svc.
func NewExtensions(svc *Service, workspace func(a *loop.Agent) string, s Settings) *Extensions {
	ctx, stop := context.WithCancel(context.Background())
	return &Extensions{svc: svc, Workspace: workspace, Settings: s, ctx: ctx, stop: stop, Logger: slog.New(slog.DiscardHandler)}
}

// Register adds the extensions to r.
func (x *Extensions) Register(r *hooks.Registry) {
	r.Register(hooks.MessageLoopPromptsAfter, "_50_recall_memories", x.recall)
	r.Register(hooks.MessageLoopPromptsAfter, "_91_recall_wait", x.recallWait)
	r.Register(hooks.MonologueEnd, "_50_memorize_fragments", x.memorizeFragments)
	r.Register(hooks.MonologueEnd, "_51_memorize_solutions", x.memorizeSolutions)
	r.Register(hooks.MonologueEnd, "_59_memorize_start", x.memorizeStart)
	r.Register(hooks.MonologueStart, "_10_memorize_later", x.putOff)
	r.Register(hooks.SystemPrompt, "_20_behaviour_prompt", x.behaviourPrompt)
}

// Wait starts the memorizing that waits for its session to be idle, and
// waits for all of it, at most until ctx ends (`zero run` and the faces
// wait before they exit, so what a task taught is kept).
func (x *Extensions) Wait(ctx context.Context) error {
	x.mu.Lock()
	for a, pm := range x.pending {
		pm.timer.Stop()
		x.startLocked(a, pm)
	}
	x.mu.Unlock()
	done := make(chan struct{})
	go func() { x.memo.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops memorizing in progress and waits for it.
func (x *Extensions) Close() {
	x.mu.Lock()
	x.closing = true
	for _, pm := range x.pending {
		pm.timer.Stop()
	}
	x.mu.Unlock()
	x.stop()
	x.wg.Wait()
}

// background runs f on its own goroutine with a context that outlives the
// run (bounded by timeout) and ends with Close.
func (x *Extensions) background(timeout time.Duration, f func(ctx context.Context)) bool {
	return x.run(nil, timeout, f)
}

// run is background, also counted in also (when not nil). It reports
// whether f was started (not after Close).
func (x *Extensions) run(also *sync.WaitGroup, timeout time.Duration, f func(ctx context.Context)) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closing {
		return false
	}
	x.wg.Add(1)
	if also != nil {
		also.Add(1)
	}
	go func() {
		defer x.wg.Done()
		if also != nil {
			defer also.Done()
		}
		ctx, cancel := context.WithTimeout(x.ctx, timeout)
		defer cancel()
		f(ctx)
	}()
	return true
}

// Reembed embeds, in the background, the memories of scopes that have no
// vector of the embedding model yet (Agent Zero's embedding_model_changed).
func (x *Extensions) Reembed(scopes []string) {
	x.background(time.Hour, func(ctx context.Context) {
		n, err := x.svc.Embed(ctx, scopes)
		if err != nil && ctx.Err() == nil {
			x.Logger.Warn("memory: embedding stored memories failed; they are found by keywords", "embedded", n, "err", err)
		} else if n > 0 {
			x.Logger.Info("memory: embedded stored memories", "count", n)
		}
	})
}

// ImportInBackground syncs knowledge folders into memory in the
// background (Agent Zero imports them when the memory opens); what each
// did is logged.
func (x *Extensions) ImportInBackground(dirs []KnowledgeDir) {
	done := x.svc.importing() // searches from now on wait for it
	started := x.background(time.Hour, func(ctx context.Context) {
		defer done()
		for _, d := range dirs {
			rep, err := x.svc.Import(ctx, d)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				x.Logger.Warn("knowledge import failed", "dir", d.Path, "err", err)
				continue // the other folders still come in
			}
			if rep.Added+rep.Updated+rep.Removed > 0 {
				x.Logger.Info("knowledge imported", "dir", d.Prefix, "added", rep.Added, "updated", rep.Updated, "removed", rep.Removed, "chunks", rep.Chunks)
			}
			for _, sk := range rep.Skipped {
				x.Logger.Debug("knowledge file skipped", "dir", d.Prefix, "file", sk)
			}
		}
	})
	if !started {
		done()
	}
}

const (
	dataRecall = "_recall_memories_task"
	// recallTimeout bounds one recall (Agent Zero: 30 s).
	recallTimeout = 30 * time.Second
	// memorizeTimeout bounds one memorizing.
	memorizeTimeout = 3 * time.Minute
)

// recallTask is a recall in progress; done is closed when it finished.
type recallTask struct {
	iteration int
	done      chan struct{}
}

// historyText is the agent's history as text, each message after its role.
func historyText(a *loop.Agent) string {
	var b strings.Builder
	for _, m := range a.History.Output() {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	return b.String()
}

// recall starts, every RecallInterval turns, a search for memories and
// solutions related to the conversation; _91_recall_wait waits for it and
// the results go into the persistent extras ("memories", "solutions").
func (x *Extensions) recall(ctx context.Context, p hooks.Payload) error {
	lp, ok := p.(*loop.LoopPayload)
	if !ok || lp.Agent == nil || !x.Settings.Recall {
		return nil
	}
	a, ld := lp.Agent, lp.Loop
	if ld.Iteration%max(1, x.Settings.RecallInterval) != 0 {
		return nil
	}
	if acknowledgement(ld.UserMessage) {
		return nil // "thanks", "ok": nothing to look for (Agent Zero's query prompt answers "-")
	}
	ws := x.Workspace(a)
	scopes := []string{ws, ""}
	hist := cut.Tail(historyText(a), max(0, x.Settings.RecallHistoryLen))
	msg := cmp.Or(ld.UserMessage, "None")
	t := &recallTask{iteration: ld.Iteration, done: make(chan struct{})}
	a.Data[dataRecall] = t
	// The search runs while the turn goes on; its results are put into the
	// extras by recallWait, on the agent's goroutine.
	var memories, solutions []Hit
	// Owned by x (Close waits for it), bounded by recallTimeout.
	started := x.run(nil, recallTimeout, func(rctx context.Context) {
		defer close(t.done)
		// Knowledge being imported is waited for; with nothing stored
		// there is nothing to look for, and no utility-model call.
		x.svc.settle(rctx)
		if n, err := x.svc.st.CountMemories(scopes); err != nil || n == 0 {
			return
		}
		query := msg + "\n\n" + hist
		if x.Settings.RecallQueryPrep {
			q, err := a.CallUtilityModel(rctx, a.Prompt("memory.memories_query.sys.md", nil),
				a.Prompt("memory.memories_query.msg.md", map[string]any{"history": hist, "message": msg}))
			if err != nil {
				x.Logger.Warn("memory recall: the utility model wrote no query", "err", err)
				return
			}
			query = strings.TrimSpace(q)
		}
		if len(query) <= 3 {
			return
		}
		var err error
		memories, err = x.svc.Search(rctx, Query{Text: query, Scopes: scopes, Limit: x.Settings.MemoriesMaxSearch,
			Threshold: x.Settings.Threshold, Filter: "area == 'main' or area == 'fragments'"})
		if err != nil {
			x.Logger.Warn("memory recall failed", "err", err)
			return
		}
		solutions, err = x.svc.Search(rctx, Query{Text: query, Scopes: scopes, Limit: x.Settings.SolutionsMaxSearch,
			Threshold: x.Settings.Threshold, Filter: "area == 'solutions'"})
		if err != nil {
			x.Logger.Warn("memory recall failed", "err", err)
		}
	})
	if !started {
		close(t.done)
	}
	a.Data[dataRecall+"_apply"] = func() {
		ld.ExtrasPersistent.Delete("memories")
		ld.ExtrasPersistent.Delete("solutions")
		memories = memories[:min(len(memories), x.Settings.MemoriesMaxResult)]
		solutions = solutions[:min(len(solutions), x.Settings.SolutionsMaxResult)]
		if len(memories) > 0 {
			ld.ExtrasPersistent.Set("memories", a.Prompt("agent.system.memories.md", map[string]any{"memories": texts(memories)}))
		}
		if len(solutions) > 0 {
			ld.ExtrasPersistent.Set("solutions", a.Prompt("agent.system.solutions.md", map[string]any{"solutions": texts(solutions)}))
		}
		x.Logger.Debug("memory recall", "memories", len(memories), "solutions", len(solutions))
	}
	return nil
}

func texts(hs []Hit) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.Text
	}
	return strings.Join(parts, "\n\n")
}

// recallWait waits for the recall started this turn (or an earlier one
// still going) and puts what it found into the extras.
func (x *Extensions) recallWait(ctx context.Context, p hooks.Payload) error {
	lp, ok := p.(*loop.LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	a := lp.Agent
	t, _ := a.Data[dataRecall].(*recallTask)
	apply, _ := a.Data[dataRecall+"_apply"].(func())
	if t == nil || apply == nil {
		return nil
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil // the run ends; the next recall starts afresh
	}
	delete(a.Data, dataRecall)
	delete(a.Data, dataRecall+"_apply")
	apply()
	return nil
}

func (x *Extensions) memorizeFragments(ctx context.Context, p hooks.Payload) error {
	return x.queueMemorize(p, AreaFragments)
}

func (x *Extensions) memorizeSolutions(ctx context.Context, p hooks.Payload) error {
	return x.queueMemorize(p, AreaSolutions)
}

const (
	// dataMemorize holds the areas the monologue_end extensions asked to
	// memorize (*memorizeJob); _59_memorize_start sends them.
	dataMemorize = "_memorize_job"
	// dataMemorized holds how far the agent's history was memorized
	// (*memorized).
	dataMemorized = "_memorized"
	// transcriptMax bounds the new part of a conversation one memorizing
	// reads: its head and its tail are kept.
	transcriptMax = 96 << 10
	// contextMessages are the messages before the new part given to the
	// utility model for context.
	contextMessages = 2
)

// memorizeJob is what the memorize extensions asked for this monologue.
type memorizeJob struct{ fragments, solutions bool }

// memorized is the number of the agent's raw history messages memorized
// so far: only what came after is read next time. A memorizing that fails
// sets it back, so its messages are read again.
type memorized struct{ upto atomic.Int64 }

// queueMemorize marks area to be memorized at the end of this monologue.
func (x *Extensions) queueMemorize(p hooks.Payload, area string) error {
	lp, ok := p.(*loop.LoopPayload)
	if !ok || lp.Agent == nil || !x.Settings.Memorize {
		return nil
	}
	job, _ := lp.Agent.Data[dataMemorize].(*memorizeJob)
	if job == nil {
		job = &memorizeJob{}
		lp.Agent.Data[dataMemorize] = job
	}
	switch area {
	case AreaFragments:
		job.fragments = true
	case AreaSolutions:
		job.solutions = true
	}
	return nil
}

// memorizeStart asks the utility model, in the background, what of the
// conversation since the last memorizing is worth remembering, and saves
// it into the workspace's memory, consolidated with what is there. With
// Agent Zero's two prompts as they come, fragments and solutions are asked
// for in one call (memory.memorize.sys.md); a profile that changed either
// prompt gets a call per prompt. A monologue with nothing new (an
// acknowledgement answered, no tool used) is left for the next one to
// read. The run does not wait for any of it.
func (x *Extensions) memorizeStart(ctx context.Context, p hooks.Payload) error {
	lp, ok := p.(*loop.LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	a := lp.Agent
	job, _ := a.Data[dataMemorize].(*memorizeJob)
	delete(a.Data, dataMemorize)
	if job == nil || !x.Settings.Memorize {
		return nil
	}
	if lp.Loop == nil || lp.Loop.LastResponse == "" {
		return nil // the model said nothing this monologue (unreachable, cancelled): nothing learned
	}
	state, _ := a.Data[dataMemorized].(*memorized)
	if state == nil {
		state = &memorized{}
		a.Data[dataMemorized] = state
	}
	from, n := int(state.upto.Load()), a.History.Len()
	if n <= from || nothingNew(lp.Loop.UserMessage, n-from) {
		return nil
	}
	hist := transcript(a, from) // on the agent's goroutine: the history may grow after
	if strings.TrimSpace(hist) == "" {
		return nil
	}
	type call struct{ system, area, hist string }
	var calls []call
	switch {
	case job.fragments && job.solutions && agentZeroPrompts(a):
		calls = []call{{system: "memory.memorize.sys.md"}}
	default:
		if job.fragments {
			calls = append(calls, call{system: "memory.memories_sum.sys.md", area: AreaFragments})
		}
		if job.solutions {
			calls = append(calls, call{system: "memory.solutions_sum.sys.md", area: AreaSolutions})
		}
	}
	for i := range calls {
		calls[i].system = a.Prompt(calls[i].system, nil)
		calls[i].hist = a.FitUtility(calls[i].system, hist)
	}
	ws := x.Workspace(a)
	sess := a.Session().ID()
	x.later(a, state, from, n, len(calls), func(put context.Context, answered *atomic.Int32) {
		var asked sync.WaitGroup // launch returns when its questions are answered
		defer asked.Wait()
		for _, c := range calls {
			asked.Add(1)
			started := x.run(&x.memo, memorizeTimeout, func(ctx context.Context) {
				defer asked.Done()
				ask, stop := context.WithCancelCause(ctx)
				defer stop(nil)
				go func() { // a new monologue of the session puts the asking off
					select {
					case <-put.Done():
						stop(context.Cause(put))
					case <-ask.Done():
					}
				}()
				answer, err := a.CallUtilityModel(ask, c.system, c.hist)
				answered.Add(1)
				if err != nil {
					state.upto.CompareAndSwap(int64(n), int64(from)) // read again next time
					if !errors.Is(context.Cause(ask), errPutOff) {
						x.Logger.Warn("memorize: the utility model failed", "area", cmp.Or(c.area, "all"), "err", err)
					}
					return
				}
				items := map[string][]string{}
				if c.area == "" {
					items[AreaFragments], items[AreaSolutions] = parseMemorized(answer)
				} else {
					items[c.area] = parseItems(answer)
				}
				for _, area := range []string{AreaFragments, AreaSolutions} {
					if texts, ok := items[area]; ok {
						x.save(ctx, a, Memory{Scope: ws, Area: area}, sess, texts)
					}
				}
			})
			if !started {
				asked.Done()
			}
		}
	})
	return nil
}

// errPutOff cancels a memorizing that a new monologue of its session put
// off: what it was to read is read by the next one.
var errPutOff = errors.New("memorizing put off: the session is busy")

// DefaultIdleDelay is how long memorizing waits for its session to be
// idle after a monologue.
const DefaultIdleDelay = 2 * time.Second

// pendingMemo is a memorizing waiting for its session to be idle, or
// asking the utility model.
type pendingMemo struct {
	session  string
	timer    *time.Timer
	launch   func(put context.Context, answered *atomic.Int32)
	running  bool
	put      context.CancelCauseFunc
	ctx      context.Context
	calls    int          // the questions launch asks
	answered atomic.Int32 // the questions answered (or failed) so far
	mark     func()       // moves the agent's memorized mark past what it reads
	undo     func()       // sets the mark back
}

// later runs launch once agent a's session has been idle for IdleDelay
// (at once on Wait): memorizing never competes with the user's next turn
// for the model (a local server answers one request at a time) or the
// machine. A monologue of the session that starts meanwhile drops it, or
// cancels its question to the model (put is done) when it already asks;
// either way the next monologue's memorizing reads what it was to read.
func (x *Extensions) later(a *loop.Agent, state *memorized, from, n, calls int, launch func(put context.Context, answered *atomic.Int32)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closing {
		return
	}
	if x.pending == nil {
		x.pending = map[*loop.Agent]*pendingMemo{}
	}
	if old := x.pending[a]; old != nil && !old.running {
		old.timer.Stop()
	}
	ctx, put := context.WithCancelCause(x.ctx)
	pm := &pendingMemo{session: a.Session().ID(), launch: launch, put: put, ctx: ctx, calls: calls,
		mark: func() { state.upto.Store(int64(n)) },
		undo: func() { state.upto.CompareAndSwap(int64(n), int64(from)) }}
	x.pending[a] = pm
	delay := x.IdleDelay
	if delay <= 0 {
		delay = DefaultIdleDelay
	}
	pm.timer = time.AfterFunc(delay, func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.startLocked(a, pm)
	})
}

// startLocked launches pm if it still waits; x.mu is held.
func (x *Extensions) startLocked(a *loop.Agent, pm *pendingMemo) {
	if x.pending[a] != pm || pm.running || x.closing {
		return
	}
	pm.running = true
	pm.mark()     // read from now on; undone when put off before its answers
	x.memo.Add(1) // the launch adds its own; this one covers the handover
	go func() {
		defer x.memo.Done()
		pm.launch(pm.ctx, &pm.answered)
		x.mu.Lock()
		if x.pending[a] == pm {
			delete(x.pending, a)
		}
		x.mu.Unlock()
		pm.put(nil)
	}()
}

// putOff drops or cancels the memorizing of agent a's session: a new
// monologue of it starts (_10_memorize_later, monologue_start).
func (x *Extensions) putOff(_ context.Context, p hooks.Payload) error {
	lp, ok := p.(*loop.LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	sess := lp.Agent.Session().ID()
	x.mu.Lock()
	defer x.mu.Unlock()
	for a, pm := range x.pending {
		if pm.session != sess {
			continue
		}
		pm.timer.Stop()
		pm.put(errPutOff)
		if !pm.running {
			delete(x.pending, a)
		} else if int(pm.answered.Load()) < pm.calls {
			pm.undo() // now, before this monologue's end reads the mark
		}
	}
	return nil
}

// save consolidates and saves each text as a memory like m.
func (x *Extensions) save(ctx context.Context, a *loop.Agent, m Memory, sess string, texts []string) {
	var saved []Memory
	for _, text := range texts {
		m.Text, m.Meta = text, map[string]any{"source": "memorize", "session": sess, "agent": a.Number}
		ms, err := x.consolidate(ctx, a, m)
		if err != nil {
			x.Logger.Warn("memorize failed", "area", m.Area, "err", err)
			return
		}
		saved = append(saved, ms...)
	}
	x.Logger.Debug("memorized", "area", m.Area, "items", len(texts), "saved", len(saved))
	if x.OnMemorized != nil {
		x.OnMemorized(m.Area, saved)
	}
}

// transcript is the agent's conversation from raw message from on, after
// the few messages before it for context, bounded.
func transcript(a *loop.Agent, from int) string {
	text := a.History.Transcript(from)
	if len(text) > transcriptMax {
		text = cut.Head(text, transcriptMax/4) + "\n[…]\n" + cut.Tail(text, transcriptMax*3/4)
	}
	if from == 0 {
		return text
	}
	earlier := strings.TrimSuffix(a.History.Transcript(max(0, from-contextMessages)), a.History.Transcript(from))
	return "# EARLIER (memorized already, for context only)\n" + cut.Tail(earlier, 4<<10) + "\n# NEW\n" + text
}

// agentZeroPrompts reports whether the agent's two memorizing prompts
// are Agent Zero's own, which memory.memorize.sys.md asks for in one call.
func agentZeroPrompts(a *loop.Agent) bool {
	f, s := defaultSumPrompts()
	return a.Prompt("memory.memories_sum.sys.md", nil) == f && a.Prompt("memory.solutions_sum.sys.md", nil) == s
}

var defaultSumPrompts = sync.OnceValues(func() (string, string) {
	p := profiles.New()
	f, _ := p.Render("memory.memories_sum.sys.md", nil)
	s, _ := p.Render("memory.solutions_sum.sys.md", nil)
	return f, s
})

// acknowledgements are the words of a message that brings nothing to
// remember ("thanks", "ok", "hi").
var acknowledgements = map[string]bool{
	"thanks": true, "thank": true, "you": true, "thx": true, "ty": true, "ok": true, "okay": true, "k": true,
	"yes": true, "yep": true, "yeah": true, "no": true, "nope": true, "great": true, "good": true, "nice": true,
	"cool": true, "perfect": true, "awesome": true, "hi": true, "hello": true, "hey": true, "bye": true,
	"sure": true, "got": true, "it": true, "fine": true, "so": true, "much": true, "very": true, "alright": true,
	"right": true, "lol": true, "wow": true, "cheers": true, "noted": true,
}

// nothingNew reports whether a monologue of n new history messages that
// answered msg brings nothing to memorize: the user acknowledged or
// greeted in a few words, and the agent answered without a tool.
func nothingNew(msg string, n int) bool {
	return n <= 2 && acknowledgement(msg) // more messages: a tool ran
}

// acknowledgement reports whether msg is a few words that acknowledge or
// greet.
func acknowledgement(msg string) bool {
	words := strings.FieldsFunc(strings.ToLower(msg), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 || len(words) > 4 {
		return false
	}
	for _, w := range words {
		if !acknowledgements[w] {
			return false
		}
	}
	return true
}

// parseMemorized reads the answer to memory.memorize.sys.md: an object
// {"fragments": [...], "solutions": [...]}, leniently; an array is read as
// fragments (texts) and solutions (objects).
func parseMemorized(answer string) (fragments, solutions []string) {
	switch v := parseLenient(answer).(type) {
	case map[string]any:
		f, _ := v["fragments"].([]any)
		s, _ := v["solutions"].([]any)
		return itemsOf(f), itemsOf(s)
	case []any:
		var f, s []any
		for _, it := range v {
			if _, ok := it.(map[string]any); ok {
				s = append(s, it)
			} else {
				f = append(f, it)
			}
		}
		return itemsOf(f), itemsOf(s)
	}
	return nil, nil
}

// parseItems reads the utility model's answer: a JSON array of notes
// (strings, or objects for solutions: {"problem", "solution"}), leniently.
// Anything else is nothing to memorize.
func parseItems(answer string) []string {
	var list []any
	switch x := parseLenient(answer).(type) {
	case []any:
		list = x
	case string, map[string]any:
		list = []any{x}
	}
	return itemsOf(list)
}

// itemsOf is the texts of a list of notes, bounded.
func itemsOf(list []any) []string {
	var out []string
	for _, it := range list {
		var text string
		switch x := it.(type) {
		case string:
			text = x
		case map[string]any:
			if p, s := fmt.Sprint(x["problem"]), fmt.Sprint(x["solution"]); x["problem"] != nil && x["solution"] != nil {
				text = "# Problem\n" + p + "\n# Solution\n" + s
			} else {
				raw, _ := json.Marshal(x)
				text = string(raw)
			}
		default:
			continue
		}
		text = strings.TrimSpace(text)
		if text == "" || len(text) > maxMemorized {
			continue
		}
		out = append(out, text)
		if len(out) == maxItems {
			break
		}
	}
	return out
}

// Bounds on what one memorizing saves: a model that talks nonsense must not
// fill the memory.
const (
	maxItems      = 20
	maxMemorized  = 8 << 10
	maxSimilar    = 4 // shown to the utility model, as Agent Zero
	similarSearch = 8
)

// consolidation is the utility model's decision (memory.consolidation.sys.md).
type consolidation struct {
	Action           string   `json:"action"`
	MemoriesToRemove []string `json:"memories_to_remove"`
	MemoriesToUpdate []struct {
		ID         string `json:"id"`
		NewContent string `json:"new_content"`
	} `json:"memories_to_update"`
	NewMemoryContent string `json:"new_memory_content"`
}

// consolidate saves m, merged with similar memories of its area and scope
// as the utility model decides (merge, replace, update, keep_separate,
// skip). The model only ever touches the memories it was shown; a
// replace of a memory less similar than ReplaceThreshold keeps both.
func (x *Extensions) consolidate(ctx context.Context, a *loop.Agent, m Memory) ([]Memory, error) {
	var similar []Hit
	if x.Settings.Consolidation || x.Settings.ReplaceThreshold > 0 {
		var err error
		similar, err = x.svc.Search(ctx, Query{Text: m.Text, Scopes: []string{m.Scope}, Limit: similarSearch,
			Threshold: x.Settings.Threshold, Filter: "area == '" + m.Area + "'"})
		if err != nil {
			return nil, err
		}
	}
	if !x.Settings.Consolidation {
		// Agent Zero without consolidation: drop near duplicates, insert.
		var dup []string
		for _, h := range similar {
			if h.Relevance >= x.Settings.ReplaceThreshold && h.Source == "" {
				dup = append(dup, h.ID)
			}
		}
		if _, err := x.svc.Delete(dup); err != nil {
			return nil, err
		}
		return x.svc.Save(ctx, m)
	}
	similar = similar[:min(len(similar), maxSimilar)]
	if len(similar) == 0 {
		return x.svc.Save(ctx, m)
	}
	var b strings.Builder
	shown := map[string]Hit{}
	for _, h := range similar {
		shown[h.ID] = h
		fmt.Fprintf(&b, "ID: %s\nTimestamp: %s\nSimilarity: %.2f\nContent: %s\n\n", h.ID, h.Created.Local().Format(TimeFormat), h.Relevance, h.Text)
	}
	metaJSON, _ := json.Marshal(m.Meta)
	answer, err := a.CallUtilityModel(ctx, a.Prompt("memory.consolidation.sys.md", nil), a.Prompt("memory.consolidation.msg.md", map[string]any{
		"area": m.Area, "current_timestamp": time.Now().Format(TimeFormat),
		"new_memory": m.Text, "new_memory_metadata": string(metaJSON), "similar_memories": b.String(),
	}))
	if err != nil {
		return nil, fmt.Errorf("consolidation: %w", err)
	}
	var c consolidation
	if v, ok := parseLenient(answer).(map[string]any); ok {
		raw, _ := json.Marshal(v)
		_ = json.Unmarshal(raw, &c)
	}
	// Only the memories shown may go; knowledge stays (its file owns it).
	var remove []string
	for _, id := range c.MemoriesToRemove {
		if h, ok := shown[id]; ok && h.Source == "" {
			remove = append(remove, id)
		}
	}
	content := strings.TrimSpace(c.NewMemoryContent)
	if content == "" || len(content) > maxMemorized {
		content = m.Text
	}
	switch c.Action {
	case "merge":
		if _, err := x.svc.Delete(remove); err != nil {
			return nil, err
		}
		m.Meta["consolidated_from"] = remove
		m.Text = content
		return x.svc.Save(ctx, m)
	case "replace":
		var safe []string
		for _, id := range remove {
			if shown[id].Relevance >= x.Settings.ReplaceThreshold {
				safe = append(safe, id)
			}
		}
		if len(safe) < len(remove) { // not similar enough to replace: keep both
			return x.svc.Save(ctx, m)
		}
		if _, err := x.svc.Delete(safe); err != nil {
			return nil, err
		}
		m.Text = content
		return x.svc.Save(ctx, m)
	case "update":
		var out []Memory
		for _, u := range c.MemoriesToUpdate {
			h, ok := shown[u.ID]
			text := strings.TrimSpace(u.NewContent)
			if !ok || h.Source != "" || text == "" || len(text) > maxMemorized {
				continue
			}
			meta := h.Meta
			meta["updated"] = time.Now().Format(TimeFormat)
			if err := x.svc.Update(ctx, h.ID, text, meta); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			h.Text = text
			out = append(out, h.Memory)
		}
		if len(out) > 0 {
			return out, nil
		}
		return x.svc.Save(ctx, m)
	default: // keep_separate, skip, or an answer that is not a decision
		return x.svc.Save(ctx, m)
	}
}

// parseLenient reads the first JSON array or object in a model's answer as
// Agent Zero's DirtyJson does (code fences, prose around it, trailing
// commas, single quotes...); nil when there is none.
func parseLenient(answer string) any {
	i := strings.IndexAny(answer, "[{")
	if i < 0 {
		return nil
	}
	if answer[i] == '{' {
		v, _, err := dirtyjson.Parse(answer[i:])
		if err != nil {
			return nil
		}
		return v
	}
	body := answer[i:]
	if j := strings.LastIndexByte(body, ']'); j >= 0 {
		body = body[:j+1]
	}
	v, _, err := dirtyjson.Parse(`{"v": ` + body + `}`)
	if err != nil {
		return nil
	}
	return v["v"]
}
