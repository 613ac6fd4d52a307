package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// ScriptedCall is one native tool call of a [Reply].
type ScriptedCall struct {
	ID        string `json:"id,omitempty"` // "" = call_<n>
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // the JSON text, sent as it is (it may be malformed on purpose)
}

// callID is the call's id, or one made from its place.
func callID(c ScriptedCall, i int) string {
	return cmp.Or(c.ID, fmt.Sprintf("call_%d", i))
}

// callsOf is the reply's calls in a whole message's shape (a reply not
// streamed).
func callsOf(reply Reply) []any {
	if reply.ToolCallsInText {
		return nil
	}
	var out []any
	for i, c := range reply.ToolCalls {
		out = append(out, map[string]any{"id": callID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	return out
}

// callsText is the reply's calls as a server that does not parse them
// leaves them in the content: Hermes' <tool_call> blocks.
func callsText(reply Reply) string {
	var b strings.Builder
	for _, c := range reply.ToolCalls {
		args := json.RawMessage(c.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage(`{}`)
		}
		v, _ := json.Marshal(map[string]any{"name": c.Name, "arguments": args})
		fmt.Fprintf(&b, "\n<tool_call>\n%s\n</tool_call>", v)
	}
	return b.String()
}

// streamCalls sends the reply's tool calls through piece, each delta a
// chunk of its own, in the reply's ToolCallStyle.
func streamCalls(reply Reply, piece func(map[string]any) error) error {
	if reply.ToolCallsInText {
		for _, p := range split(callsText(reply), reply.ChunkSize) {
			if err := piece(map[string]any{"content": p}); err != nil {
				return err
			}
		}
		return nil
	}
	for i, c := range reply.ToolCalls {
		head := map[string]any{"id": callID(c, i), "type": "function"}
		if reply.ToolCallStyle != "no_index" {
			head["index"] = i
		}
		call := func(fields map[string]any, fn map[string]any) error {
			tc := map[string]any{}
			for k, v := range fields {
				tc[k] = v
			}
			tc["function"] = fn
			return piece(map[string]any{"content": nil, "tool_calls": []any{tc}})
		}
		switch reply.ToolCallStyle {
		case "whole":
			if err := call(head, map[string]any{"name": c.Name, "arguments": c.Arguments}); err != nil {
				return err
			}
			continue
		case "null_arguments":
			if err := call(head, map[string]any{"name": c.Name, "arguments": nil}); err != nil {
				return err
			}
		case "name_pieces":
			half := len(c.Name) / 2
			if err := call(head, map[string]any{"name": c.Name[:half], "arguments": ""}); err != nil {
				return err
			}
			more := map[string]any{}
			if reply.ToolCallStyle != "no_index" {
				more["index"] = i
			}
			if err := call(more, map[string]any{"name": c.Name[half:]}); err != nil {
				return err
			}
		default:
			if err := call(head, map[string]any{"name": c.Name, "arguments": ""}); err != nil {
				return err
			}
		}
		rest := map[string]any{}
		if reply.ToolCallStyle != "no_index" {
			rest["index"] = i
		}
		for _, p := range split(c.Arguments, reply.ChunkSize) {
			if err := call(rest, map[string]any{"arguments": p}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Teaches reports whether the request taught the model the tool named
// name: its "### name" part of the system prompt (Agent Zero's JSON
// protocol), or a function of that name or of one of its methods
// ("text_editor_read") among the request's tools (native calls), the name
// written as the APIs take it ("server.tool" as "server_tool").
func (r Recorded) Teaches(name string) bool {
	if len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, "### "+name) {
		return true
	}
	name = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			return c
		}
		return '_'
	}, name)
	for _, t := range r.Tools {
		if t == name || strings.HasPrefix(t, name+"_") {
			return true
		}
	}
	return false
}
