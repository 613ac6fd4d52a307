package loop

import (
	"context"
	"errors"
	"strings"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop/dirtyjson"
	"github.com/zeroagent/zero/secrets"
)

// errToolsRefused ends a model call whose endpoint refused native tool
// calls under ProtocolAuto: the turn asks again in the JSON protocol.
var errToolsRefused = errors.New("the endpoint refused native tool calls")

// What the text of an answer to a request with native calls turned out to
// be, decided on its first characters.
const (
	modeUndecided = iota
	// modeJSON: an Agent Zero tool request in the text (a model that
	// answers in the JSON protocol although it was offered functions),
	// read as the JSON protocol reads it.
	modeJSON
	// modeText: words, the answer or what the model says before its calls.
	modeText
	// modeTagged: <tool_call> blocks in the text, from a server that does
	// not parse the calls its model writes (Hermes' and Qwen's format).
	modeTagged
)

// textMode decides what a text is by its start; modeUndecided while it is
// too short to tell.
func textMode(text string) int {
	t := strings.TrimLeft(text, " \t\r\n")
	switch {
	case t == "":
		return modeUndecided
	case t[0] == '{' || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
		return modeJSON
	case strings.HasPrefix(t, toolCallTag):
		return modeTagged
	case strings.HasPrefix(toolCallTag, t):
		return modeUndecided
	}
	return modeText
}

const toolCallTag = "<tool_call>"

// promoteAt is how many bytes of text, with no call begun, make the text
// the answer: it is then streamed as the answer as it comes. Shorter text
// waits: if calls follow it was what the model said before them (shown as
// thoughts, as the JSON protocol's thoughts are); if none do, it is the
// answer, shown whole. What a model says before its calls is a sentence
// or two; an answer is rarely that short, and a short one loses nothing
// by coming at once.
const promoteAt = 240

// nativeStream is the state of an answer to a request with native calls.
type nativeStream struct {
	mode     int
	pending  strings.Builder // text not shown yet (modeText)
	promoted bool            // the text is streamed as the answer
	called   bool            // a call began
	// preamble is what the model said before its first call.
	preamble string
	// resp streams the text of a call of the response tool as the answer.
	resp struct {
		call   int
		parser *dirtyjson.Parser
		sent   int
		mask   *secrets.Stream
	}
}

// onNativeContent takes a chunk of the text of an answer to a request with
// native calls.
func (r *replyStream) onNativeContent(ctx context.Context, chunk string) error {
	if r.mode == modeUndecided {
		r.mode = textMode(r.full.String() + chunk)
	}
	if r.mode == modeJSON {
		return r.onContent(ctx, chunk)
	}
	a, h := r.a, r.h
	chunk, err := r.chunkHook(ctx, chunk)
	if err != nil {
		return err
	}
	r.full.WriteString(chunk)
	switch {
	case r.mode != modeText:
		// Undecided or tagged: kept, shown when it is known what it is.
	case r.called:
		a.emit(Event{Type: EventThoughtsDelta, Item: r.view.item, Text: chunk})
	case r.promoted:
		a.emit(Event{Type: EventResponseDelta, Item: r.view.item, Text: chunk})
	default:
		r.pending.WriteString(chunk)
		if r.pending.Len() >= promoteAt {
			r.promoted = true
			a.emit(Event{Type: EventResponseDelta, Item: r.view.item, Text: r.pending.String()})
			r.pending.Reset()
		}
	}
	if r.mode == modeText && h.Has(hooks.ResponseStream) {
		return h.Call(ctx, hooks.ResponseStream, &StreamPayload{Agent: a, Loop: r.ld, Text: r.full.String()})
	}
	return nil
}

// onCall takes a piece of a native call. The text before the first call
// is what the model said before it: its thoughts, and the first line of it
// the step's headline. A call of the response tool streams its text as
// the answer.
func (r *replyStream) onCall(d llm.Delta) error {
	a := r.a
	if !r.called {
		r.called = true
		if r.mode == modeText || r.mode == modeUndecided {
			r.preamble = r.full.String()
			if !r.promoted && r.pending.Len() > 0 {
				a.emit(Event{Type: EventThoughtsDelta, Item: r.view.item, Text: r.pending.String()})
				r.pending.Reset()
			}
			if hl := headline(r.preamble); hl != "" && !r.promoted {
				r.view.headline = hl
				a.emit(Event{Type: EventHeadline, Item: r.view.item, Text: hl})
			}
			r.mode = modeText
		}
	}
	if d.Name == "" || d.Text == "" {
		return nil
	}
	if r.resp.parser == nil && r.resp.sent == 0 {
		if raw := a.tools().byAPI[d.Name]; raw == "response" || d.Name == "response" {
			r.resp.call, r.resp.parser = d.Call, dirtyjson.NewParser()
			if set := a.session.cfg.Secrets; set != nil {
				r.resp.mask = set.NewStream()
			}
		}
	}
	if r.resp.parser == nil || d.Call != r.resp.call {
		return nil
	}
	r.resp.parser.Feed(d.Text)
	args, _ := r.resp.parser.Value().(map[string]any)
	text, ok := args["text"].(string)
	if !ok {
		text, _ = args["message"].(string)
	}
	if len(text) <= r.resp.sent {
		return nil
	}
	grow := text[r.resp.sent:]
	r.resp.sent = len(text)
	if r.resp.mask != nil {
		grow = r.resp.mask.Write(grow)
	}
	if grow != "" {
		a.emit(Event{Type: EventResponseDelta, Item: r.view.item, Text: grow})
	}
	return nil
}

// headline is the first line of what the model said before its calls,
// short, for the step's title; "" when it said nothing.
func headline(preamble string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(preamble), "\n")
	return quote(line)
}
