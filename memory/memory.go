// Package memory is Agent Zero's memory over Zero's SQLite store: memories
// in areas (main, fragments, solutions) with metadata, in the user's scope
// ("") and each workspace's, searched by keywords (SQLite FTS5, BM25) and,
// when an embedding model is configured, by vectors too, the two rankings
// fused (reciprocal-rank fusion). Without an embedding model it still
// works, by keywords.
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/rank"
	"github.com/zeroagent/zero/store"
)

// Agent Zero's memory areas.
const (
	AreaMain      = "main"
	AreaFragments = "fragments"
	AreaSolutions = "solutions"
)

// Defaults of Agent Zero's memory_load.
const (
	DefaultThreshold = 0.7
	DefaultLimit     = 10
)

// TimeFormat is how a memory's timestamp reads (Agent Zero's).
const TimeFormat = "2006-01-02 15:04:05"

// Memory is one stored memory.
type Memory = store.Memory

// Embedder turns texts into unit-length vectors (llm.Embedder).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Options configures [New]; Store is required.
type Options struct {
	Store    *store.Store
	Embedder Embedder // nil: keyword search only
	Logger   *slog.Logger
}

// Service reads and writes memories. It is safe for concurrent use.
type Service struct {
	st  *store.Store
	emb Embedder
	log *slog.Logger

	mu  sync.Mutex
	idx map[string]*index // vectors of emb's model, by scope
	// imports counts the imports going on; idle is closed when it drops
	// to zero (see settle).
	imports int
	idle    chan struct{}
}

// importing marks an import as going on until the returned func is called.
func (s *Service) importing() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.imports == 0 {
		s.idle = make(chan struct{})
	}
	s.imports++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.imports--; s.imports == 0 {
			close(s.idle)
		}
	}
}

// settle waits for the knowledge imports going on (a search right after
// the start should find what is being imported), at most until ctx ends.
func (s *Service) settle(ctx context.Context) {
	s.mu.Lock()
	idle := s.idle
	busy := s.imports > 0
	s.mu.Unlock()
	if !busy {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// New returns a Service over o.Store.
func New(o Options) *Service {
	return &Service{st: o.Store, emb: o.Embedder, log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), idx: map[string]*index{}}
}

// Embeddings reports whether an embedding model is configured.
func (s *Service) Embeddings() bool { return s.emb != nil }

// Query is a search.
type Query struct {
	Text string
	// Scopes are searched together; memories of the first rank a little
	// higher (a workspace's before the user's).
	Scopes    []string
	Threshold float64 // the least relevance, 0 to 1; 0 means DefaultThreshold, negative none
	Limit     int     // 0 means DefaultLimit
	// Filter is a Python-style condition over a memory's metadata (its
	// area, id, timestamp and what it was saved with), as Agent Zero
	// writes them: area == 'solutions'.
	Filter string
	// Strict takes only close matches (memory_forget deletes what it
	// finds): the cosine itself must reach the threshold, not Agent Zero's
	// (1+cos)/2, and a keyword match counts the share of the query's words
	// the memory holds.
	Strict bool
}

// Hit is a memory a search found, with its relevance (0 to 1): the cosine
// of the embeddings as Agent Zero normalises it ((1+cos)/2), or the share of
// words the query and the memory have in common, whichever is higher.
type Hit struct {
	Memory
	Relevance float64
}

// ErrFilter is wrapped by the errors of a filter that does not parse.
var ErrFilter = errors.New("memory filter")

// Search returns the memories relevant to q, the best first.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	s.settle(ctx)
	limit := cmp.Or(q.Limit, DefaultLimit)
	threshold := q.Threshold
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	var cond *profiles.Condition
	if strings.TrimSpace(q.Filter) != "" {
		c, err := profiles.CompileCondition(q.Filter)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrFilter, q.Filter, err)
		}
		cond = c
	}
	pool := max(50, 5*limit)

	type cand struct {
		id       string
		mem      *Memory
		rrf      float64
		vec, key float64 // relevances
	}
	cands := map[string]*cand{}
	get := func(id string) *cand {
		c := cands[id]
		if c == nil {
			c = &cand{id: id}
			cands[id] = c
		}
		return c
	}
	prefer := func(scope string) float64 {
		if len(q.Scopes) > 1 && scope != q.Scopes[0] {
			return 0.9
		}
		return 1
	}

	// Keywords: FTS5 finds the candidates; the share of shared words scores them.
	terms := rank.Words(q.Text, maxQueryTerms)
	qs := map[string]bool{}
	for _, w := range terms {
		rank.Terms(w, func(t string) { qs[t] = true })
	}
	found, err := s.st.MatchMemories(q.Scopes, terms, pool)
	if err != nil {
		return nil, err
	}
	for pos, m := range found {
		c := get(m.ID)
		c.mem = &found[pos]
		c.key = keywordRelevance(qs, rank.Stems(m.Text), q.Strict)
		c.rrf += prefer(m.Scope) / float64(60+pos+1)
	}

	// Vectors, when there is a model.
	vecScope := map[string]string{}
	if s.emb != nil && strings.TrimSpace(q.Text) != "" {
		hits, err := s.vectorSearch(ctx, q.Text, q.Scopes, pool)
		if err != nil {
			s.log.Warn("memory: searching by embeddings failed; by keywords only", "err", err)
		}
		for pos, h := range hits {
			vecScope[h.id] = h.scope
			c := get(h.id)
			c.vec = (1 + h.cos) / 2
			if q.Strict {
				c.vec = h.cos // a deletion takes only close matches
			}
			c.rrf += prefer(h.scope) / float64(60+pos+1)
		}
	}

	// The order: relevance (a workspace's memories a little ahead of the
	// user's), then the fused ranks, which also lift what both searches found.
	list := slices.Collect(maps.Values(cands))
	score := func(c *cand) float64 {
		scope := ""
		if c.mem != nil {
			scope = c.mem.Scope
		} else if len(q.Scopes) > 0 {
			scope = vecScope[c.id]
		}
		return max(c.vec, c.key)*prefer(scope) + c.rrf
	}
	sort.Slice(list, func(i, j int) bool {
		if si, sj := score(list[i]), score(list[j]); si != sj {
			return si > sj
		}
		return list[i].id < list[j].id
	})
	var out []Hit
	for _, c := range list {
		rel := max(c.vec, c.key)
		if threshold > 0 && rel < threshold {
			continue
		}
		if c.mem == nil {
			ms, err := s.st.GetMemories([]string{c.id})
			if err != nil {
				return nil, err
			}
			if len(ms) == 0 {
				continue // deleted meanwhile
			}
			c.mem = &ms[0]
		}
		if cond != nil {
			ok, err := cond.Eval(Vars(*c.mem))
			if err != nil || !ok {
				continue // Agent Zero: a condition that fails to evaluate is false
			}
		}
		out = append(out, Hit{Memory: *c.mem, Relevance: rel})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Save stores memories (their Scope, Area and Text set), with their
// embeddings when there is an embedding model, and returns them with ids.
// A failed embedding does not lose the memory: it is saved, found by
// keywords, and embedded later by Embed.
func (s *Service) Save(ctx context.Context, ms ...Memory) ([]Memory, error) {
	for i := range ms {
		ms[i].Area = cmp.Or(ms[i].Area, AreaMain)
	}
	saved, err := s.st.SaveMemories(ms)
	if err != nil {
		return nil, err
	}
	if s.emb != nil {
		if err := s.embed(ctx, saved); err != nil {
			s.log.Warn("memory: embedding new memories failed; they are found by keywords until embedded", "err", err)
		}
	}
	return saved, nil
}

// Update replaces the text and metadata of memory id (and its embedding).
func (s *Service) Update(ctx context.Context, id, text string, meta map[string]any) error {
	if err := s.st.UpdateMemory(id, text, meta); err != nil {
		return err
	}
	if s.emb != nil {
		ms, err := s.st.GetMemories([]string{id})
		if err == nil {
			err = s.embed(ctx, ms)
		}
		if err != nil {
			s.log.Warn("memory: embedding an updated memory failed", "err", err)
		}
	}
	return nil
}

// List returns the newest memories of scopes (of area, when not ""), at
// most limit.
func (s *Service) List(scopes []string, area string, limit int) ([]Memory, error) {
	return s.st.ListMemories(store.MemoryFilter{Scopes: scopes, Area: area, Limit: limit})
}

// Get returns the memories with ids that exist.
func (s *Service) Get(ids []string) ([]Memory, error) { return s.st.GetMemories(ids) }

// Delete deletes the memories with ids and returns those that existed.
func (s *Service) Delete(ids []string) ([]Memory, error) {
	return s.st.DeleteMemories(ids)
}

// Forget deletes what q finds, all of it (in rounds of 100 as Agent Zero),
// and returns what it deleted.
func (s *Service) Forget(ctx context.Context, q Query) ([]Memory, error) {
	q.Limit = 100
	var gone []Memory
	for range 1000 {
		hits, err := s.Search(ctx, q)
		if err != nil {
			return gone, err
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		del, err := s.Delete(ids)
		gone = append(gone, del...)
		if err != nil || len(hits) < q.Limit || len(del) == 0 {
			return gone, err
		}
	}
	return gone, nil
}

// Vars are the names a filter sees for m: its metadata, then its id, area,
// timestamp and, for knowledge, its source file.
func Vars(m Memory) map[string]any {
	v := make(map[string]any, len(m.Meta)+4)
	maps.Copy(v, m.Meta)
	v["id"] = m.ID
	v["area"] = m.Area
	v["timestamp"] = m.Created.Local().Format(TimeFormat)
	if m.Source != "" {
		v["source"] = m.Source
		v["knowledge_source"] = true
	}
	return v
}

// Format writes memories as Agent Zero's format_docs_plain does: each
// metadata key on its line, then "Content: " and the text.
func Format(ms []Memory) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		var b strings.Builder
		v := Vars(m)
		keys := slices.Sorted(maps.Keys(v))
		// Agent Zero's order: id, timestamp, area first.
		first := []string{"id", "timestamp", "area"}
		for _, k := range first {
			fmt.Fprintf(&b, "%s: %v\n", k, v[k])
		}
		for _, k := range keys {
			if !slices.Contains(first, k) {
				fmt.Fprintf(&b, "%s: %v\n", k, v[k])
			}
		}
		b.WriteString("Content: ")
		b.WriteString(m.Text)
		parts[i] = b.String()
	}
	return strings.Join(parts, "\n\n")
}
