package llmtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// EmbeddingDims is the length of the vectors POST /v1/embeddings answers.
const EmbeddingDims = 256

// EmbedRequests returns how many embedding requests s answered.
func (s *Server) EmbedRequests() int64 { return s.embeds.Load() }

// Embed is the deterministic embedding the server gives text: a bag of its
// lower-cased words, each hashed to one of EmbeddingDims dimensions, scaled
// to unit length. Texts sharing words get similar vectors, which is what a
// memory test needs from a real embedding model.
func Embed(text string) []float64 {
	v := make([]float64, EmbeddingDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbeddingDims]++
	}
	var sum float64
	for _, f := range v {
		sum += f * f
	}
	if sum > 0 {
		n := 1 / math.Sqrt(sum)
		for i := range v {
			v[i] *= n
		}
	}
	return v
}

// embeddings answers POST /v1/embeddings with Embed of each input.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: reading the request: "+err.Error(), "")
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: the request is not JSON: "+err.Error(), "")
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "llmtest: input must be a string or an array of strings", "")
			return
		}
		inputs = []string{one}
	}
	s.embeds.Add(1)
	data := make([]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Embed(in)}
		tokens += (len(in) + 3) / 4 // as usageFor counts
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "model": req.Model, "data": data,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}
