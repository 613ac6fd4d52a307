package llm

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// cl100k is built on first use: loading the vocabulary takes tens of
// milliseconds, which commands that never count tokens must not pay at start.
var cl100k = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.Cl100kBase)
	if err != nil {
		// The encoding is compiled into the module; failing here means the
		// dependency itself is broken, and CountTokens falls back to an estimate.
		return nil
	}
	return c
})

// WarmTokenizer loads the vocabulary in the background (about 20 ms of
// CPU and 3.5 MB), for a process about to count: `zero run` at its start,
// a face when a session is made, so the first answer's count, which
// calibrates the endpoint's, does not wait for it between the model's
// answer and the tool's run.
func WarmTokenizer() { go cl100k() }

// CountTokens counts the tokens of s with the cl100k_base BPE embedded in the
// binary; nothing is downloaded. It is safe for concurrent use.
func CountTokens(s string) int {
	if s == "" {
		return 0
	}
	if c := cl100k(); c != nil {
		if n, err := c.Count(s); err == nil {
			return n
		}
	}
	// Roughly four bytes per token for English text: only reached if the
	// tokenizer rejects its input.
	return (len(s) + 3) / 4
}
