package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
)

// History compression is Agent Zero's (helpers/history.py, History.compress
// and the Topic and Bulk methods it calls), carried over to a history of
// raw messages with summaries laid over them. The numbers are its
// constants.
const (
	bulkMergeCount = 3 // BULK_MERGE_COUNT
	// topicsMergeCount topics go into a new bulk at a time (TOPICS_MERGE_COUNT).
	topicsMergeCount = 3
	// Shares of the compression target: the current topic, the older
	// topics, and the bulks (CURRENT_TOPIC_RATIO, HISTORY_TOPIC_RATIO,
	// HISTORY_BULK_RATIO).
	currentTopicShare = 0.5
	historyTopicShare = 0.3
	bulkShare         = 0.2
	// The part of a topic's middle kept when it is summarised: the newest
	// 65 % of the current topic, none of an older one (*_ATTENTION_COMPRESSION).
	currentTopicAttention = 0.65
	historyTopicAttention = 0.0
	// A message is large when it holds more than this share of its part's
	// share of the limit (LARGE_MESSAGE_TO_*_TOPIC_RATIO).
	largeMessageCurrent = 0.5
	largeMessageHistory = 0.2
	// Compression goes on until every part is within its share of this
	// much of the limit (COMPRESSION_TARGET_RATIO).
	compressionTarget = 0.8
)

// DefaultHistoryShare is the share of the model's context the history may
// take before it is compressed (Agent Zero's ctx_history); the rest is
// left to the system prompt, the extras and the reply.
const DefaultHistoryShare = 0.7

// messageOverhead is what a chat API adds to each message (role and
// separators), in tokens, for the check that a prompt fits.
const messageOverhead = 4

// ErrContextFull ends a run whose next prompt would not fit in the model's
// context even after history compression; it is checked before the prompt
// is sent (see [ContextFullError]).
var ErrContextFull = errors.New("the conversation does not fit in the model's context")

// ContextFullError is the error of a prompt that does not fit in the
// model's context. It names the largest message of the prompt (or the
// system prompt) so the person can see what filled it. It matches
// [ErrContextFull], and also [ErrMessageTooLarge] when that one message
// alone is larger than the context.
type ContextFullError struct {
	Window int // the model's context, in tokens
	Prompt int // the prompt's tokens, as counted
	System int // of which the system prompt's
	// The largest message: its role ("system", "user" or "assistant"), its
	// first words and its tokens.
	Role   string
	Start  string
	Tokens int
}

func (e *ContextFullError) Error() string {
	if e.Tokens > e.Window {
		return fmt.Sprintf("%v: the %s message %q alone is %d tokens, more than the model's context of %d",
			ErrContextFull, e.Role, e.Start, e.Tokens, e.Window)
	}
	return fmt.Sprintf("%v: the prompt would be %d tokens (system prompt %d) for a context of %d, even after history compression; its largest message is the %s message %q (%d tokens)",
		ErrContextFull, e.Prompt, e.System, e.Window, e.Role, e.Start, e.Tokens)
}

func (e *ContextFullError) Unwrap() []error {
	if e.Tokens > e.Window {
		return []error{ErrContextFull, ErrMessageTooLarge}
	}
	return []error{ErrContextFull}
}

// TokenChange is a token count before and after a change
// (history_compressed).
type TokenChange struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// compressState is an agent's history compression: at most one runs at a
// time, and the one started in the background is remembered so that a turn
// can wait for it.
type compressState struct {
	run  sync.Mutex // held by the compression that runs
	mu   sync.Mutex
	task chan struct{} // closed when the background compression ends
	// stuck is the history's size (raw messages and summaries) when a
	// compression last ended still over the limit: until the history
	// changes, another would only repeat the same utility calls.
	stuck historySize
	// system is the token count of the system prompt last sent, which the
	// history's limit leaves room for (read by the background compression).
	system atomic.Int64
}

// historySize identifies a state of a history: it only grows.
type historySize struct{ messages, summaries int }

// compressing returns the channel of the background compression still
// running, or nil.
func (a *Agent) compressing() <-chan struct{} {
	st := &a.compression
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.task == nil {
		return nil
	}
	select {
	case <-st.task:
		st.task = nil
		return nil
	default:
		return st.task
	}
}

// HistoryLimit is how many tokens the history may take before it is
// compressed: Limits.ContextTokens × Limits.HistoryShare (Agent Zero's
// ctx_history), but never more than the window leaves beside the system
// prompt last sent and a reserve for the extras and the reply: a large
// system prompt in a small window would otherwise make a prompt too long
// for the window before its history was ever compressed.
func (a *Agent) HistoryLimit() int {
	window := a.session.contextTokens()
	limit := int(float64(window) * a.session.cfg.Limits.HistoryShare)
	if sys := int(a.compression.system.Load()); sys > 0 {
		room := window - sys - window/replyReserve
		limit = max(min(limit, room), 0)
	}
	return limit
}

// replyReserve: 1/replyReserve of the window is kept for the extras and
// the model's reply when the system prompt bounds the history.
const replyReserve = 10

// historyOverLimit reports whether the history is over its limit; a
// history whose bytes are within it is not counted.
func (a *Agent) historyOverLimit() bool {
	limit := a.HistoryLimit()
	return a.History.tokensAtMost() > limit && a.History.Tokens() > limit
}

// startCompression compresses the history in the background. The work
// ends with ctx (the run's, or a subordinate's delegation), and the session
// waits for it before it reports the run's end.
func (a *Agent) startCompression(ctx context.Context) {
	done := make(chan struct{})
	a.compression.mu.Lock()
	a.compression.task = done
	a.compression.mu.Unlock()
	a.session.compressions.Go(func() {
		defer close(done)
		a.compressHistory(ctx)
	})
}

// compressHistory is Agent Zero's History.compress: when the history is
// over its limit, it compresses the part most over its share of the target
// (the current topic, the older topics or the bulks), again and again,
// until no part is over its share or nothing more can be done. It reports
// whether anything was compressed. A failing utility model is a warning:
// what was done stays, and the history is valid at every step.
func (a *Agent) compressHistory(ctx context.Context) bool {
	return a.compressHistoryTo(ctx, -1)
}

// compressHistoryTo is compressHistory to a limit of its own (forced, when
// 0 or more: after the model refused a prompt as too long, see
// overflow.go); -1 is the history's limit.
func (a *Agent) compressHistoryTo(ctx context.Context, forced int) bool {
	a.compression.run.Lock()
	defer a.compression.run.Unlock()
	limit := a.HistoryLimit()
	if forced >= 0 {
		limit = min(limit, forced)
	}
	before := a.History.Tokens()
	if before <= limit {
		return false
	}
	st := &a.compression
	size := a.History.size()
	st.mu.Lock()
	stuck := st.stuck == size
	st.mu.Unlock()
	if stuck && forced < 0 {
		return false // nothing new since the last compression gave up
	}
	c := &compressor{a: a, h: a.History, limit: float64(limit), target: float64(limit) * compressionTarget}
	compressed := false
	for ctx.Err() == nil {
		did, err := c.step(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.warn("", "history compression: "+err.Error())
			}
			break
		}
		if !did {
			break
		}
		compressed = true
	}
	if ctx.Err() == nil && a.History.Tokens() > limit {
		st.mu.Lock()
		st.stuck = a.History.size()
		st.mu.Unlock()
	}
	if compressed {
		// The agent may have added messages meanwhile: they are not part
		// of what was compressed, nor of what it came to.
		after := a.History.Tokens() - a.History.tokensFrom(size.messages)
		a.emit(Event{Type: EventHistoryCompressed, Item: a.session.newItem("history"),
			Text:   fmt.Sprintf("history compressed from %d to %d tokens", before, after),
			Tokens: &TokenChange{Before: before, After: after}})
	}
	return compressed
}

// compressor does one compression's steps.
type compressor struct {
	a      *Agent
	h      *History
	limit  float64
	target float64
	// focus is what the person asked a summary to keep (Compact).
	focus string
}

// histParts is the history split as Agent Zero splits it: the current
// topic, the older topics, and the bulks (units of the view, by index).
type histParts struct {
	units   []histUnit
	current []int
	topics  [][]int
	bulks   []int
}

func splitParts(units []histUnit, current int) histParts {
	p := histParts{units: units}
	last := -1
	for i, u := range units {
		switch {
		case u.kind == SummaryBulk:
			p.bulks = append(p.bulks, i)
		case u.kind == SummaryDropped:
		case u.topic >= current:
			p.current = append(p.current, i)
		default:
			if u.topic != last {
				p.topics = append(p.topics, nil)
				last = u.topic
			}
			p.topics[len(p.topics)-1] = append(p.topics[len(p.topics)-1], i)
		}
	}
	return p
}

func (p *histParts) tokens(idx ...int) int {
	n := 0
	for _, i := range idx {
		n += p.units[i].tokens
	}
	return n
}

// step compresses one part: the one most over its share first, the next
// if that one cannot be compressed (history.py: History.compress).
func (c *compressor) step(ctx context.Context) (bool, error) {
	units, current := c.h.countedView()
	p := splitParts(units, current)
	var topics int
	for _, t := range p.topics {
		topics += p.tokens(t...)
	}
	type part struct {
		tokens   int
		share    float64
		compress func(context.Context, *histParts) (bool, error)
	}
	parts := []part{
		{p.tokens(p.current...), currentTopicShare, c.compressCurrent},
		{topics, historyTopicShare, c.compressTopics},
		{p.tokens(p.bulks...), bulkShare, c.compressBulks},
	}
	over := func(pt part) float64 { return float64(pt.tokens) / c.target / pt.share }
	slices.SortStableFunc(parts, func(x, y part) int { return cmp.Compare(over(y), over(x)) })
	for _, pt := range parts {
		if float64(pt.tokens) <= pt.share*c.target {
			continue
		}
		if did, err := pt.compress(ctx, &p); did || err != nil {
			return did, err
		}
	}
	return false, nil
}

// compressCurrent is Topic.compress on the current topic: shorten its
// largest large message, else summarise the oldest part of its middle.
func (c *compressor) compressCurrent(ctx context.Context, p *histParts) (bool, error) {
	if did, err := c.truncateLarge(p, p.current, c.limit*currentTopicShare*largeMessageCurrent); did || err != nil {
		return did, err
	}
	return c.attention(ctx, p, p.current, currentTopicAttention)
}

// compressTopics is History.compress_topics: shorten a large message of an
// older topic, else summarise an older topic's middle (its first and last
// message stay), else move the oldest topics into a bulk.
func (c *compressor) compressTopics(ctx context.Context, p *histParts) (bool, error) {
	for _, t := range p.topics {
		if did, err := c.truncateLarge(p, t, c.limit*historyTopicShare*largeMessageHistory); did || err != nil {
			return did, err
		}
	}
	for _, t := range p.topics {
		if did, err := c.attention(ctx, p, t, historyTopicAttention); did || err != nil {
			return did, err
		}
	}
	if len(p.topics) == 0 {
		return false, nil
	}
	n := 1
	if len(p.topics) >= topicsMergeCount {
		n = topicsMergeCount
	}
	first, last := p.topics[0], p.topics[n-1]
	return c.summarize(ctx, p, first[0], last[len(last)-1], SummaryBulk)
}

// compressBulks is History.compress_bulks: merge the bulks in groups of
// three (each group summarised again); with a single bulk left, drop it.
func (c *compressor) compressBulks(ctx context.Context, p *histParts) (bool, error) {
	if len(p.bulks) == 1 {
		u := p.units[p.bulks[0]]
		return c.lay(SummaryDropped, u.from, u.to, "", u.tokens)
	}
	did := false
	for i := 0; i < len(p.bulks); i += bulkMergeCount {
		g := p.bulks[i:min(i+bulkMergeCount, len(p.bulks))]
		if len(g) < 2 {
			continue
		}
		ok, err := c.summarize(ctx, p, g[0], g[len(g)-1], SummaryBulk)
		if err != nil {
			return did, err
		}
		did = did || ok
	}
	return did, nil
}

// attention is Topic.compress_attention: the topic's first and last
// message stay, and the oldest part of its middle (all but ratio of it) is
// summarised into one fw.msg_summary.md message.
func (c *compressor) attention(ctx context.Context, p *histParts, topic []int, ratio float64) (bool, error) {
	middle := len(topic) - 2
	if middle < 2 {
		return false, nil
	}
	n := middle - int(math.Floor(float64(middle)*ratio))
	if n < 1 {
		return false, nil
	}
	if n == 1 && p.units[topic[1]].kind != "" {
		n = 2 // a summary alone would only be summarised again
	}
	return c.summarize(ctx, p, topic[1], topic[n], SummaryMessages)
}

// summarize has the utility model summarise the units first..last (Agent
// Zero's Topic.summarize_messages and Bulk.summarize, both with
// fw.topic_summary.sys.md and fw.topic_summary.msg.md) and lays the
// summary over their messages.
func (c *compressor) summarize(ctx context.Context, p *histParts, first, last int, kind string) (bool, error) {
	var lines []string
	replaced := 0
	for _, u := range p.units[first : last+1] {
		if u.kind == SummaryDropped {
			continue
		}
		label := "user"
		if u.ai {
			label = "ai"
		}
		lines = append(lines, label+": "+u.content)
		replaced += u.tokens
	}
	system, err := c.a.Render("fw.topic_summary.sys.md", nil)
	if err != nil {
		return false, err
	}
	msg, err := c.a.Render("fw.topic_summary.msg.md", map[string]any{"content": strings.Join(lines, "\n")})
	if err != nil {
		return false, err
	}
	if c.focus != "" {
		msg += "\n\nThe user asked the summary to focus on: " + c.focus
	}
	summary, err := c.a.CallUtilityModel(ctx, system, msg)
	if err != nil {
		return false, err
	}
	if summary = strings.TrimSpace(summary); summary == "" {
		return false, errors.New("the utility model returned an empty summary")
	}
	content := summary
	if kind == SummaryMessages {
		if content, err = c.a.Render("fw.msg_summary.md", map[string]any{"summary": summary}); err != nil {
			return false, err
		}
	}
	return c.lay(kind, p.units[first].from, p.units[last].to, content, replaced)
}

// truncateLarge is Topic.compress_large_messages: the largest message of
// the topic over maxTokens is cut in the middle to about maxTokens (no
// model call).
func (c *compressor) truncateLarge(p *histParts, topic []int, maxTokens float64) (bool, error) {
	var large []int
	for _, i := range topic {
		if u := p.units[i]; u.kind == "" && float64(u.tokens) > maxTokens {
			large = append(large, i)
		}
	}
	slices.SortStableFunc(large, func(x, y int) int { return cmp.Compare(p.units[y].tokens, p.units[x].tokens) })
	for _, i := range large {
		u := p.units[i]
		// Pictures go first, each named in its place (as Agent Zero
		// replaces them with a placeholder); the text is cut only when it
		// is large itself.
		text := u.content
		if textTokens := max(u.tokens-u.images*llm.ImageTokens, 1); float64(textTokens) > maxTokens {
			trim := float64(len(u.content)) * maxTokens / float64(textTokens)
			text = c.truncateByRatio(u.content, int(trim*1.15), int(trim*0.85))
		}
		if text == u.content && u.images == 0 {
			continue
		}
		if did, err := c.lay(SummaryMessage, u.from, u.to, text, u.tokens); did || err != nil {
			return did, err
		}
	}
	return false, nil
}

// lay lays a summary over the messages from..to when it is shorter than
// what it replaces (a longer one, say a bloated summary, is left out, and
// this step did nothing).
func (c *compressor) lay(kind string, from, to int, content string, replaced int) (bool, error) {
	tokens := 0
	if kind != SummaryDropped {
		if tokens = max(c.h.count(content), 1); tokens >= replaced {
			return false, nil
		}
	}
	if _, err := c.h.addSummary(HistorySummary{Kind: kind, From: from, To: to, Content: content, Tokens: tokens}); err != nil {
		return false, err
	}
	return true, nil
}

// truncateByRatio is Agent Zero's messages.truncate_dict_by_ratio for a
// message: in a JSON object (a tool result), the values that take it past
// threshold bytes are cut to about truncateTo bytes each, so the object
// stays valid JSON; any other text longer than threshold is cut to about
// truncateTo bytes. Unlike Agent Zero it does not descend into nested
// objects.
func (c *compressor) truncateByRatio(content string, threshold, truncateTo int) string {
	keys, vals, ok := objectFields(content)
	if !ok {
		if len(content) > threshold {
			return c.truncateText(content, truncateTo)
		}
		return content
	}
	var b strings.Builder
	b.WriteByte('{')
	size := 0
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonText(k))
		b.WriteString(": ")
		v := vals[i]
		if size+len(v) <= threshold {
			size += len(v)
			b.Write(v)
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		b.WriteString(jsonText(c.truncateText(s, truncateTo)))
	}
	b.WriteByte('}')
	return b.String()
}

// truncateText is Agent Zero's messages.truncate_text: the head and the
// tail of s, threshold bytes in all, around the fw.msg_truncated.md marker.
func (c *compressor) truncateText(s string, threshold int) string {
	if threshold <= 0 || len(s) <= threshold {
		return s
	}
	marker := c.a.mustRender("fw.msg_truncated.md", map[string]any{"length": len(s) - threshold})
	head := max((threshold-len(marker))/2, 0)
	tail := max(threshold-len(marker)-head, 0)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + marker + s[from:]
}

// objectFields splits a JSON object into its keys and raw values, in
// order; ok is false for anything else.
func objectFields(s string) (keys []string, vals []json.RawMessage, ok bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") || !json.Valid([]byte(t)) {
		return nil, nil, false
	}
	dec := json.NewDecoder(strings.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		k, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, true
}

// jsonText encodes v as JSON without HTML escaping.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// organizeHistory is Agent Zero's message_loop_end/_10_organize_history:
// after a turn, when the history is over its limit, compress it in the
// background, one compression at a time (while one runs, the turn does not
// start another; _90_organize_history_wait looks again). Unlike Agent
// Zero's, the compression belongs to the run and ends with it, so none is
// started after the turn that ends the monologue.
func organizeHistory(ctx context.Context, p hooks.Payload) error {
	lp, ok := p.(*LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	a := lp.Agent
	if a.finalTurn || a.compressing() != nil || !a.historyOverLimit() {
		return nil
	}
	a.startCompression(ctx)
	return nil
}

// organizeHistoryWait is Agent Zero's
// message_loop_prompts_before/_90_organize_history_wait: before the prompt
// is built, and only while the history is over its limit, wait for the
// background compression (until it ends or the history is within its
// limit), or compress now when none runs. A turn thus never waits for a
// summary it does not need. When compression can do no more, the turn goes
// on, and the check before the model call decides whether the prompt fits.
func organizeHistoryWait(ctx context.Context, p hooks.Payload) error {
	lp, ok := p.(*LoopPayload)
	if !ok || lp.Agent == nil {
		return nil
	}
	a := lp.Agent
	for {
		changed := a.History.changes()
		if !a.historyOverLimit() {
			return nil
		}
		if task := a.compressing(); task != nil {
			select {
			case <-task:
			case <-changed:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			continue
		}
		if !a.compressHistory(ctx) {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return nil
		}
	}
}

// builtinWaits reports whether the built-in _90_organize_history_wait is
// in force (not disabled, nor replaced by a user's extension).
func (a *Agent) builtinWaits() bool {
	for _, in := range a.hooks().Extensions(hooks.MessageLoopPromptsBefore) {
		if in.Name == "_90_organize_history_wait" {
			return in.Layer == hooks.LayerBuiltin
		}
	}
	return false
}

// systemTokens counts the system prompt, once per distinct text.
//
// With native calls the functions offered count as part of the system
// prompt: they are sent with every request as it is.
func (a *Agent) systemTokens(system string) int {
	tools := 0
	if a.native.Load() {
		tools = a.tools().tokenCount(a.session.cfg.CountTokens)
	}
	if a.sysTokens.text != system || a.sysTokens.n == 0 || a.sysTokens.tools != tools {
		a.sysTokens.text, a.sysTokens.tools = system, tools
		a.sysTokens.n = a.session.cfg.CountTokens(system) + tools
		a.compression.system.Store(int64(a.sysTokens.n))
	}
	return a.sysTokens.n
}

// toolBytes is the size of the functions the agent's requests offer now
// (0 without native calls): a bound of their tokens.
func (a *Agent) toolBytes() int {
	if !a.native.Load() {
		return 0
	}
	return a.tools().size
}

// checkFits refuses a prompt that does not fit in the model's context,
// before it is sent (the provider would answer 400). It counts the system
// prompt, the history as the model sees it, the extras and each message's
// overhead, but first bounds them by their bytes (a token is at least a
// byte), so a prompt far from the limit is not counted at all, and the
// system prompt and the history's messages are counted once each.
//
// system and extras are masked (the request's own, see preparePrompt).
func (a *Agent) checkFits(system, extras string, messages int) error {
	window := a.session.contextTokens()
	overhead := messages * messageOverhead
	if len(system)+a.toolBytes()+a.History.tokensAtMost()+len(extras)+overhead <= window {
		return nil
	}
	sys := a.systemTokens(system)
	total := sys + a.History.Tokens() + overhead
	if extras != "" {
		total += a.session.cfg.CountTokens(extras)
	}
	if total <= window {
		return nil
	}
	e := &ContextFullError{Window: window, Prompt: total, System: sys, Role: "system", Start: quote(system), Tokens: sys}
	units, _ := a.History.countedView()
	for _, u := range units {
		if u.kind != SummaryDropped && u.tokens > e.Tokens {
			e.Role, e.Start, e.Tokens = "user", quote(u.content), u.tokens
			if u.ai {
				e.Role = "assistant"
			}
		}
	}
	return e
}
