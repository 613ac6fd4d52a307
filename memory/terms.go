package memory

import (
	"math"
	"strings"
	"unicode"
)

// maxQueryTerms bounds the words of a keyword search: a recall query can be
// the whole recent conversation.
const maxQueryTerms = 64

// words returns the lower-cased words of text (letters and digits), without
// stop words and one-letter words, each once, in order of appearance, at
// most max of them (0: no bound).
func words(text string, max int) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out
}

// stems returns the set of stems of text's words.
func stems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(text, 0) {
		out[stem(w)] = true
	}
	return out
}

// stem strips common English inflections, enough to let "tabs" meet "tab"
// and "preferred" meet "prefers" when keyword matches are scored (SQLite's
// Porter stemmer finds them; this only measures how much of a query a
// memory covers).
func stem(w string) string {
	for _, suf := range []string{"ies", "ing", "ed", "es", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" {
				w += "y"
			}
			break
		}
	}
	return w
}

// coverage returns the share of q's stems that d holds.
func coverage(q, d map[string]bool) float64 {
	if len(q) == 0 {
		return 0
	}
	n := 0
	for s := range q {
		if d[s] {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has
		have he her hers him his how i if in into is it its itself me my no nor not of on or our ours she so
		than that the their theirs them then there these they this those to too was we were what when where
		which while who whom why will with would you your yours about after again all also am any because
		before being between both during each few further here just more most must other over own same
		should some such through under until up very off out once only`) {
		m[w] = true
	}
	return m
}()

// keywordRelevance puts a keyword match on Agent Zero's similarity scale
// (0 to 1, default threshold 0.7): the square root of the larger of the
// share of the query's words the memory holds and the share of the
// memory's words the query holds, so that half of the words in common
// scores 0.71. Strict (a deletion) takes the share of the query's words
// as it is: at 0.7, seven in ten of them must be there.
func keywordRelevance(q, d map[string]bool, strict bool) float64 {
	if strict {
		return coverage(q, d)
	}
	return math.Sqrt(max(coverage(q, d), coverage(d, q)))
}
