package loop

import "github.com/zeroagent/zero/llm"

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
	// What is sent is counted, not the history: a compression in the
	// background may have laid a summary over it since the prompt was built.
	reserve := len(msgs)*messageOverhead + window/20
	size := a.toolBytes()
	for _, m := range msgs {
		size += len(m.Content)
		for _, c := range m.ToolCalls {
			size += len(c.Name) + len(c.Arguments)
		}
	}
	if size+reserve+want <= window { // a token is at least a byte: far from the window
		return want
	}
	prompt := a.systemTokens(msgs[0].Content) + reserve // counted once per text
	for _, m := range msgs[1:] {
		prompt += s.cfg.CountTokens(m.Content)
		for _, c := range m.ToolCalls {
			prompt += s.cfg.CountTokens(c.Name+c.Arguments) + messageOverhead
		}
	}
	return max(min(want, window-prompt), min(want, minOutput))
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
