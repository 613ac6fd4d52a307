package rank

import "math"

// BM25 parameters (the usual ones).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25 scores every text for every query with Okapi BM25, over [Terms].
// Only the queries' terms are counted in the texts, so memory stays
// proportional to the matches, not to the vocabulary.
func BM25(texts, queries []string) [][]float64 {
	vocab := map[string]int{}
	qterms := make([][]int, len(queries))
	for qi, q := range queries {
		seen := map[int]bool{}
		Terms(q, func(t string) {
			id, ok := vocab[t]
			if !ok {
				id = len(vocab)
				vocab[t] = id
			}
			if !seen[id] {
				seen[id] = true
				qterms[qi] = append(qterms[qi], id)
			}
		})
	}
	n := len(texts)
	lens := make([]int, n)
	tf := make([]map[int]int, n)
	df := make([]int, len(vocab))
	sum := 0
	for i, t := range texts {
		Terms(t, func(w string) {
			lens[i]++
			if id, ok := vocab[w]; ok {
				if tf[i] == nil {
					tf[i] = map[int]int{}
				}
				if tf[i][id] == 0 {
					df[id]++
				}
				tf[i][id]++
			}
		})
		sum += lens[i]
	}
	avg := max(float64(sum)/float64(max(n, 1)), 1)
	out := make([][]float64, len(queries))
	for qi, terms := range qterms {
		out[qi] = make([]float64, n)
		for i := range texts {
			if tf[i] == nil {
				continue
			}
			s := 0.0
			for _, id := range terms {
				f := float64(tf[i][id])
				if f == 0 {
					continue
				}
				idf := math.Log(1 + (float64(n)-float64(df[id])+0.5)/(float64(df[id])+0.5))
				s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(lens[i])/avg))
			}
			out[qi][i] = s
		}
	}
	return out
}

// Cosine is the cosine of two embeddings (0 when they cannot be compared).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Coverage is the share of q's terms that d holds.
func Coverage(q, d map[string]bool) float64 {
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
