package llm

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Embedder turns texts into vectors with an OpenAI-compatible /embeddings
// endpoint (OpenAI, Ollama, vLLM, LM Studio...). It is safe for concurrent use.
type Embedder struct {
	model   string
	key     string
	svc     openai.EmbeddingService
	onUsage func(context.Context, Usage)
}

// EmbedderOptions configures [NewEmbedder]; Model is required.
type EmbedderOptions struct {
	Model      string
	BaseURL    string // "" = https://api.openai.com/v1
	APIKey     string // "" sends no Authorization header
	HTTPClient *http.Client
	MaxRetries int // 0 = 2
	// OnUsage, when set, is told the usage of every call that succeeded
	// (the endpoint's usage.prompt_tokens), with the call's context.
	OnUsage func(ctx context.Context, u Usage)
}

// NewEmbedder returns an Embedder for o.Model.
func NewEmbedder(o EmbedderOptions) (*Embedder, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("new embedder: %w", ErrNoModel)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient()
	}
	ropts := []option.RequestOption{
		option.WithBaseURL(cmp.Or(o.BaseURL, DefaultBaseURL)),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(cmp.Or(o.MaxRetries, 2)),
	}
	if o.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(o.APIKey))
	}
	return &Embedder{model: o.Model, key: o.APIKey, svc: openai.NewEmbeddingService(ropts...), onUsage: o.OnUsage}, nil
}

// Model returns the embedding model's name.
func (e *Embedder) Model() string { return e.model }

// Embed returns one unit-length vector per text, in order. Empty texts are
// sent as a single space (the API refuses empty input).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	in := make([]string, len(texts))
	for i, t := range texts {
		in[i] = cmp.Or(t, " ")
	}
	res, err := e.svc.New(ctx, openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: in},
		Model:          openai.EmbeddingModel(e.model),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	})
	if err != nil {
		return nil, fmt.Errorf("embed %d texts with %s: %s", len(texts), e.model, redact(err.Error(), e.key))
	}
	if e.onUsage != nil { // what was sent is paid for, whatever comes of the answer
		e.onUsage(ctx, Usage{PromptTokens: int(res.Usage.PromptTokens), TotalTokens: int(res.Usage.TotalTokens)})
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(out) {
			return nil, fmt.Errorf("embed with %s: the endpoint answered an embedding for input %d of %d", e.model, d.Index, len(texts))
		}
		out[d.Index] = Normalize(d.Embedding)
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embed with %s: no embedding for input %d", e.model, i)
		}
		if len(v) != len(out[0]) {
			return nil, fmt.Errorf("embed with %s: embeddings of different lengths (%d and %d)", e.model, len(out[0]), len(v))
		}
	}
	return out, nil
}

// Normalize returns v as float32 scaled to unit length (all zeros stay zeros).
func Normalize(v []float64) []float32 {
	var sum float64
	for _, f := range v {
		sum += f * f
	}
	out := make([]float32, len(v))
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return out
	}
	n := 1 / math.Sqrt(sum)
	for i, f := range v {
		out[i] = float32(f * n)
	}
	return out
}
