package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/secrets"
)

// Message is one history entry as the model will see it.
type Message struct {
	AI      bool
	Content string
}

// History is an agent's conversation, kept as Agent Zero keeps it but
// append-only (see journal.go): raw messages, numbered from 0 with their
// topic, and summaries laid over ranges of them by history compression
// (compress.go). What the model sees ([History.Output]) is every raw message
// no summary covers and, for each outermost summary, its content; a
// "dropped" summary hides its range. Consecutive messages of one role are
// merged, as Agent Zero's output_langchain does.
//
// The output is kept incrementally: a new message can never be under a
// summary, so Add only appends to it (or merges into its last message),
// and building a prompt does not re-read the history; a new summary
// rebuilds it. Token counts are computed at most once per message, and only
// when asked for (BPE counting costs far more than the rest of a turn).
//
// History is safe for concurrent use: the agent's loop adds messages while
// a background compression reads a snapshot and lays summaries over ranges
// of raw messages, which never change. Output and Add belong to the agent's
// goroutine (see [History.Output]).
type History struct {
	agent   int
	count   func(string) int
	journal HistoryJournal
	// mask, when set, masks secrets in every message and summary as it
	// enters the history (Add, a summary, a restored state), once: what
	// the history holds and gives out (Output, State, the journal) holds
	// aliases only and is not masked again. set is Config.Secrets, for
	// the joins of merged messages (appendOut).
	mask func(string) string
	set  *secrets.Set

	mu     sync.Mutex
	msgs   []HistoryMessage
	topic  int // the current topic's number
	topics int // topics that have messages
	sums   []HistorySummary
	top    []int // indices in sums of the outermost summaries, by From
	out    []llm.Message
	tokens int   // tokens of the counted parts of out
	counts []int // raw messages in out not counted yet, ascending
	// uncounted is the bytes of those messages: a token is at least a
	// byte, so tokens+uncounted bounds Tokens without counting anything.
	uncounted int
	// changed is closed (and replaced) whenever a summary is laid, so a
	// turn waiting for compression can look again.
	changed chan struct{}
}

func newHistory(agent int, count func(string) int, journal HistoryJournal) *History {
	return &History{agent: agent, count: count, journal: journal, changed: make(chan struct{})}
}

// Add appends a message to the current topic.
func (h *History) Add(ai bool, content string) {
	if h.mask != nil {
		content = h.mask(content)
	}
	h.addMasked(ai, content)
}

// addMasked is Add for content that holds aliases only (the agent's own
// adds, which masked it before the hist_add_before extensions saw it).
func (h *History) addMasked(ai bool, content string) {
	h.addEntry(HistoryMessage{AI: ai, Content: content})
}

// addEntry appends m (its content, calls and call id holding aliases
// only), numbered and in the current topic.
func (h *History) addEntry(m HistoryMessage) {
	if m.Content == "" && len(m.Calls) == 0 {
		m.Content = "empty" // some providers reject empty messages
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	m.N, m.Topic, m.Tokens = len(h.msgs), h.topic, 0
	if n := len(h.msgs); n == 0 || h.msgs[n-1].Topic != m.Topic {
		h.topics++
	}
	h.msgs = append(h.msgs, m)
	h.counts = append(h.counts, m.N)
	h.uncounted += m.textLen()
	h.appendMessage(&h.msgs[len(h.msgs)-1])
	if h.journal != nil {
		h.journal.AddMessage(h.agent, m)
	}
}

// appendMessage adds a raw message to the output: a native tool call or
// result as a message of its own, anything else as appendOut does.
func (h *History) appendMessage(m *HistoryMessage) {
	switch {
	case len(m.Calls) > 0:
		calls := make([]llm.ToolCall, len(m.Calls))
		for i, c := range m.Calls {
			calls[i] = llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Args}
		}
		h.out = append(h.out, llm.Message{Role: llm.Assistant, Content: m.Content, ToolCalls: calls})
	case m.CallID != "":
		h.out = append(h.out, llm.Message{Role: llm.Tool, Content: m.Content, ToolCallID: m.CallID, Images: m.Images})
	default:
		h.appendOut(m.AI, m.Content, m.Images...)
	}
}

// appendOut adds a message to the output, merging it into the last one
// when both have the same role and neither is a native tool call or
// result. Both hold aliases only; the merged message is masked again only
// when a value may straddle the join.
func (h *History) appendOut(ai bool, content string, images ...llm.Image) {
	role := llm.User
	if ai {
		role = llm.Assistant
	}
	if n := len(h.out); n > 0 && h.out[n-1].Role == role && len(h.out[n-1].ToolCalls) == 0 {
		if len(images) > 0 { // a new slice: an Output given out before keeps its own
			h.out[n-1].Images = slices.Concat(h.out[n-1].Images, images)
		}
		last := &h.out[n-1].Content
		if h.set != nil && h.set.Straddles(*last, "\n\n", content) {
			*last = h.mask(*last + "\n\n" + content)
			return
		}
		*last += "\n\n" + content
		return
	}
	h.out = append(h.out, llm.Message{Role: role, Content: content, Images: images})
}

// NewTopic ends the current topic: what follows is a new one (Agent Zero
// starts one at every user message and after every delegation; history
// compression treats the current topic and older ones differently). An
// empty topic is not ended.
func (h *History) NewTopic() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.msgs); n > 0 && h.msgs[n-1].Topic == h.topic {
		h.topic++
	}
}

// Topics is the number of topics that have messages.
func (h *History) Topics() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.topics
}

// Messages returns a copy of the raw messages, summarised or not.
func (h *History) Messages() []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Message, len(h.msgs))
	for i, m := range h.msgs {
		out[i] = Message{AI: m.AI, Content: m.Content}
	}
	return out
}

// since returns a copy of the raw messages from number from on.
func (h *History) since(from int) []HistoryMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from >= len(h.msgs) {
		return nil
	}
	return slices.Clone(h.msgs[max(from, 0):])
}

// Transcript is the raw messages from number from on as text, each after
// its role ("user: …", "assistant: …") and native calls written as Agent
// Zero's tool requests: what the memory reads of a conversation. The
// messages are as they were added (aliases only): no summary stands in
// for them.
func (h *History) Transcript(from int) string {
	var b strings.Builder
	for _, m := range h.since(from) {
		role := llm.User
		if m.AI {
			role = llm.Assistant
		}
		b.WriteString(string(role))
		b.WriteString(": ")
		b.WriteString(m.text())
		b.WriteByte('\n')
	}
	return b.String()
}

// size identifies the history's state: it grows with every message and
// summary.
func (h *History) size() historySize {
	h.mu.Lock()
	defer h.mu.Unlock()
	return historySize{messages: len(h.msgs), summaries: len(h.sums)}
}

// Len is the number of raw messages.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.msgs)
}

// State returns a copy of the history as a store keeps it: every raw
// message (with its token count once counted) and every summary, replaced
// ones included. [Session.RestoreHistory] rebuilds the same history from it.
func (h *History) State() HistoryState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HistoryState{Messages: slices.Clone(h.msgs), Summaries: slices.Clone(h.sums)}
}

// Output returns the model-facing messages. It is meant for the agent's
// own goroutine, which is the one adding messages: the slice must not be
// modified, and its last message may grow with the next Add.
func (h *History) Output() []llm.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out[:len(h.out):len(h.out)]
}

// tokensFrom is the tokens of the raw messages from number n on that the
// model sees (no summary covers them), as counted so far.
func (h *History) tokensFrom(n int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	total := 0
	for i := max(n, 0); i < len(h.msgs); i++ {
		covered := false
		for _, t := range h.top {
			if s := &h.sums[t]; s.From <= i && i <= s.To {
				covered = true
				break
			}
		}
		if !covered {
			total += h.msgs[i].Tokens
		}
	}
	return total
}

// Tokens is the token count of what the model sees (Output): the messages
// no summary covers plus the outermost summaries. Each message is counted
// once, the first time it is needed, outside the lock, so a compression
// working in the background is not held up by it.
func (h *History) Tokens() int {
	for {
		h.mu.Lock()
		if len(h.counts) == 0 {
			n := h.tokens
			h.mu.Unlock()
			return n
		}
		idx := slices.Clone(h.counts)
		texts := make([]string, len(idx))
		images := make([]int, len(idx))
		for i, n := range idx {
			texts[i], images[i] = h.msgs[n].text(), len(h.msgs[n].Images)
		}
		h.mu.Unlock()
		counts := make([]int, len(idx))
		for i, t := range texts {
			counts[i] = countWith(h.count, t, images[i])
		}
		h.record(idx, counts)
	}
}

// tokensAtMost bounds Tokens from above without counting: the messages
// not counted yet are taken at a token per byte (Config.CountTokens never
// gives more; see checkMessage).
func (h *History) tokensAtMost() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tokens + h.uncounted
}

// record stores token counts of raw messages (journaling each the first
// time) and moves the counted ones of the output into the total.
func (h *History) record(idx, counts []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, n := range idx {
		if h.msgs[n].Tokens == 0 {
			h.msgs[n].Tokens = counts[i]
			if h.journal != nil {
				h.journal.CountTokens(h.agent, n, counts[i])
			}
		}
	}
	kept := h.counts[:0]
	for _, n := range h.counts {
		if t := h.msgs[n].Tokens; t > 0 {
			h.tokens += t
			h.uncounted -= h.msgs[n].textLen()
		} else {
			kept = append(kept, n)
		}
	}
	h.counts = kept
}

// changes returns a channel closed when the next summary is laid over the
// history.
func (h *History) changes() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// summaryAI is the role a summary is shown with: a shortened message keeps
// its message's (Agent Zero's Message.set_summary), anything else is a
// user message (Topic.output, Bulk.output).
func (h *History) summaryAI(s *HistorySummary) bool {
	return s.Kind == SummaryMessage && h.msgs[s.From].AI
}

// rebuild recomputes the output and its token count from the messages and
// the outermost summaries.
func (h *History) rebuild() {
	h.out = make([]llm.Message, 0, len(h.out)+1)
	h.tokens, h.counts, h.uncounted = 0, nil, 0
	t := 0
	for i := 0; i < len(h.msgs); {
		if t < len(h.top) && h.sums[h.top[t]].From == i {
			s := &h.sums[h.top[t]]
			t++
			i = s.To + 1
			if s.Kind != SummaryDropped {
				h.tokens += s.Tokens
				h.appendOut(h.summaryAI(s), s.Content)
			}
			continue
		}
		m := &h.msgs[i]
		if m.Tokens > 0 {
			h.tokens += m.Tokens
		} else {
			h.counts = append(h.counts, i)
			h.uncounted += m.textLen()
		}
		h.appendMessage(m)
		i++
	}
}

// place validates s against the messages and the outermost summaries and
// lays it over them: it must lie inside the messages and, for every
// outermost summary, either cover it (and so replace it) or stay clear of
// it.
func (h *History) place(s HistorySummary) error {
	switch s.Kind {
	case SummaryMessage, SummaryMessages, SummaryTopic, SummaryBulk, SummaryDropped:
	default:
		return fmt.Errorf("summary %d: unknown kind %q", s.ID, s.Kind)
	}
	if s.From < 0 || s.To < s.From || s.To >= len(h.msgs) {
		return fmt.Errorf("summary %d: range %d..%d is not inside the messages 0..%d", s.ID, s.From, s.To, len(h.msgs)-1)
	}
	if s.Kind == SummaryMessage && s.From != s.To {
		return fmt.Errorf("summary %d: a %q summary covers one message, not %d..%d", s.ID, s.Kind, s.From, s.To)
	}
	if s.Tokens < 0 {
		return fmt.Errorf("summary %d: negative token count %d", s.ID, s.Tokens)
	}
	top := make([]int, 0, len(h.top)+1)
	at := -1
	for _, i := range h.top {
		o := &h.sums[i]
		switch {
		case o.To < s.From:
			top = append(top, i)
		case o.From > s.To:
			if at < 0 {
				at = len(top)
				top = append(top, len(h.sums))
			}
			top = append(top, i)
		case s.From <= o.From && o.To <= s.To: // covered: replaced
		default:
			return fmt.Errorf("summary %d (%d..%d) overlaps summary %d (%d..%d) without covering it", s.ID, s.From, s.To, o.ID, o.From, o.To)
		}
	}
	if at < 0 {
		top = append(top, len(h.sums))
	}
	h.sums = append(h.sums, s)
	h.top = top
	return nil
}

// addSummary lays a new summary over the history (numbering it), journals
// it and rebuilds the output.
func (h *History) addSummary(s HistorySummary) (HistorySummary, error) {
	if h.mask != nil {
		s.Content = h.mask(s.Content)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.ID = len(h.sums) + 1
	if err := h.place(s); err != nil {
		return s, err
	}
	h.rebuild()
	close(h.changed)
	h.changed = make(chan struct{})
	if h.journal != nil {
		h.journal.AddSummary(h.agent, s)
	}
	return s, nil
}

// histUnit is one part of what the model sees: a raw message or an
// outermost summary (a dropped one included, with no tokens).
type histUnit struct {
	from, to int
	kind     string // "" for a raw message
	ai       bool
	topic    int // the topic of its first message
	tokens   int // 0 for a raw message not counted yet
	content  string
	images   int // of a raw message
}

// view returns the units of the history in order, and the current topic.
func (h *History) view() ([]histUnit, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	units := make([]histUnit, 0, len(h.out)+len(h.top))
	t := 0
	for i := 0; i < len(h.msgs); {
		if t < len(h.top) && h.sums[h.top[t]].From == i {
			s := &h.sums[h.top[t]]
			t++
			units = append(units, histUnit{from: s.From, to: s.To, kind: s.Kind, ai: h.summaryAI(s),
				topic: h.msgs[s.From].Topic, tokens: s.Tokens, content: s.Content})
			i = s.To + 1
			continue
		}
		m := &h.msgs[i]
		units = append(units, histUnit{from: i, to: i, ai: m.AI, topic: m.Topic, tokens: m.Tokens, content: m.text(), images: len(m.Images)})
		i++
	}
	return units, h.topic
}

// countedView is view with every raw message counted.
func (h *History) countedView() ([]histUnit, int) {
	units, cur := h.view()
	var idx, counts []int
	for i := range units {
		if u := &units[i]; u.kind == "" && u.tokens == 0 {
			u.tokens = countWith(h.count, u.content, u.images)
			idx, counts = append(idx, u.from), append(counts, u.tokens)
		}
	}
	if len(idx) > 0 {
		h.record(idx, counts)
	}
	return units, cur
}

// lastUser is the text of the last user message, taken out of its
// fw.user_message.md or fw.intervention.md wrapping when it has one.
func (h *History) lastUser() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.msgs) - 1; i >= 0; i-- {
		m := h.msgs[i]
		if m.AI || (i > 0 && h.msgs[i-1].Topic == m.Topic) {
			continue // a user message starts a topic
		}
		var v map[string]any
		if json.Unmarshal([]byte(m.Content), &v) == nil {
			for _, k := range []string{"user", "user_intervention"} {
				if s, ok := v[k].(string); ok {
					return s
				}
			}
		}
		return m.Content
	}
	return ""
}

// ErrHistoryState is returned by [Session.RestoreHistory] for a state
// that is not a history Zero could have written.
var ErrHistoryState = errors.New("invalid history state")

// restore replaces an empty history with st, validated, without
// journaling it: st came from the journal.
func (h *History) restore(st HistoryState) error {
	r := newHistory(h.agent, h.count, nil)
	r.mask, r.set = h.mask, h.set
	for i, m := range st.Messages {
		switch {
		case m.N != i:
			return fmt.Errorf("%w: message %d has number %d (numbers run from 0 without gaps)", ErrHistoryState, i, m.N)
		case m.Topic < 0 || (i > 0 && m.Topic < st.Messages[i-1].Topic):
			return fmt.Errorf("%w: message %d has topic %d after topic %d (topics never go back)", ErrHistoryState, i, m.Topic, st.Messages[max(i-1, 0)].Topic)
		case m.Tokens < 0:
			return fmt.Errorf("%w: message %d has a negative token count", ErrHistoryState, i)
		case len(m.Calls) > 0 && !m.AI, m.CallID != "" && m.AI:
			return fmt.Errorf("%w: message %d: only the model's messages make tool calls, and only results answer them", ErrHistoryState, i)
		}
		for j, c := range m.Calls {
			if c.ID == "" || c.Name == "" {
				return fmt.Errorf("%w: message %d: tool call %d has no id or name", ErrHistoryState, i, j)
			}
		}
		if i == 0 || st.Messages[i-1].Topic != m.Topic {
			r.topics++
		}
		r.topic = m.Topic
	}
	r.msgs = slices.Clone(st.Messages)
	sums := slices.Clone(st.Summaries)
	if h.mask != nil { // stored before a secret was known, say
		for i := range r.msgs {
			m := &r.msgs[i]
			m.Content = h.mask(m.Content)
			if len(m.Calls) > 0 {
				m.Calls = slices.Clone(m.Calls)
				for j := range m.Calls {
					m.Calls[j].Args = h.mask(m.Calls[j].Args)
				}
			}
		}
		for i := range sums {
			sums[i].Content = h.mask(sums[i].Content)
		}
	}
	slices.SortFunc(sums, func(a, b HistorySummary) int { return a.ID - b.ID })
	for i, s := range sums {
		if s.ID != i+1 {
			return fmt.Errorf("%w: summary ids must run from 1 without gaps, found %d at place %d", ErrHistoryState, s.ID, i+1)
		}
		if s.Kind != SummaryDropped && s.Tokens == 0 {
			s.Tokens = max(h.count(s.Content), 1)
		}
		if err := r.place(s); err != nil {
			return fmt.Errorf("%w: %w", ErrHistoryState, err)
		}
	}
	r.rebuild()

	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.msgs) > 0 {
		return fmt.Errorf("%w: the agent's history is not empty (%d messages)", ErrHistoryState, len(h.msgs))
	}
	h.msgs, h.topic, h.topics, h.sums, h.top = r.msgs, r.topic, r.topics, r.sums, r.top
	h.out, h.tokens, h.counts, h.uncounted = r.out, r.tokens, r.counts, r.uncounted
	return nil
}

// RestoreHistory rebuilds an agent's history from a stored state (what a
// [HistoryJournal] recorded), so a session continues where it was left:
// new messages continue the numbering and the topics, and nothing restored
// is journaled again. Call it before the session's first run, on an empty
// history. Only agent 0 is restored: subordinates start afresh, as they
// do when a superior resets them.
func (s *Session) RestoreHistory(agent int, st HistoryState) error {
	if agent != 0 {
		return fmt.Errorf("restore history of agent %d: only agent 0's history is restored; subordinates start afresh", agent)
	}
	s.mu.Lock()
	running, a := s.running, s.agent0
	s.mu.Unlock()
	if running {
		return fmt.Errorf("restore history: %w", ErrBusy)
	}
	if err := a.History.restore(st); err != nil {
		return fmt.Errorf("restore history of agent %d: %w", agent, err)
	}
	a.lastUserMessage = a.History.lastUser()
	for _, m := range st.Messages {
		s.keepImages(m.Images)
	}
	return nil
}
