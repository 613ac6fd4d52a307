package loop

import (
	"strings"

	"github.com/zeroagent/zero/llm"
)

// A history is kept as an append-only list of raw messages and a list of
// summaries laid over them: compression never rewrites a message, it adds a
// summary that stands, in what the model sees, for a run of messages (a
// large message shortened, the middle of a topic, a whole topic, a bulk of
// topics, or a dropped bulk). Both lists only grow, so a store can keep them
// with appends, and a history is rebuilt from them exactly.

// HistoryMessage is one raw message of an agent's history.
type HistoryMessage struct {
	// N numbers the agent's messages from 0 in the order they were added.
	N int `json:"n"`
	// Topic numbers the topics from 0; a user message starts a new one.
	Topic   int    `json:"topic"`
	AI      bool   `json:"ai"`
	Content string `json:"content"`
	// Tokens is the message's token count, 0 while it was not counted.
	Tokens int `json:"tokens,omitempty"`
	// Calls are the native tool calls of an AI message, in order; Content
	// is then what the model said before them.
	Calls []HistoryCall `json:"calls,omitempty"`
	// CallID is set on the result of a native tool call: the call's id.
	CallID string `json:"call_id,omitempty"`
	// Images are the message's pictures (a user's attachments, a tool
	// result's), after its text.
	Images []llm.Image `json:"images,omitempty"`
}

// HistoryCall is one native tool call the model made.
type HistoryCall struct {
	ID   string `json:"id"`
	Name string `json:"name"` // the tool as Zero names it: "text_editor:read"
	Args string `json:"args"` // the arguments, a JSON object (aliases only)
}

// textLen bounds m's tokens from above without counting them:
// len(m.text()) (a token is at least a byte), its images at
// llm.ImageTokens each.
func (m *HistoryMessage) textLen() int {
	n := len(m.Content)
	for _, c := range m.Calls {
		n += len(c.Name) + len(c.Args) + 40 // and the JSON around them, at least
	}
	for _, im := range m.Images {
		n += len(im.Placeholder("")) + 2 + llm.ImageTokens
	}
	return n
}

// text is the message as one text, its calls written as Agent Zero's tool
// requests and its images as placeholders: what is counted, summarised and
// shown to a model that does not take native calls. A summary made from it
// names the images; it never carries them.
func (m *HistoryMessage) text() string {
	t := m.Content
	if len(m.Calls) > 0 {
		t = callsText(m.Content, m.Calls)
	}
	return withPlaceholders(t, m.Images)
}

// withPlaceholders is text with a placeholder for each image after it.
func withPlaceholders(text string, images []llm.Image) string {
	if len(images) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, im := range images {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(im.Placeholder(""))
	}
	return b.String()
}

// countWith is the tokens of a message of text and n images: each image
// is taken at llm.ImageTokens until the endpoint reports the request's.
func countWith(count func(string) int, text string, n int) int {
	return max(count(text), 1) + n*llm.ImageTokens
}

// Summary kinds.
const (
	SummaryMessage  = "message"  // one large message, shortened
	SummaryMessages = "messages" // the middle of a topic, summarised
	SummaryTopic    = "topic"    // a whole topic, summarised
	SummaryBulk     = "bulk"     // several topics (or bulks), summarised together
	SummaryDropped  = "dropped"  // the oldest bulk, left out entirely
)

// HistorySummary stands for the raw messages From..To (inclusive) in what
// the model sees. A later summary whose range covers an earlier one's
// replaces it.
type HistorySummary struct {
	// ID numbers the agent's summaries from 1 in the order they were made.
	ID      int    `json:"id"`
	Kind    string `json:"kind"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	Content string `json:"content,omitempty"`
	Tokens  int    `json:"tokens,omitempty"`
}

// HistoryJournal receives every change to the histories of a session's
// agents, in the order they happen, from the goroutine that makes them. It
// must not block (a store queues the writes).
//
// The calls for one agent are made under that agent's history lock, so
// they never overlap and arrive in the order of the changes, but they may
// come from different goroutines: the agent's loop adds messages while a
// background compression adds summaries and token counts. Calls for
// different agents may overlap. A journal must not call back into the
// session from them.
type HistoryJournal interface {
	// AddMessage records a message added to agent's history.
	AddMessage(agent int, m HistoryMessage)
	// AddSummary records a summary made by history compression.
	AddSummary(agent int, s HistorySummary)
	// CountTokens records the token count of a message counted after it
	// was added.
	CountTokens(agent, n, tokens int)
}

// HistoryState is an agent's history as a store keeps it.
type HistoryState struct {
	Messages  []HistoryMessage `json:"messages"`
	Summaries []HistorySummary `json:"summaries,omitempty"`
}
