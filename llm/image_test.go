package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

// A user message's images go as image_url data: URL parts after its
// text; a tool result's (which the API takes in no tool message) in a user
// message right after the results. The scripted server reads them as a
// real one does.
func TestImagesOnTheWire(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "ok"})
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	shot := llm.NewImage("image/png", []byte("\x89PNG fake bytes"), 2, 2, "shot.png")
	tool := llm.NewImage("image/jpeg", []byte("\xff\xd8 jpeg bytes"), 3, 3, "cam.jpg")
	_, err = c.Stream(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: llm.System, Content: "sys"},
		{Role: llm.User, Content: "look", Images: []llm.Image{shot}},
		{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "vision_load", Arguments: "{}"}}},
		{Role: llm.Tool, ToolCallID: "c1", Content: "1 image loaded", Images: []llm.Image{tool}},
		{Role: llm.User, Content: "and?"},
	}}, func(llm.Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	if len(msgs) != 6 {
		t.Fatalf("%d messages on the wire, want 6 (the tool's image in a user message of its own)", len(msgs))
	}
	if m := msgs[1]; m.Content != "look" || len(m.Images) != 1 || m.Images[0].Hash != shot.Hash || m.Images[0].MIME != "image/png" {
		t.Errorf("user message = %q %+v", m.Content, m.Images)
	}
	if m := msgs[3]; m.Role != llm.Tool || len(m.Images) != 0 {
		t.Errorf("tool message carries images: %+v", m)
	}
	if m := msgs[4]; m.Role != llm.User || len(m.Images) != 1 || m.Images[0].Hash != tool.Hash || !strings.Contains(m.Content, "tool results") {
		t.Errorf("message after the results = %s %q %d images", m.Role, m.Content, len(m.Images))
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"image_url":{"url":"data:image/png;base64,`) {
		t.Errorf("body lacks the data URL part")
	}
}

// A text-only model's endpoint refuses image parts with a 400 that
// RefusesImages knows; other errors are not taken for it.
func TestRefusesImages(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "ok"})
	srv.SetBlind(true)
	c, err := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: llm.User, Content: "look", Images: []llm.Image{llm.NewImage("image/png", []byte("x"), 1, 1, "")}},
	}}, func(llm.Delta) error { return nil })
	if !llm.RefusesImages(err) {
		t.Fatalf("err = %v, want an image refusal", err)
	}
	for _, msg := range []string{"model 'llava' does not support tools", "rate limit", "maximum context length is 8192 tokens"} {
		if llm.RefusesImages(&llm.APIError{StatusCode: 400, Message: msg}) {
			t.Errorf("%q taken for an image refusal", msg)
		}
	}
	for _, msg := range []string{"The model `gpt-3.5-turbo` does not support image input", "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj", "Qwen/Qwen2.5-7B is not a multimodal model"} {
		if !llm.RefusesImages(&llm.APIError{StatusCode: 400, Message: msg}) {
			t.Errorf("%q not taken for an image refusal", msg)
		}
	}
	if c.Blind() {
		t.Errorf("a client is blind before anyone says so")
	}
	c.SetBlind()
	if c2, _ := llm.New(llm.Options{Model: "m", BaseURL: srv.URL()}); !c2.Blind() {
		t.Errorf("blindness is not remembered for the endpoint and model")
	}
}

// Where the endpoint's model list says what a model reads, a text-only one
// is known as such: OpenRouter's input_modalities, Ollama's capabilities,
// LM Studio's type.
func TestWindowSaysNoVision(t *testing.T) {
	t.Parallel()
	for _, shape := range []string{llmtest.ShapeOpenRouter, llmtest.ShapeOllama, llmtest.ShapeLMStudio} {
		for _, blind := range []bool{false, true} {
			srv := llmtest.NewServer(t)
			srv.ServeWindow(llmtest.Window{Tokens: 8192, ModelMax: 8192, Shape: shape, NoVision: blind})
			w, err := windowOf(t, srv.URL(), "qwen3:8b", "")
			if err != nil {
				t.Fatal(err)
			}
			if w.NoVision != blind {
				t.Errorf("%s, blind %v: NoVision = %v", shape, blind, w.NoVision)
			}
		}
	}
}
