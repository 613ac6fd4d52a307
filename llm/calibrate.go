package llm

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// o200k is built on first use, as cl100k.
var o200k = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil
	}
	return c
})

// o200kPrefixes are the model names whose tokenizer is o200k_base: GPT-4o,
// 4.1, 4.5, 5, the o-series and gpt-oss (whose o200k_harmony adds only
// special tokens).
var o200kPrefixes = []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss", "codex-"}

// Tokenizer names the embedded tokenizer that counts model's tokens:
// "o200k_base" for OpenAI's newer models, "cl100k_base" for GPT-4 and 3.5
// and for every other model, whose own tokenizer Zero does not carry (a
// [Calibrator] then corrects the count by what the endpoint reports). A
// provider's prefix ("openai/gpt-4o") is ignored.
func Tokenizer(model string) string {
	name := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
	for _, p := range o200kPrefixes {
		if strings.HasPrefix(name, p) {
			return string(tokenizer.O200kBase)
		}
	}
	return string(tokenizer.Cl100kBase)
}

// ownTokenizer reports whether Zero carries model's own tokenizer (an
// OpenAI model), rather than counting it with cl100k in its stead.
func ownTokenizer(model string) bool {
	name := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
	return Tokenizer(model) == string(tokenizer.O200kBase) || strings.HasPrefix(name, "gpt-4") || strings.HasPrefix(name, "gpt-3.5")
}

// UncalibratedRatio is the ratio a [Calibrator] starts from for a model
// whose tokenizer Zero does not carry, until its endpoint reports a count:
// cl100k undercounts the Llama 2 and Mistral families' tokenizers by 10 to
// 25 %, and a count short of the server's sends prompts over the window,
// where one over it only leaves a little of it unused.
const UncalibratedRatio = 1.15

// TokenCounter counts tokens with model's tokenizer (see [Tokenizer]).
func TokenCounter(model string) func(string) int {
	if Tokenizer(model) != string(tokenizer.O200kBase) {
		return CountTokens
	}
	return func(s string) int {
		if s == "" {
			return 0
		}
		if c := o200k(); c != nil {
			if n, err := c.Count(s); err == nil {
				return n
			}
		}
		return CountTokens(s)
	}
}

// Calibration is how a model's endpoint counts against Zero's tokenizer:
// Ratio is the endpoint's prompt tokens per token Zero counted, smoothed
// over Samples requests.
type Calibration struct {
	Ratio   float64 `json:"ratio"`
	Samples int     `json:"samples"`
}

// The bounds of a calibration: an observed ratio outside them is clamped.
// Above, it is a prompt's oddity (a broken usage), not a tokenizer. Below
// 1, the endpoint counts fewer tokens than Zero's tokenizer: Zero keeps its
// own count then, as a count short of the server's would send prompts over
// the window, and one over it only leaves some of the window unused (a
// server's usage can also be an estimate, as a proxy's or a test
// server's).
const (
	minRatio = 1.0
	maxRatio = 3.0
	// calibrationWeight is how much a new observation moves the ratio: the
	// last few requests dominate, one odd request does not.
	calibrationWeight = 0.3
	// minCalibrationTokens: a prompt smaller than this is not observed;
	// the chat template's tokens would weigh more than the text's.
	minCalibrationTokens = 200
	// perMessageTokens is what a chat template adds per message, and once
	// for the reply's start (OpenAI's documented 3; Llama's and Qwen's
	// templates add a few more, which the ratio takes up).
	perMessageTokens = 3
)

// Valid reports whether c can be used: a ratio within bounds.
func (c Calibration) Valid() bool {
	return c.Samples > 0 && c.Ratio >= minRatio && c.Ratio <= maxRatio && !math.IsNaN(c.Ratio)
}

// Calibrator counts tokens with a model's tokenizer corrected by what its
// endpoint reports: the ratio of the usage.prompt_tokens of a request to
// Zero's own count of the same request, smoothed. It is safe for
// concurrent use.
type Calibrator struct {
	base  func(string) int
	ratio atomic.Uint64 // math.Float64bits of the ratio in use, 1 until observed

	mu    sync.Mutex
	cal   Calibration
	cache map[string]counted // the raw counts of the messages of recent prompts
	// seen numbers the observed prompts: a count not used by the last
	// cacheGenerations of them is dropped. The chat's prompts and the
	// memory's requests to the same model come in turns, and each must
	// find its own messages counted.
	seen     int
	onChange func(Calibration)
}

// counted is a message's raw count and the last prompt that had it.
type counted struct{ tokens, seen int }

// cacheGenerations is how many prompts a message's count outlives its last
// use by.
const cacheGenerations = 8

// NewCalibrator counts model's tokens starting from start; the zero value,
// or one not [Calibration.Valid], starts uncalibrated: at ratio 1 for a
// model whose tokenizer Zero carries, else at [UncalibratedRatio].
// onChange, when set, gets every new calibration (to keep it across runs),
// on the goroutine that observed it.
func NewCalibrator(model string, start Calibration, onChange func(Calibration)) *Calibrator {
	c := &Calibrator{base: TokenCounter(model), onChange: onChange}
	if !start.Valid() {
		start = Calibration{Ratio: 1}
		if !ownTokenizer(model) {
			start.Ratio = UncalibratedRatio
		}
	}
	c.cal = start
	c.ratio.Store(math.Float64bits(start.Ratio))
	return c
}

// Count counts s as the endpoint would: its tokenizer's count times the
// ratio, rounded up, but never more than one token per byte (callers bound
// a text's tokens by its bytes without counting).
func (c *Calibrator) Count(s string) int {
	n := c.base(s)
	if r := math.Float64frombits(c.ratio.Load()); r != 1 && n > 0 {
		n = int(math.Ceil(float64(n) * r))
	}
	return min(n, len(s))
}

// Calibration is the calibration in use.
func (c *Calibrator) Calibration() Calibration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cal
}

// ObservePrompt learns from one request: reported is the usage.prompt_tokens
// the endpoint answered for the prompt msgs. Each message is counted once
// while it stays in the prompts (the history repeats turn after turn). A
// prompt with pictures teaches nothing.
func (c *Calibrator) ObservePrompt(reported int, msgs []Message) {
	if reported <= 0 || len(msgs) == 0 {
		return
	}
	for i := range msgs {
		if len(msgs[i].Images) > 0 {
			return // what a picture costs differs by provider and size: no sample of the text's tokens
		}
	}
	c.mu.Lock()
	if c.cache == nil {
		c.cache = map[string]counted{}
	}
	c.seen++
	total := perMessageTokens * (len(msgs) + 1)
	for _, m := range msgs {
		e, ok := c.cache[m.Content]
		if !ok {
			e.tokens = c.base(m.Content)
		}
		e.seen = c.seen
		c.cache[m.Content] = e
		total += e.tokens
	}
	if c.seen%cacheGenerations == 0 {
		for k, e := range c.cache {
			if c.seen-e.seen >= cacheGenerations {
				delete(c.cache, k)
			}
		}
	}
	c.mu.Unlock()
	c.Observe(reported, total)
}

// Observe learns from one request whose prompt the endpoint counted as
// reported tokens and Zero's tokenizer (uncalibrated) as counted.
func (c *Calibrator) Observe(reported, counted int) {
	if reported <= 0 || counted < minCalibrationTokens {
		return
	}
	obs := min(max(float64(reported)/float64(counted), minRatio), maxRatio)
	c.mu.Lock()
	if c.cal.Samples == 0 {
		c.cal.Ratio = obs
	} else {
		c.cal.Ratio += calibrationWeight * (obs - c.cal.Ratio)
	}
	c.cal.Samples++
	cal := c.cal
	c.ratio.Store(math.Float64bits(cal.Ratio))
	c.mu.Unlock()
	if c.onChange != nil {
		c.onChange(cal)
	}
}
