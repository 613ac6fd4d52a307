// Package rank finds the texts that match a query, by their words: one
// tokenizer, stemmer and stop-word list for every search of Zero (memory
// recall, document_query), and the rankers beside them (Okapi BM25, the
// cosine of embeddings, the share of words in common). Nothing of ours is
// below it.
package rank

import (
	"strings"
	"unicode"
)

// maxWord bounds a word: a longer run of letters is no word anyone
// searches for (a hash, base64), and it would be kept whole.
const maxWord = 64

// Terms calls yield with the search terms of s, every occurrence in order:
// its words lower-cased and stemmed, without stop words and one-letter
// words (a digit counts); Chinese, Japanese and Korean text, which has no
// spaces between words, as single characters and pairs of them.
func Terms(s string, yield func(string)) {
	var word []rune
	var prevCJK rune
	flush := func() {
		if w, ok := keep(word); ok {
			yield(Stem(w))
		}
		word = word[:0]
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flush()
			yield(string(r))
			if prevCJK != 0 {
				yield(string([]rune{prevCJK, r}))
			}
			prevCJK = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
		prevCJK = 0
	}
	flush()
}

// Words returns the words of s as a full-text index takes them: lower-case
// runs of letters and digits (a run of Chinese, Japanese or Korean text is
// one), unstemmed, without stop words and one-letter words, each once, in
// order of appearance, at most max of them (0: no bound).
func Words(s string, max int) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w, ok := keep([]rune(f))
		if !ok || seen[w] {
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

// keep says whether a word is searched for.
func keep(word []rune) (string, bool) {
	if len(word) == 0 || len(word) > maxWord || len(word) == 1 && !unicode.IsDigit(word[0]) {
		return "", false
	}
	w := string(word)
	return w, !stopWords[w]
}

// Stems is the set of the terms of s.
func Stems(s string) map[string]bool {
	out := map[string]bool{}
	Terms(s, func(t string) { out[t] = true })
	return out
}

// Stem strips common English inflections, enough for "policies" to meet
// "policy", "ports" "port", "loading" and "loads" "load": it only decides
// whether two words are one term, it never shows. A plural is folded
// first, so that a word and its plural always meet.
func Stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "ly"):
		w = w[:len(w)-2]
	}
	return w
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// stopWords match everything: they are left out of every search. The
// words people put around a question ("tell me what … says") are among
// them.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has
		have he her hers him his how i if in into is it its itself me my no nor not of on or our ours she so
		than that the their theirs them then there these they this those to too was we were what when where
		which while who whom why will with would you your yours about after again all also am any because
		before being between both during each few further here just more most must other over own same
		should some such through under until up very off out once only say says said tell give show`) {
		m[w] = true
	}
	return m
}()
