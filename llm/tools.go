package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
)

// message converts one Message into the request's shape: an assistant
// message with its tool calls, a tool result with its call's id.
func message(i int, m Message) (wireMessage, error) {
	w := wireMessage{Role: string(m.Role), Content: m.Content}
	switch m.Role {
	case User:
		if len(m.Images) > 0 {
			w.Content = contentParts(m.Content, m.Images)
		}
	case System:
	case Assistant:
		if len(m.ToolCalls) > 0 && m.Content == "" {
			w.Content = nil // Ollama refuses "content": null, and "" is not what the model said
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return wireMessage{}, fmt.Errorf("model request: message %d: tool call %d has no id or name: %w", i, j, ErrBadToolCall)
			}
			// Servers parse the arguments they get back; an empty string
			// is not JSON.
			w.ToolCalls = append(w.ToolCalls, wireCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: cmpArgs(tc.Arguments)}})
		}
	case Tool:
		if m.ToolCallID == "" {
			return wireMessage{}, fmt.Errorf("model request: message %d is a tool result without a tool_call_id: %w", i, ErrBadToolCall)
		}
		w.ToolCallID = m.ToolCallID
	default:
		return wireMessage{}, fmt.Errorf("model request: message %d has role %q: %w", i, m.Role, ErrUnknownRole)
	}
	return w, nil
}

// wireMessage is a chat message as the API takes it.
type wireMessage struct {
	Role string `json:"role"`
	// Content is the text, or the parts of a message with images
	// ([]wirePart); nil leaves the key out.
	Content    any        `json:"content,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// wirePart is one part of a message's content: text or an image.
type wirePart struct {
	Type     string   `json:"type"` // "text" or "image_url"
	Text     string   `json:"text,omitempty"`
	ImageURL *wireURL `json:"image_url,omitempty"`
}

type wireURL struct {
	URL string `json:"url"`
}

// contentParts is a user message's content with images: its text (when
// there is any), then each image as a data: URL.
func contentParts(text string, images []Image) []wirePart {
	parts := make([]wirePart, 0, len(images)+1)
	if text != "" {
		parts = append(parts, wirePart{Type: "text", Text: text})
	}
	for _, im := range images {
		parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireURL{URL: im.DataURL()}})
	}
	return parts
}

// toolImagesNote opens the user message that carries the images of the
// tool results before it: the API takes none in a tool message.
const toolImagesNote = "The images the tool results above returned:"

type wireCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func cmpArgs(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// functionJSON is the function definition of s: name, description and
// parameters (an empty object schema when s has none).
func functionJSON(s ToolSpec) (json.RawMessage, error) {
	if !validName(s.Name) {
		return nil, fmt.Errorf("model request: tool name %q: %w (want 1 to 64 of a-z, A-Z, 0-9, _ and -)", s.Name, ErrBadToolCall)
	}
	params := s.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	} else if !json.Valid(params) {
		return nil, fmt.Errorf("model request: tool %s: its parameters are not valid JSON: %w", s.Name, ErrBadToolCall)
	}
	v := struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{s.Name, s.Description, params}
	return json.Marshal(v)
}

// validName reports whether name is a function name every API takes:
// OpenAI's ^[a-zA-Z0-9_-]{1,64}$, which the others accept too.
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// callBuilder assembles the native tool calls of a streamed answer.
// Servers send a call's id and name with its first piece and the
// arguments in pieces after; most number the calls by index, some
// (Gemini's OpenAI endpoint) leave the index out and give every call its
// own id, and some send each call whole in one piece.
type callBuilder struct {
	calls []ToolCall
	args  []strings.Builder
	byIdx map[int64]int // the server's index to a place in calls
}

// piece adds one tool-call delta and returns the place of its call.
func (b *callBuilder) piece(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) int {
	at := -1
	switch {
	case tc.JSON.Index.Valid():
		if i, ok := b.byIdx[tc.Index]; ok {
			at = i
			// A new id at a known index is a new call (servers that count
			// every call as index 0).
			if tc.ID != "" && b.calls[i].ID != "" && tc.ID != b.calls[i].ID {
				at = -1
			}
		}
	case tc.ID == "" && len(b.calls) > 0:
		at = len(b.calls) - 1
	case tc.ID != "" && len(b.calls) > 0 && b.calls[len(b.calls)-1].ID == tc.ID:
		at = len(b.calls) - 1
	}
	if at < 0 {
		at = len(b.calls)
		b.calls = append(b.calls, ToolCall{})
		b.args = append(b.args, strings.Builder{})
		if tc.JSON.Index.Valid() {
			if b.byIdx == nil {
				b.byIdx = map[int64]int{}
			}
			b.byIdx[tc.Index] = at
		}
	}
	c := &b.calls[at]
	if c.ID == "" {
		c.ID = tc.ID
	}
	if tc.Function.Name != "" && c.Name != tc.Function.Name {
		// Some servers repeat the whole name with every piece (kept once);
		// a few send it in pieces.
		c.Name += tc.Function.Name
	}
	b.args[at].WriteString(tc.Function.Arguments)
	return at
}

// result returns the calls, each with its whole arguments.
func (b *callBuilder) result() []ToolCall {
	if len(b.calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(b.calls))
	for i, c := range b.calls {
		c.Arguments = b.args[i].String()
		out[i] = c
	}
	return out
}

// size is the bytes of the calls so far: ids, names and arguments, so a
// server that sends names without end is bounded as one that sends
// arguments without end.
func (b *callBuilder) size() int {
	n := 0
	for i := range b.args {
		n += b.args[i].Len() + len(b.calls[i].ID) + len(b.calls[i].Name)
	}
	return n
}

// refused remembers the endpoints and models that refused tools, for the
// process: asking again would only be refused again.
var refused sync.Map // baseURL + "\x00" + model -> struct{}

// ToolsRefused reports whether this endpoint refused native tool calls for
// this model before (see [Client.RefuseTools]).
func (c *Client) ToolsRefused() bool {
	_, ok := refused.Load(c.opts.BaseURL + "\x00" + c.opts.Model)
	return ok
}

// RefuseTools records that the endpoint does not take native tool calls
// for this model, for every Client of the process with the same endpoint
// and model.
func (c *Client) RefuseTools() {
	refused.Store(c.opts.BaseURL+"\x00"+c.opts.Model, struct{}{})
}

// RefusesTools reports whether err is an endpoint's refusal of the
// request's tools: an HTTP 400 (or 422, 501) whose message names tools or
// function calling, as Ollama ("does not support tools"), vLLM ("auto" tool
// choice requires --enable-auto-tool-choice), llama.cpp ("tools param
// requires --jinja flag") and proxies say it.
func RefusesTools(err error) bool {
	ae, ok := asAPIError(err)
	if !ok || (ae.StatusCode != 400 && ae.StatusCode != 422 && ae.StatusCode != 501 && ae.StatusCode != 404) {
		return false
	}
	msg := strings.ToLower(ae.Message)
	for _, w := range []string{"tool", "function call", "function_call", "functions are not supported"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
