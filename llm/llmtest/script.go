package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zeroagent/zero/llm"
)

// Usage is the token accounting a [Reply] reports in its final chunk.
type Usage = llm.Usage

// Reply is one scripted answer of the fake server.
type Reply struct {
	Match string `json:"match,omitempty"` // if set, used for the first request whose text (all message contents joined) contains Match; replies without Match are used in order
	// Memory marks a reply to one of Zero's memory requests to the utility
	// model (memorizing, a recall query, a consolidation): only those take
	// it, and only those whose text contains Match. Memory requests no
	// such reply matches get MemoryReply.
	Memory         bool     `json:"memory,omitempty"`
	Reasoning      string   `json:"reasoning,omitempty"`       // streamed as reasoning deltas before the content
	ReasoningField string   `json:"reasoning_field,omitempty"` // "reasoning_content" (default) or "reasoning"
	Content        string   `json:"content,omitempty"`
	ChunkSize      int      `json:"chunk_size,omitempty"`   // bytes per delta, never splitting a UTF-8 rune; 0 = 16
	Delay          Duration `json:"delay,omitempty"`        // sleep before each reasoning/content chunk (JSON: "50ms")
	FirstDelay     Duration `json:"first_delay,omitempty"`  // sleep after sending the response headers, before the first chunk (with Status: before the error body)
	HeaderDelay    Duration `json:"header_delay,omitempty"` // sleep before sending the response headers (of any answer), like a server that answers only once the first token is ready
	Status         int      `json:"status,omitempty"`       // answer this HTTP status with an OpenAI-style error body instead of a stream
	Message        string   `json:"message,omitempty"`      // error message for Status
	RetryAfter     string   `json:"retry_after,omitempty"`  // Retry-After header with Status
	CutAfter       int      `json:"cut_after,omitempty"`    // >0: after this many content chunks, abort the connection (no [DONE], no finish_reason)
	StallAfter     int      `json:"stall_after,omitempty"`  // >0: after this many content chunks (or all, if fewer), send no more chunks (only Trickle, if set) but keep the connection open until the client leaves
	HoldAfter      int      `json:"hold_after,omitempty"`   // >0: after this many content chunks, wait until the test calls Server.Release (or the client leaves), then go on; Server.Held reports when a reply got there
	Hangup         bool     `json:"hangup,omitempty"`       // abort the connection before any response, like a reset
	Usage          *Usage   `json:"usage,omitempty"`        // usage in the final chunk; nil = estimated from lengths

	// ToolCalls are native tool calls, streamed after the content as
	// OpenAI does (the first piece of each with its index, id, type and
	// name, then its arguments in ChunkSize pieces) and ending with
	// finish_reason "tool_calls". ToolCallStyle sends them as other
	// servers do.
	ToolCalls []ScriptedCall `json:"tool_calls,omitempty"`
	// ToolCallStyle: "" (OpenAI's), "whole" (each call in one piece, as
	// Ollama and llama.cpp send them), "no_index" (no index field, every
	// call its own id, as Gemini's OpenAI endpoint), "null_arguments" (the
	// first piece carries "arguments": null), "name_pieces" (the name too
	// comes in two pieces).
	ToolCallStyle string `json:"tool_call_style,omitempty"`
	// ToolCallsInText sends the calls the way a server that does not parse
	// them does: as <tool_call>{"name":…,"arguments":…}</tool_call> text in
	// the content (Qwen's and Hermes' template), with finish_reason "stop".
	ToolCallsInText bool `json:"tool_calls_in_text,omitempty"`
	// Raw, when set, is the whole streamed body, sent as it is (a
	// recorded answer: its data: lines, comments and [DONE]); the other
	// fields but the delays are ignored.
	Raw string `json:"raw,omitempty"`

	// Trickle is written every TrickleEvery while the stream waits
	// (FirstDelay, each Delay, a stall; with Status, during FirstDelay before
	// the error body): keep-alive bytes that carry no chunk, such as " ",
	// "\n" or an SSE comment ": ping\n\n". End it with "\n" when real
	// chunks follow, or the next "data:" line no longer starts a line.
	Trickle      string   `json:"trickle,omitempty"`
	TrickleEvery Duration `json:"trickle_every,omitempty"` // interval for Trickle; 0 = 10ms

	// Flood > 0 makes the stream send Flood bytes that never end an SSE
	// event, as fast as the client takes them, and then abort the
	// connection: one endless "data: xxx…" line without a newline when
	// FloodLine is 0, else "data: xxx…\n" lines of FloodLine x's each and
	// never a blank line. It comes after the content chunks (in place of the
	// finish chunk), or with FloodFirst right after the headers, before any
	// chunk. [Recorded].Flooded tells how many of the bytes were written.
	Flood      int  `json:"flood,omitempty"`
	FloodLine  int  `json:"flood_line,omitempty"`
	FloodFirst bool `json:"flood_first,omitempty"`
}

// Script is a list of replies, loadable from JSON with [LoadScript].
type Script struct {
	Replies []Reply `json:"replies"`
	// Repeat > 1 makes [LoadScript] use the replies Repeat times over, in
	// order (a benchmark's turns, each the same exchange); at most
	// MaxScriptReplies replies in all.
	Repeat int `json:"repeat,omitempty"`
}

// MaxScriptReplies bounds a script's replies after Repeat.
const MaxScriptReplies = 1 << 20

// ErrBadScript is returned by [LoadScript] for a script that cannot be used.
var ErrBadScript = errors.New("llmtest: bad script")

// LoadScript reads a JSON script: {"replies":[{...}, ...]}. Unknown fields
// are rejected, so a typo in a field name is not silently ignored.
func LoadScript(path string) (Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return Script{}, fmt.Errorf("load script: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("load script %s: %w: %w", path, ErrBadScript, err)
	}
	for i, r := range s.Replies {
		if err := r.validate(); err != nil {
			return Script{}, fmt.Errorf("load script %s: reply %d: %w: %w", path, i, ErrBadScript, err)
		}
	}
	switch {
	case s.Repeat < 0 || s.Repeat > MaxScriptReplies || len(s.Replies)*s.Repeat > MaxScriptReplies:
		return Script{}, fmt.Errorf("load script %s: %w: repeat %d of %d replies is not within 0 and %d replies", path, ErrBadScript, s.Repeat, len(s.Replies), MaxScriptReplies)
	case s.Repeat > 1:
		once := s.Replies
		s.Replies = make([]Reply, 0, len(once)*s.Repeat)
		for range s.Repeat {
			s.Replies = append(s.Replies, once...)
		}
		s.Repeat = 0
	}
	return s, nil
}

func (r Reply) validate() error {
	switch {
	case r.ReasoningField != "" && r.ReasoningField != "reasoning_content" && r.ReasoningField != "reasoning":
		return fmt.Errorf("reasoning_field %q is neither reasoning_content nor reasoning", r.ReasoningField)
	case r.Status != 0 && (r.Status < 400 || r.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error status", r.Status)
	case r.ToolCallStyle != "" && r.ToolCallStyle != "whole" && r.ToolCallStyle != "no_index" && r.ToolCallStyle != "null_arguments" && r.ToolCallStyle != "name_pieces":
		return fmt.Errorf("tool_call_style %q is none of whole, no_index, null_arguments and name_pieces", r.ToolCallStyle)
	case r.ChunkSize < 0, r.CutAfter < 0, r.StallAfter < 0, r.Delay < 0, r.FirstDelay < 0, r.HeaderDelay < 0, r.TrickleEvery < 0,
		r.Flood < 0, r.FloodLine < 0:
		return errors.New("chunk_size, cut_after, stall_after, delay, first_delay, header_delay, trickle_every, flood and flood_line must not be negative")
	}
	return nil
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("50ms"); a bare number is taken as nanoseconds, like time.Duration.
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "50ms".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON accepts "50ms" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration %s: want a string like \"50ms\"", b)
	}
	*d = Duration(n)
	return nil
}
