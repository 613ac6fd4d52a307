package memory

import (
	"container/heap"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zeroagent/zero/cut"
)

// index is a scope's vectors of the embedding model, in memory: searching
// 10,000 of 1,536 dimensions is a few milliseconds of dot products, where
// reading them from SQLite for every search would take far longer.
type index struct {
	version int64 // the scope's memory version it was read at
	dims    int
	ids     []string
	vecs    []float32 // len(ids) * dims
}

type vecHit struct {
	id, scope string
	cos       float64
}

// maxEmbedChars bounds the text of one embedding request (a recall query
// is the recent conversation; embedding models take a few thousand tokens).
const maxEmbedChars = 8000

// vectorSearch returns the n memories of scopes whose vectors are closest
// to text's, the closest first.
func (s *Service) vectorSearch(ctx context.Context, text string, scopes []string, n int) ([]vecHit, error) {
	text = cut.Tail(text, maxEmbedChars) // the most recent part
	qv, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	h := &minHeap{}
	for _, sc := range scopes {
		ix, err := s.index(sc)
		if err != nil {
			return nil, err
		}
		if ix.dims == 0 {
			continue
		}
		if ix.dims != len(qv[0]) {
			return nil, fmt.Errorf("the stored vectors have %d dimensions, %s gives %d", ix.dims, s.emb.Model(), len(qv[0]))
		}
		q := qv[0]
		for i, id := range ix.ids {
			cos := float64(dot(q, ix.vecs[i*ix.dims:(i+1)*ix.dims]))
			if h.Len() < n {
				heap.Push(h, vecHit{id: id, scope: sc, cos: cos})
			} else if cos > (*h)[0].cos {
				(*h)[0] = vecHit{id: id, scope: sc, cos: cos}
				heap.Fix(h, 0)
			}
		}
	}
	out := make([]vecHit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(vecHit)
	}
	return out, nil
}

func dot(a, b []float32) float32 {
	b = b[:len(a)] // one bounds check here instead of one per element
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// index returns scope's vectors, read again when the scope's memory
// changed since (by this process or another).
func (s *Service) index(scope string) (*index, error) {
	v, err := s.st.MemoryVersion(scope)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ix := s.idx[scope]
	s.mu.Unlock()
	if ix != nil && ix.version == v {
		return ix, nil
	}
	ix = &index{}
	ix.version, err = s.st.MemoryVectors(scope, s.emb.Model(), func(id, _ string, vec []float32) {
		if ix.dims == 0 {
			ix.dims = len(vec)
		}
		if len(vec) != ix.dims {
			return // from a model of the same name that changed: embedded again by Embed
		}
		ix.ids = append(ix.ids, id)
		ix.vecs = append(ix.vecs, vec...)
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.idx[scope] = ix
	s.mu.Unlock()
	return ix, nil
}

// embed stores the embeddings of ms.
func (s *Service) embed(ctx context.Context, ms []Memory) error {
	texts := make([]string, len(ms))
	for i, m := range ms {
		texts[i] = head(m.Text, maxEmbedChars)
	}
	vecs, err := s.emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	byID := make(map[string][]float32, len(ms))
	for i, m := range ms {
		byID[m.ID] = vecs[i]
	}
	return s.st.SetMemoryVectors(s.emb.Model(), byID)
}

// Embed embeds the memories of scopes that have no vector of the embedding
// model yet (saved while the endpoint failed, or before the model was
// configured or changed), batch by batch, until none is left or ctx ends.
// It returns how many it embedded.
func (s *Service) Embed(ctx context.Context, scopes []string) (int, error) {
	if s.emb == nil {
		return 0, nil
	}
	done := 0
	for ctx.Err() == nil {
		ms, err := s.st.MemoriesWithoutVector(scopes, s.emb.Model(), 32)
		if err != nil {
			return done, err
		}
		if len(ms) == 0 {
			// All embedded by this model: the vectors of an earlier one go.
			for _, sc := range scopes {
				if _, err := s.st.DeleteOtherVectors(sc, s.emb.Model()); err != nil {
					return done, err
				}
			}
			return done, nil
		}
		if err := s.embed(ctx, ms); err != nil {
			return done, fmt.Errorf("embed memories with %s: %w", s.emb.Model(), err)
		}
		done += len(ms)
	}
	return done, ctx.Err()
}

// minHeap keeps the best vector hits, the worst on top.
type minHeap []vecHit

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].cos != h[j].cos {
		return h[i].cos < h[j].cos
	}
	return strings.Compare(h[i].id, h[j].id) > 0
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(vecHit)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// head is the first n bytes of s at most, ending on a whole character.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
