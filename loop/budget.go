package loop

import (
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
)

// The caps on the models' answers (Limits.MaxOutputTokens and
// UtilityOutputTokens) when none is configured.
const (
	// defaultOutputShare: the chat model's answer may take a quarter of the
	// window by default. An agent's answer is one tool request (a command,
	// a file's text to write): a few thousand tokens at most; a quarter
	// still leaves the history its 70 % of a small (8k) window, where a
	// larger cap would make servers that count the cap against the window
	// (vLLM, OpenAI) refuse the prompt.
	defaultOutputShare = 4
	// maxDefaultOutput bounds that quarter in large windows: 8192 tokens is
	// the output limit of many models (the API refuses a larger cap), and
	// well above what one tool request needs; a reasoning model's thinking
	// counts too, which is why it is not less.
	maxDefaultOutput = 8192
	// defaultUtilityOutput caps a summary or a memory answer.
	defaultUtilityOutput = 2048
	// minOutput is the least cap sent when the prompt leaves little room:
	// a smaller one would only make the model's answer unusable.
	minOutput = 256
)

// outputCap is the cap on the chat model's answer for the prompt msgs:
// Limits.MaxOutputTokens (or the default), but no more than the window
// leaves beside the prompt, as counted (servers such as vLLM refuse a
// prompt whose tokens and cap together exceed the window). 0 sends none.
func (a *Agent) outputCap(req llm.Request) int {
	msgs := req.Messages
	s := a.session
	want := s.cfg.Limits.MaxOutputTokens
	window := s.contextTokens()
	switch {
	case want < 0:
		return 0
	case want == 0:
		want = min(window/defaultOutputShare, maxDefaultOutput)
	}
	if len(msgs) == 0 {
		return want
	}
	reserve := len(msgs)*messageOverhead + window/20
	// While the history is as it was when the prompt was built, what is
	// sent is its messages, which it counts once each (and bounds by the
	// bytes of those not counted yet), and the extras; an extension's edits
	// of the messages are within the reserve. Once a compression in the
	// background laid a summary over it, what is sent is counted instead.
	same := a.sent.size == a.History.size()
	size := a.toolBytes()
	if same {
		size += len(msgs[0].Content) + a.History.tokensAtMost() + len(a.sent.extras)
	} else {
		for _, m := range msgs {
			size += len(m.Content)
			for _, c := range m.ToolCalls {
				size += len(c.Name) + len(c.Arguments)
			}
		}
	}
	if size+reserve+want <= window { // a token is at least a byte: far from the window
		return want
	}
	prompt := a.systemTokens(msgs[0].Content) + reserve // counted once per text
	if same {
		if a.sent.extras != a.sent.counted {
			a.sent.counted, a.sent.extrasTokens = a.sent.extras, s.cfg.CountTokens(a.sent.extras)
		}
		return max(min(want, window-prompt-a.History.Tokens()-a.sent.extrasTokens), min(want, minOutput))
	}
	memo := &a.sentTokens
	memo.turn()
	for _, m := range msgs[1:] {
		prompt += memo.count(m.Content, s.cfg.CountTokens)
		for _, c := range m.ToolCalls {
			prompt += memo.count(c.Name+c.Arguments, s.cfg.CountTokens) + messageOverhead
		}
	}
	return max(min(want, window-prompt), min(want, minOutput))
}

// sentPrompt is what outputCap knows of the prompt preparePrompt built:
// the history's state when its output was taken, and the extras.
type sentPrompt struct {
	size   historySize
	extras string
	// counted is the extras last counted, extrasTokens their tokens: the
	// same turn after turn but for the time.
	counted      string
	extrasTokens int
}

// tokenMemo keeps the token counts of the texts of the last requests: a
// request repeats all but its last few messages of the one before, and
// counting them again each turn would cost more than all the rest of a
// turn once the history is long.
type tokenMemo struct {
	cur, prev map[string]int
}

// turn starts a request: what the last one counted is kept for this one.
func (m *tokenMemo) turn() {
	m.prev, m.cur = m.cur, m.prev
	if m.cur == nil {
		m.cur = map[string]int{}
	}
	clear(m.cur)
}

func (m *tokenMemo) count(text string, count func(string) int) int {
	n, ok := m.prev[text]
	if !ok {
		n = count(text)
	}
	m.cur[text] = n
	return n
}

// utilityCap is the cap on the utility model's answer to system and
// message: Limits.UtilityOutputTokens (or the default), but no more than
// the chat model's window leaves beside them (the utility model is most
// often the same; a summary's request holds a part of the history).
func (s *Session) utilityCap(system, message string) int {
	want := s.cfg.Limits.UtilityOutputTokens
	switch {
	case want < 0:
		return 0
	case want == 0:
		want = defaultUtilityOutput
	}
	window := s.contextTokens()
	if len(system)+len(message)+want <= window/2 { // a token is at least a byte: far from the window
		return want
	}
	prompt := s.cfg.CountTokens(system) + s.cfg.CountTokens(message) + 3*messageOverhead + window/20
	return max(min(want, window-prompt), min(want, minOutput))
}

// FitUtility cuts text, keeping its head and its tail, so that a request
// to the utility model with system and text leaves room in the window for
// its answer (the memory reads the new part of a conversation as it was
// said, which can be longer than the compressed history the chat sends).
func (a *Agent) FitUtility(system, text string) string {
	s := a.session
	window := s.contextTokens()
	answer := s.cfg.Limits.UtilityOutputTokens
	if answer <= 0 {
		answer = defaultUtilityOutput
	}
	room := window - s.cfg.CountTokens(system) - 3*messageOverhead - window/20 - min(answer, window/4)
	if room <= 0 {
		return ""
	}
	if len(text) <= room { // a token is at least a byte
		return text
	}
	n := s.cfg.CountTokens(text)
	if n <= room {
		return text
	}
	keep := int(float64(len(text)) * float64(room) / float64(n) * 0.9)
	for {
		out := cut.Head(text, keep/4) + "\n[…]\n" + cut.Tail(text, keep*3/4)
		if keep < 64 || s.cfg.CountTokens(out) <= room {
			return out
		}
		keep = keep * 3 / 4
	}
}
