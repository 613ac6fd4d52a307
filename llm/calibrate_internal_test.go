package llm

import (
	"strings"
	"testing"
)

// TestCalibratorCountsEachMessageOnce: the chat's prompts and the memory's
// requests to the same model come in turns; neither makes the other's
// messages be counted again (a 16 KB system prompt recounted on every
// request was a sixth of a turn's CPU).
func TestCalibratorCountsEachMessageOnce(t *testing.T) {
	c := NewCalibrator("gpt-4o", Calibration{}, nil)
	counted := map[string]int{}
	base := c.base
	c.base = func(s string) int { counted[s]++; return base(s) }
	system := strings.Repeat("You are the agent. ", 100)
	memory := strings.Repeat("Memorize what is new. ", 100)
	chat := []Message{{Role: System, Content: system}}
	for turn := range 20 {
		chat = append(chat, Message{Role: User, Content: strings.Repeat("a question ", 30+turn)})
		c.ObservePrompt(1000, chat)
		c.ObservePrompt(500, []Message{{Role: System, Content: memory}, {Role: User, Content: chat[len(chat)-1].Content}})
	}
	for s, n := range counted {
		if n != 1 {
			t.Errorf("%.30q… counted %d times", s, n)
		}
	}
	// What no prompt uses any more is forgotten.
	for range cacheGenerations + 1 {
		c.ObservePrompt(10, []Message{{Role: User, Content: "other"}})
	}
	if _, ok := c.cache[system]; ok || len(c.cache) > 1 {
		t.Errorf("%d counts kept after their prompts went", len(c.cache))
	}
}
