package llmtest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/zeroagent/zero/llm"
)

// OpenAI's Responses API (POST /v1/responses), the only wire API some
// clients speak (Codex). The same script answers it: a reply's Content is
// one assistant "message" output item, each of its ToolCalls one
// "function_call" item (with a call_id unique in the process when the
// call has no ID, as a real server's are), streamed with the events OpenAI sends
// (response.created, response.in_progress, response.output_item.added,
// response.content_part.added, response.output_text.delta and .done,
// response.function_call_arguments.delta and .done,
// response.output_item.done, response.completed with the usage). Of the
// reply's other fields it honours HeaderDelay, FirstDelay, Delay,
// ChunkSize, Status (with Message and RetryAfter), Hangup and Usage;
// Reasoning and the fault injections of chat streams are not sent here.

// respSeq makes response and item ids unique within the process.
var respSeq atomic.Int64

// responsesRequest is the part of a Responses API request the server reads.
type responsesRequest struct {
	Model        string            `json:"model"`
	Stream       bool              `json:"stream"`
	Instructions string            `json:"instructions"`
	Input        json.RawMessage   `json:"input"` // a string, or a list of items
	Tools        []json.RawMessage `json:"tools"`
}

// responsesItem is one input item: a message, a function call or a
// function call's output (other types are kept by their type only).
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
}

// messages turns the request into chat messages, so recordings, Match and
// the memory check read it as they read a chat request: the instructions
// as the system message, a function call as an assistant message with the
// call, its output as a tool message.
func (req responsesRequest) messages() []llm.Message {
	var out []llm.Message
	if req.Instructions != "" {
		out = append(out, llm.Message{Role: llm.System, Content: req.Instructions})
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		return append(out, llm.Message{Role: llm.User, Content: s})
	}
	var items []responsesItem
	_ = json.Unmarshal(req.Input, &items)
	for _, it := range items {
		switch it.Type {
		case "", "message":
			out = append(out, llm.Message{Role: llm.Role(it.Role), Content: contentText(it.Content)})
		case "function_call", "custom_tool_call":
			out = append(out, llm.Message{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}}})
		case "function_call_output", "custom_tool_call_output":
			out = append(out, llm.Message{Role: llm.Tool, ToolCallID: it.CallID, Content: contentText(it.Output)})
		}
	}
	return out
}

// toolNames are the names of the request's tools: a function's name, else
// the tool's type (web_search, local_shell, …).
func toolNames(tools []json.RawMessage) []string {
	var out []string
	for _, raw := range tools {
		var t struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil {
			out = append(out, cmp.Or(t.Name, t.Type))
		}
	}
	return out
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	rec := Recorded{Authorization: r.Header.Get("Authorization"), Body: body, Reply: -1}
	var req responsesRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err == nil {
		rec.Model = req.Model
		rec.Tools = toolNames(req.Tools)
		rec.Messages = req.messages()
	}
	s.answer(w, r, rec, err, func(reply Reply, text string, out *outcome) {
		if !req.Stream {
			resp := newResponse(req.Model)
			resp.finish(reply, text)
			writeJSON(w, http.StatusOK, resp.object())
			return
		}
		s.streamResponse(r.Context(), w, req, reply, text, out)
	})
}

// response is one Responses API response being built.
type response struct {
	id      string
	created int64
	model   string
	status  string
	output  []map[string]any
	usage   map[string]any
}

func newResponse(model string) *response {
	return &response{
		id:      fmt.Sprintf("resp_llmtest%016x", respSeq.Add(1)),
		created: time.Now().Unix(),
		model:   cmp.Or(model, ModelName),
		status:  "in_progress",
		output:  []map[string]any{},
	}
}

// object is the response as the API writes it (the fields clients read).
func (p *response) object() map[string]any {
	var usage any
	if p.usage != nil {
		usage = p.usage
	}
	return map[string]any{
		"id": p.id, "object": "response", "created_at": p.created, "status": p.status,
		"error": nil, "incomplete_details": nil, "model": p.model,
		"output": p.output, "parallel_tool_calls": true, "tool_choice": "auto",
		"usage": usage,
	}
}

// items are the reply's output items, complete.
func (p *response) items(reply Reply) []map[string]any {
	var out []map[string]any
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		out = append(out, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_llmtest%016x", respSeq.Add(1)), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Content, "annotations": []any{}}},
		})
	}
	for _, c := range reply.ToolCalls {
		out = append(out, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_llmtest%016x", respSeq.Add(1)), "status": "completed",
			"call_id": cmp.Or(c.ID, fmt.Sprintf("call_llmtest%016x", respSeq.Add(1))), "name": c.Name, "arguments": c.Arguments,
		})
	}
	return out
}

// finish completes the response in one go (a request not streamed).
func (p *response) finish(reply Reply, prompt string) {
	p.output = p.items(reply)
	p.complete(reply, prompt)
}

func (p *response) complete(reply Reply, prompt string) {
	p.status = "completed"
	u := usageFor(reply, prompt)
	p.usage = map[string]any{
		"input_tokens":          u.PromptTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens},
		"output_tokens":         u.CompletionTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          u.TotalTokens,
	}
}

func (s *Server) streamResponse(ctx context.Context, w http.ResponseWriter, req responsesRequest, reply Reply, prompt string, out *outcome) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	resp := newResponse(req.Model)
	seq := 0
	// event writes one named SSE event; its data carries the type and the
	// sequence number as OpenAI's do.
	event := func(typ string, fields map[string]any) error {
		if ctx.Err() != nil {
			return errAborted
		}
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b); err != nil {
			return errAborted
		}
		if rc.Flush() != nil {
			return errAborted
		}
		return nil
	}
	wait := func(d time.Duration) error { return trickle(ctx, w, rc, d, reply, &out.trickled) }
	// delta waits Delay, then sends one piece.
	delta := func(typ string, fields map[string]any) error {
		if err := wait(time.Duration(reply.Delay)); err != nil {
			return err
		}
		if err := event(typ, fields); err != nil {
			return err
		}
		out.chunks++
		return nil
	}

	err := rc.Flush()
	if err == nil {
		err = wait(time.Duration(reply.FirstDelay))
	}
	if err == nil {
		err = event("response.created", map[string]any{"response": resp.object()})
	}
	if err == nil {
		err = event("response.in_progress", map[string]any{"response": resp.object()})
	}
	for i, item := range resp.items(reply) {
		if err != nil {
			break
		}
		err = streamItem(i, item, reply.ChunkSize, event, delta)
		resp.output = append(resp.output, item)
	}
	if err == nil {
		resp.complete(reply, prompt)
		err = event("response.completed", map[string]any{"response": resp.object()})
	}
	out.clientClosed = err != nil
}

// streamItem sends one output item: added, its text or arguments in
// pieces, the pieces' done events, and the item done.
func streamItem(index int, item map[string]any, chunkSize int, event, delta func(string, map[string]any) error) error {
	id := item["id"].(string)
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	if item["type"] == "message" {
		added["content"] = []any{}
	} else {
		added["arguments"] = ""
	}
	if err := event("response.output_item.added", map[string]any{"output_index": index, "item": added}); err != nil {
		return err
	}
	if item["type"] == "message" {
		text := item["content"].([]any)[0].(map[string]any)["text"].(string)
		at := map[string]any{"item_id": id, "output_index": index, "content_index": 0}
		with := func(kv ...any) map[string]any {
			m := map[string]any{}
			for k, v := range at {
				m[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		if err := event("response.content_part.added", with("part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}})); err != nil {
			return err
		}
		for _, p := range split(text, chunkSize) {
			if err := delta("response.output_text.delta", with("delta", p, "logprobs", []any{})); err != nil {
				return err
			}
		}
		if err := event("response.output_text.done", with("text", text, "logprobs", []any{})); err != nil {
			return err
		}
		if err := event("response.content_part.done", with("part", map[string]any{"type": "output_text", "text": text, "annotations": []any{}})); err != nil {
			return err
		}
	} else {
		args := item["arguments"].(string)
		for _, p := range split(args, chunkSize) {
			if err := delta("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": index, "delta": p}); err != nil {
				return err
			}
		}
		if err := event("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": index, "arguments": args}); err != nil {
			return err
		}
	}
	return event("response.output_item.done", map[string]any{"output_index": index, "item": item})
}
