package llmtest

import (
	"strings"

	"github.com/zeroagent/zero/llm"
)

// pickMemory is what pickLocked returns for a memory request no scripted
// reply matched.
const pickMemory = -2

// The memory prompts' first lines (Agent Zero's, in profiles/prompts/default).
const (
	markMemorize      = "Assistant searches for relevant information from the HISTORY worth memorizing"
	markSolutions     = "Assistant searches for succesful technical solutions by the AGENT"
	markQuery         = "AI provide a search query for search engine where previous memories are stored"
	markConsolidation = "# Memory Consolidation Analysis System"
)

// isMemoryRequest reports whether a request is one of Zero's memory
// requests to the utility model (memorizing at the end of a monologue,
// writing a recall query, consolidating a memory). Scripts need not plan
// for them: one that no reply matches gets MemoryReply, and the scripted
// replies without Match stay for the chat.
func isMemoryRequest(text string) bool {
	for _, m := range []string{markMemorize, markSolutions, markQuery, markConsolidation} {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// MemoryReply is the answer to a memory request no scripted reply matched:
// nothing to memorize ([], or {"fragments": [], "solutions": []} when both
// are asked at once), the user's message as the recall query, and
// "keep_separate" for a consolidation.
func MemoryReply(msgs []llm.Message) Reply {
	text := ""
	for _, m := range msgs {
		text += m.Content + "\n"
	}
	switch {
	case strings.Contains(text, markQuery):
		q := text
		if _, after, ok := strings.Cut(text, "## User message:"); ok {
			q, _, _ = strings.Cut(after, "## Conversation history")
		}
		return Reply{Content: strings.TrimSpace(q)}
	case strings.Contains(text, markConsolidation):
		return Reply{Content: `{"action": "keep_separate", "memories_to_remove": [], "new_memory_content": ""}`}
	case strings.Contains(text, markMemorize) && strings.Contains(text, markSolutions):
		return Reply{Content: `{"fragments": [], "solutions": []}`} // memory.memorize.sys.md: both in one
	}
	return Reply{Content: "[]"}
}
