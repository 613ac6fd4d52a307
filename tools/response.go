// Package tools holds Agent Zero's tools, under their Agent Zero names and
// arguments. Each implements loop.Tool; the prompt that teaches the model a
// tool lives in package profiles (agent.system.tool.<name>.md).
package tools

import (
	"context"
	"strings"

	"github.com/zeroagent/zero/loop"
)

// Response is the `response` tool: the agent's final answer, which ends
// the monologue.
type Response struct{}

var _ loop.Tool = Response{}

func (Response) Name() string       { return "response" }
func (Response) Kind(string) string { return "think" }

// responseArgs: the answer is text, or message as Agent Zero also takes it.
type responseArgs struct {
	Text    *string `json:"text,omitempty" jsonschema:"the answer in Markdown: results first, then file paths and anything left open"`
	Message *string `json:"message,omitempty" jsonschema:"the answer, when not given as text (another name of text)"`
}

var responseSpecs = specOf[responseArgs](nil)

// Specs: text or message is the answer.
func (Response) Specs() []loop.ToolSpec { return responseSpecs() }

func (Response) Execute(_ context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var args responseArgs
	if err := call.DecodeArgs(&args); err != nil {
		return loop.ToolResult{IsError: true, Text: err.Error()}, nil
	}
	text := ""
	switch {
	case args.Text != nil:
		text = *args.Text
	case args.Message != nil:
		text = *args.Message
	}
	if strings.TrimSpace(text) == "" {
		return loop.ToolResult{IsError: true, Text: `the response tool needs your answer in tool_args.text`}, nil
	}
	return loop.ToolResult{Text: text, BreakLoop: true}, nil
}
