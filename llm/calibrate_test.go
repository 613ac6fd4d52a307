package llm_test

import (
	"math"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
)

func TestTokenizerByModel(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]string{
		"gpt-4o": "o200k_base", "gpt-4o-mini": "o200k_base", "openai/gpt-4.1": "o200k_base", "gpt-5-mini": "o200k_base",
		"o3": "o200k_base", "o4-mini": "o200k_base", "o1-preview": "o200k_base", "gpt-oss:20b": "o200k_base",
		"gpt-4": "cl100k_base", "gpt-4-turbo": "cl100k_base", "gpt-3.5-turbo": "cl100k_base",
		"llama3.1:8b": "cl100k_base", "qwen3-coder": "cl100k_base", "": "cl100k_base",
	} {
		if got := llm.Tokenizer(model); got != want {
			t.Errorf("Tokenizer(%q) = %s, want %s", model, got, want)
		}
	}
	text := "Zero counts tokens with the model family's own tokenizer: ünïcödé, 数字, and code like fmt.Println(x)."
	if a, b := llm.TokenCounter("gpt-4o")(text), llm.CountTokens(text); a == b || a == 0 {
		t.Errorf("o200k and cl100k counted the same (%d, %d): the o200k tokenizer is not used", a, b)
	}
}

// TestCalibratorLearns: an endpoint that counts 20 % more than Zero's
// tokenizer is learned from its reported usage, smoothed, and the count
// never exceeds a token per byte.
func TestCalibratorLearns(t *testing.T) {
	t.Parallel()
	var saved []llm.Calibration
	c := llm.NewCalibrator("llama3", llm.Calibration{}, func(cal llm.Calibration) { saved = append(saved, cal) })
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	raw := llm.CountTokens(text)
	if got, want := c.Count(text), int(math.Ceil(float64(raw)*llm.UncalibratedRatio)); got != want {
		t.Fatalf("uncalibrated count %d, want %d (cl100k's with the prior for a tokenizer Zero does not carry)", got, want)
	}
	if got := llm.NewCalibrator("gpt-4", llm.Calibration{}, nil).Count(text); got != raw {
		t.Fatalf("GPT-4's uncalibrated count %d, want its tokenizer's %d", got, raw)
	}
	msgs := []llm.Message{{Role: llm.System, Content: "You are Zero."}, {Role: llm.User, Content: text}}
	counted := llm.CountTokens(msgs[0].Content) + raw + 3*3
	for range 10 {
		c.ObservePrompt(counted*6/5, msgs)
	}
	cal := c.Calibration()
	if cal.Samples != 10 || cal.Ratio < 1.19 || cal.Ratio > 1.21 {
		t.Fatalf("calibration %+v, want about 1.2 over 10 samples", cal)
	}
	if got := c.Count(text); got < raw*6/5 || got > raw*6/5+2 {
		t.Errorf("calibrated count %d, want about %d", got, raw*6/5)
	}
	if len(saved) != 10 || saved[9] != cal {
		t.Errorf("onChange got %d calibrations, the last %+v", len(saved), saved)
	}
	// One odd answer moves it a part of the way only.
	c.ObservePrompt(counted*3, msgs)
	if r := c.Calibration().Ratio; r > 1.9 {
		t.Errorf("one odd request moved the ratio to %.2f", r)
	}
	// An endpoint that counts fewer tokens than Zero does not lower the count.
	low := llm.NewCalibrator("llama3", llm.Calibration{}, nil)
	low.ObservePrompt(counted/2, msgs)
	if got := low.Count(text); got != raw {
		t.Errorf("after an endpoint that counts half: %d, want Zero's own %d", got, raw)
	}
	// Never more tokens than bytes.
	if got := c.Count("a"); got != 1 {
		t.Errorf("Count(a) = %d", got)
	}
	// Small prompts and no usage teach nothing.
	before := c.Calibration()
	c.ObservePrompt(50, []llm.Message{{Role: llm.User, Content: "hi"}})
	c.ObservePrompt(0, msgs)
	if c.Calibration() != before {
		t.Error("a tiny prompt or a missing usage changed the calibration")
	}
}

func TestCalibratorStart(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("hello world ", 50)
	for _, start := range []llm.Calibration{{Ratio: 50, Samples: 3}, {Ratio: -1, Samples: 3}, {Ratio: 0.7, Samples: 3}, {Ratio: 1.5}} {
		if got, want := llm.NewCalibrator("gpt-4-turbo", start, nil).Count(text), llm.CountTokens(text); got != want {
			t.Errorf("start %+v: count %d, want the uncalibrated %d", start, got, want)
		}
	}
	c := llm.NewCalibrator("m", llm.Calibration{Ratio: 1.5, Samples: 4}, nil)
	if got, want := c.Count(text), (llm.CountTokens(text)*3+1)/2; got != want {
		t.Errorf("a kept calibration: count %d, want %d", got, want)
	}
}

// A prompt with a picture is no sample: the endpoint counts the picture
// as it likes, and the text's ratio must not move for it.
func TestCalibrationSkipsImages(t *testing.T) {
	t.Parallel()
	c := llm.NewCalibrator("llama3", llm.Calibration{}, nil)
	msgs := []llm.Message{{Role: llm.User, Content: "look at this", Images: []llm.Image{llm.NewImage("image/png", []byte("x"), 1, 1, "")}}}
	for range 20 {
		c.ObservePrompt(5000, msgs)
	}
	if cal := c.Calibration(); cal.Samples != 0 {
		t.Errorf("calibration after prompts with pictures = %+v, want no samples", cal)
	}
}
