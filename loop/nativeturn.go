package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop/dirtyjson"
)

// nativeTurn goes on with a turn whose request offered native calls, once
// the answer is in: its calls run in the order given, each result
// answering its call by id; an answer without calls is the answer, as if
// the model had called the response tool.
func (a *Agent) nativeTurn(ctx context.Context, ld *LoopData, st *monologueState, item string, r modelReply) (string, bool, error) {
	calls, tagged, said := r.calls, false, r.text
	if len(calls) == 0 && r.mode == modeTagged {
		calls, said = taggedCalls(r.text)
		tagged = len(calls) > 0
		if !tagged {
			r.mode, r.text = modeText, said
		}
	}
	if len(calls) == 0 {
		return a.textAnswer(ctx, ld, st, item, r)
	}

	// A model (or a server) that sends calls without end is not run
	// without end: the calls past maxCalls are answered as not run.
	if len(calls) > maxCalls {
		a.warn(item, fmt.Sprintf("the model made %d calls in one answer: the first %d run, the others are answered as not run", len(calls), maxCalls))
	}
	reqs := make([]toolRequest, len(calls))
	hist := make([]HistoryCall, len(calls))
	for i, c := range calls {
		reqs[i] = a.nativeRequest(c, i, item, r.finish)
		if i >= maxCalls {
			reqs[i].bad = fmt.Sprintf("[not run: at most %d calls of one answer run]", maxCalls)
			reqs[i].badSaid = ""
		}
		if i == 0 {
			reqs[i].Headline = headline(said) // what the model said before its calls
		}
		// The arguments as the model wrote them go back to it; ones it
		// could not have meant, as an empty object. With secrets, the
		// parsed arguments, masked value by value (a value written with
		// JSON escapes is one too), written again.
		args := strings.TrimSpace(c.Arguments)
		switch {
		case reqs[i].bad != "" || args == "" || args == "null":
			args = "{}"
		case a.session.cfg.Secrets != nil:
			args = string(marshalArgs(reqs[i].Args))
		}
		hist[i] = HistoryCall{ID: reqs[i].CallID, Name: reqs[i].Raw, Args: args}
	}
	if tagged {
		// The server did not parse them: the model sees them again as it
		// wrote them, and their results as the JSON protocol's.
		a.histAddAI(ctx, r.text)
		for i := range reqs {
			reqs[i].CallID = ""
		}
	} else {
		a.histAddCalls(ctx, r.text, hist)
	}

	// A call the turn does not get to (an intervention, an error, the
	// answer given before it) still gets its result, so that the next
	// request pairs every call with one.
	from := a.History.Len()
	a.pending = pendingCalls{reqs: reqs, from: from}
	defer func() {
		a.pending = pendingCalls{}
		a.answerAll(ctx, reqs, from, "[not run: the turn ended before this call]")
	}()
	for _, req := range reqs {
		if req.bad != "" {
			a.histAddToolResult(ctx, req, req.bad)
			if req.badSaid == "" { // past maxCalls: said once, above
				continue
			}
			if err := a.unusableCall(ctx, st, item, r.text, req.badSaid); err != nil {
				return "", false, err
			}
			continue
		}
		tool := a.tool(req.Name)
		if tool == nil {
			a.histAddToolResult(ctx, req, a.toolNotFound(ctx, ld, req.Raw))
			if err := a.unusableCall(ctx, st, item, r.text, fmt.Sprintf("it asked for a tool it does not have (%q)", req.Raw)); err != nil {
				return "", false, err
			}
			continue
		}
		st.unusable = 0
		canonical := req.Raw + " " + dirtyjson.Canonical(req.Args)
		answer, done, err := a.runRequest(ctx, ld, st, item, tool, req, canonical, r.text)
		if err != nil || done {
			return answer, done, err
		}
	}
	return "", false, nil
}

// pendingCalls are the native calls of the turn going on, whose results
// come after the history's message from.
type pendingCalls struct {
	reqs []toolRequest
	from int
}

// maxCalls is how many calls of one answer run: models make a few, a dozen
// when they read many files at once.
const maxCalls = 64

// answerAll adds a result (text) for each native call of reqs that has
// none among the history's messages from from on.
func (a *Agent) answerAll(ctx context.Context, reqs []toolRequest, from int, text string) {
	have := map[string]bool{}
	for _, m := range a.History.since(from) {
		if m.CallID != "" {
			have[m.CallID] = true
		}
	}
	for _, req := range reqs {
		if req.CallID != "" && !have[req.CallID] {
			a.histAddToolResult(ctx, req, text)
		}
	}
}

// textAnswer ends a turn whose answer has no call: its text is the
// answer, given through the response tool as if the model had called it
// (its extension points, its events); an empty answer is not usable.
func (a *Agent) textAnswer(ctx context.Context, ld *LoopData, st *monologueState, item string, r modelReply) (string, bool, error) {
	text := strings.TrimSpace(r.text)
	if text == "" {
		a.histAddAI(ctx, r.text)
		why := "Your reply was empty: call one of the tools, or answer the user in text."
		said := "it was empty"
		if r.finish == "length" {
			why = "Your reply was cut off by the output token limit before it said anything; answer more briefly."
			said = "the output token limit cut it off before it said anything"
		}
		return "", false, a.unusable(ctx, st, item, r.text, why, said)
	}
	a.histAddAI(ctx, r.text)
	st.unusable = 0
	tool := a.tool("response")
	if tool == nil {
		a.emit(Event{Type: EventResponse, Item: item, Text: text})
		return text, true, nil
	}
	req := toolRequest{Raw: "response", Name: "response", Args: map[string]any{"text": text}}
	return a.runTool(ctx, ld, st, tool, req)
}

// nativeRequest turns a native call into a tool request: the API's name
// back to Zero's, the arguments parsed as the JSON protocol's are (no
// arguments, or null, are none). A call that cannot run carries why in bad
// (for the model) and badSaid (for the user).
func (a *Agent) nativeRequest(c llm.ToolCall, i int, item, finish string) toolRequest {
	id := c.ID
	if id == "" {
		id = fmt.Sprintf("call_%s_%d", item, i) // a server that sends none
	}
	raw := c.Name
	if r, ok := a.tools().byAPI[c.Name]; ok {
		raw = r
	}
	req := toolRequest{Raw: raw, CallID: id, Args: map[string]any{}}
	req.Name, req.Method, _ = strings.Cut(raw, ":")
	args := strings.TrimSpace(c.Arguments)
	if args == "" || args == "null" || args == "{}" {
		return req
	}
	v, done, err := dirtyjson.Parse(args)
	switch {
	case err != nil:
		req.bad = "Your call's arguments are not a JSON object, so nothing was run: send them as one."
		req.badSaid = fmt.Sprintf("the arguments of its %s call are not a JSON object", raw)
	case !done && finish == "length":
		req.bad = "Your call was cut off by the output token limit before its arguments were complete, so nothing was run; send a shorter one."
		req.badSaid = fmt.Sprintf("the output token limit cut off its %s call, so nothing was run", raw)
	case !done:
		req.bad = "Your call's arguments ended before the object was closed, so nothing was run; send the whole call again."
		req.badSaid = fmt.Sprintf("the arguments of its %s call were not complete, so nothing was run", raw)
	default:
		if set := a.session.cfg.Secrets; set != nil {
			v, _ = set.MaskValue(v).(map[string]any) // a value the model wrote is an alias from here on
		}
		req.Args = v
	}
	return req
}

// unusableCall counts a call that could not run as an unusable reply: the
// model is told in the call's result, the user in a warning.
func (a *Agent) unusableCall(ctx context.Context, st *monologueState, item, reply, said string) error {
	st.unusable++
	limit := a.session.cfg.Limits.Misformat
	if st.unusable >= limit {
		return fmt.Errorf("%w: %d in a row were not usable (the last: %s; it began: %s). "+
			"Try another model (--model or ZERO_MODEL) and check it with zero doctor",
			ErrMisformat, st.unusable, said, quote(reply))
	}
	a.warn(item, fmt.Sprintf("the model's call was not usable: %s; told it so (%d of %d)", said, st.unusable+1, limit))
	return nil
}

// histAddCalls adds the model's answer with native calls: what it said
// before them and the calls, their arguments holding aliases only.
func (a *Agent) histAddCalls(ctx context.Context, text string, calls []HistoryCall) {
	if text != a.maskedReply {
		text = a.session.mask(text)
	}
	if a.loop != nil {
		a.loop.LastResponse = callsText(text, calls)
	}
	text = a.histAddBefore(ctx, true, text)
	a.History.addEntry(HistoryMessage{AI: true, Content: text, Calls: calls})
}

// taggedCalls reads the calls a server left in the text as Hermes'
// <tool_call>{"name": …, "arguments": …}</tool_call> blocks; rest is the
// text without them.
func taggedCalls(text string) (calls []llm.ToolCall, rest string) {
	var b strings.Builder
	for {
		start := strings.Index(text, toolCallTag)
		if start < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:start])
		body := text[start+len(toolCallTag):]
		end := strings.Index(body, "</tool_call>")
		if end >= 0 {
			text = body[end+len("</tool_call>"):]
			body = body[:end]
		} else {
			text = ""
		}
		m, _, err := dirtyjson.Parse(body)
		if err != nil {
			continue
		}
		name, _ := m["name"].(string)
		args, _ := m["arguments"].(map[string]any)
		if s, ok := m["arguments"].(string); ok { // some write the arguments as a string
			parsed, _, err := dirtyjson.Parse(s)
			if err == nil {
				args = parsed
			}
		}
		if name == "" {
			continue
		}
		if args == nil {
			args = map[string]any{}
		}
		raw, _ := json.Marshal(args)
		calls = append(calls, llm.ToolCall{Name: name, Arguments: string(raw)})
	}
	return calls, b.String()
}
