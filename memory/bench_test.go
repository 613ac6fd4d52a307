package memory_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/store"
)

// The recall benchmarks search a workspace's memory of n memories (random
// sentences over a 5,000-word vocabulary, 8 to 24 words each) with a query
// of a few words, as memory_load and the recall extension do: by keywords,
// and hybrid with 1,536-dimension vectors (OpenAI's text-embedding-3-small
// size). The query's embedding comes from an in-process embedder, so the
// numbers are Zero's own work, not a model's latency.
//
//	go test -run '^$' -bench 'Recall|Import' -benchtime 200x ./memory

const dims = 1536

type fixedEmbedder struct{ rng *rand.Rand }

func (fixedEmbedder) Model() string { return "bench-1536" }

func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = randomUnit(rand.New(rand.NewPCG(uint64(len(texts[i])), 7)))
	}
	return out, nil
}

func randomUnit(r *rand.Rand) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		f := r.NormFloat64()
		v[i] = float32(f)
		sum += f * f
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
	return v
}

var (
	vocab     []string
	benchMu   sync.Mutex
	benchDirs = map[string]string{}
)

func init() {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for range 5000 {
		n := 3 + r.IntN(8)
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		vocab = append(vocab, string(b))
	}
}

func sentence(r *rand.Rand) string {
	n := 8 + r.IntN(17)
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(w, " ") + "."
}

// benchStore returns a store holding n memories (with vectors when
// vectors), built once per process and removed at its end.
func benchStore(b *testing.B, n int, vectors bool) *store.Store {
	b.Helper()
	key := fmt.Sprintf("%d-%v", n, vectors)
	benchMu.Lock()
	dir := benchDirs[key]
	benchMu.Unlock()
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "zero-membench-"); err != nil {
			b.Fatal(err)
		}
		st, err := store.Open(filepath.Join(dir, "zero.db"))
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(n), 3))
		for done := 0; done < n; {
			batch := make([]memory.Memory, min(2000, n-done))
			for i := range batch {
				batch[i] = memory.Memory{Scope: ws, Area: []string{memory.AreaMain, memory.AreaFragments, memory.AreaSolutions}[r.IntN(3)], Text: sentence(r)}
			}
			saved, err := st.SaveMemories(batch)
			if err != nil {
				b.Fatal(err)
			}
			if vectors {
				vecs := map[string][]float32{}
				for _, m := range saved {
					vecs[m.ID] = randomUnit(r)
				}
				if err := st.SetMemoryVectors("bench-1536", vecs); err != nil {
					b.Fatal(err)
				}
			}
			done += len(batch)
		}
		st.Close()
		benchMu.Lock()
		benchDirs[key] = dir
		benchMu.Unlock()
	}
	st, err := store.Open(filepath.Join(dir, "zero.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range benchDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

func benchRecall(b *testing.B, n int, hybrid bool) {
	st := benchStore(b, n, hybrid)
	var emb memory.Embedder
	if hybrid {
		emb = fixedEmbedder{}
	}
	svc := memory.New(memory.Options{Store: st, Embedder: emb})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 9))
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = strings.Join([]string{vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))], vocab[r.IntN(len(vocab))]}, " ")
	}
	// The first search reads the vectors into memory; later ones reuse them.
	if _, err := svc.Search(ctx, memory.Query{Text: queries[0], Scopes: []string{ws, ""}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := svc.Search(ctx, memory.Query{Text: queries[i%len(queries)], Scopes: []string{ws, ""}, Limit: 10, Threshold: -1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecallKeywords1k(b *testing.B)   { benchRecall(b, 1000, false) }
func BenchmarkRecallKeywords10k(b *testing.B)  { benchRecall(b, 10000, false) }
func BenchmarkRecallKeywords100k(b *testing.B) { benchRecall(b, 100000, false) }
func BenchmarkRecallHybrid1k(b *testing.B)     { benchRecall(b, 1000, true) }
func BenchmarkRecallHybrid10k(b *testing.B)    { benchRecall(b, 10000, true) }
func BenchmarkRecallHybrid100k(b *testing.B)   { benchRecall(b, 100000, true) }

// BenchmarkImport10MB imports a 10 MB knowledge folder (100 Markdown files
// of 100 KB) into a fresh store: reading, chunking by tokens (the cl100k
// tokenizer), and saving with their full-text index. No embeddings.
func BenchmarkImport10MB(b *testing.B) {
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(5, 5))
	for f := range 100 {
		var sb strings.Builder
		for sb.Len() < 100_000 {
			for range 5 {
				sb.WriteString(sentence(r))
				sb.WriteByte(' ')
			}
			sb.WriteString("\n\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc%03d.md", f)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * 100_000)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		st, err := store.Open(filepath.Join(b.TempDir(), "zero.db"))
		if err != nil {
			b.Fatal(err)
		}
		svc := memory.New(memory.Options{Store: st})
		b.StartTimer()
		rep, err := svc.Import(context.Background(), memory.KnowledgeDir{Path: dir, Scope: ws, Prefix: "k:"})
		if err != nil || rep.Added != 100 {
			b.Fatalf("%+v %v", rep, err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}
