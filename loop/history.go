package loop

import (
	"github.com/zeroagent/zero/llm"
)

// Message is one history entry as the model will see it.
type Message struct {
	AI      bool
	Content string
}

// History is an agent's conversation. Token counts are computed at most
// once per message, and only when asked for (BPE counting costs far more
// than the rest of a turn), and the model-facing output (consecutive same-role messages merged, as
// Agent Zero's output_langchain does) is maintained incrementally, so
// building a prompt does not depend on re-reading the whole history.
type History struct {
	msgs    []Message
	topics  []int // index of the first message of each topic after the first
	out     []llm.Message
	tokens  int // sum over msgs[:counted]
	counted int
	count   func(string) int
}

func newHistory(count func(string) int) *History {
	return &History{count: count}
}

// Add appends a message.
func (h *History) Add(ai bool, content string) {
	if content == "" {
		content = "empty" // some providers reject empty messages
	}
	h.msgs = append(h.msgs, Message{AI: ai, Content: content})
	role := llm.User
	if ai {
		role = llm.Assistant
	}
	if n := len(h.out); n > 0 && h.out[n-1].Role == role {
		h.out[n-1].Content += "\n\n" + content
		return
	}
	h.out = append(h.out, llm.Message{Role: role, Content: content})
}

// NewTopic ends the current topic: what follows is a new one (Agent Zero
// starts one at every user message and after every delegation; history
// compression summarises whole topics). An empty topic is not ended.
func (h *History) NewTopic() {
	start := 0
	if n := len(h.topics); n > 0 {
		start = h.topics[n-1]
	}
	if len(h.msgs) > start {
		h.topics = append(h.topics, len(h.msgs))
	}
}

// Topics is the number of topics (the current one included once it has
// a message).
func (h *History) Topics() int {
	n, last := len(h.topics), 0
	if n > 0 {
		last = h.topics[n-1]
	}
	if len(h.msgs) > last {
		n++
	}
	return n
}

// Messages returns the history entries (not to be modified).
func (h *History) Messages() []Message { return h.msgs }

// Len is the number of messages.
func (h *History) Len() int { return len(h.msgs) }

// Tokens is the sum of the messages' token counts. Each message is counted
// once, the first time Tokens needs it.
func (h *History) Tokens() int {
	for ; h.counted < len(h.msgs); h.counted++ {
		h.tokens += h.count(h.msgs[h.counted].Content)
	}
	return h.tokens
}

// Output returns the model-facing messages (not to be modified).
func (h *History) Output() []llm.Message { return h.out }
