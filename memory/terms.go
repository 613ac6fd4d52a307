package memory

import (
	"math"

	"github.com/zeroagent/zero/rank"
)

// maxQueryTerms bounds the words of a keyword search: a recall query can be
// the whole recent conversation.
const maxQueryTerms = 64

// keywordRelevance puts a keyword match on Agent Zero's similarity scale
// (0 to 1, default threshold 0.7): the square root of the larger of the
// share of the query's terms the memory holds and the share of the
// memory's terms the query holds, so that half of the words in common
// scores 0.71. Strict (a deletion) takes the share of the query's terms
// as it is: at 0.7, seven in ten of them must be there.
func keywordRelevance(q, d map[string]bool, strict bool) float64 {
	if strict {
		return rank.Coverage(q, d)
	}
	return math.Sqrt(max(rank.Coverage(q, d), rank.Coverage(d, q)))
}
