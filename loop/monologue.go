package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop/dirtyjson"
	"github.com/zeroagent/zero/secrets"
)

// monologueState holds the counters that bound a monologue.
type monologueState struct {
	unusable      int    // consecutive replies without a usable tool request
	repeats       int    // consecutive repeats of the same request
	lastCanonical string // the previous request, canonical JSON
	lastResult    string // the previous tool result
	critical      int    // unexpected errors retried so far
}

// processChain is Agent Zero's _process_chain: the user message, the
// monologue, and process_chain_end. A message that arrives after the last
// checkpoint of a monologue starts the next one, so none is lost.
func (a *Agent) processChain(ctx context.Context, in Input) (string, error) {
	a.histAddUser(ctx, in, false)
	for {
		answer, err := a.monologue(ctx)
		if err != nil {
			return answer, err
		}
		if pending := a.session.takeIntervention(); len(pending) > 0 {
			for _, m := range pending {
				a.emit(Event{Type: EventIntervention, Text: m.Text, Images: refs(m.Images)})
				a.histAddUser(ctx, m, false)
			}
			continue
		}
		if err := a.call(ctx, hooks.ProcessChainEnd, &AgentPayload{Agent: a, Response: answer}); err != nil {
			return answer, err
		}
		return answer, nil
	}
}

// monologue runs message-loop turns until a tool breaks the loop.
func (a *Agent) monologue(ctx context.Context) (answer string, err error) {
	ld := newLoopData(a.lastUserMessage)
	a.loop = ld
	a.session.setActive(a)
	defer a.session.setActive(a.Superior)
	defer func() {
		if ctx.Err() == nil { // no extensions post mortem, as Agent Zero
			if herr := a.call(ctx, hooks.MonologueEnd, &LoopPayload{Agent: a, Loop: ld}); herr != nil && err == nil {
				err = herr
			}
		}
	}()
	a.refreshTools(ctx)
	if err := a.call(ctx, hooks.MonologueStart, &LoopPayload{Agent: a, Loop: ld}); err != nil {
		return "", err
	}
	st := &monologueState{}
	for {
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		ld.Iteration++
		ld.ParamsTemporary = map[string]any{}
		item := a.session.newItem("msg")
		it := ld.Iteration
		a.emit(Event{Type: EventTurnStarted, Item: item, Iteration: &it})

		err := a.call(ctx, hooks.MessageLoopStart, &LoopPayload{Agent: a, Loop: ld})
		if err == nil {
			err = a.checkIntervention(ctx, "")
		}
		var done bool
		if err == nil {
			answer, done, err = a.turn(ctx, ld, st, item)
		}
		if ctx.Err() == nil {
			a.finalTurn = err == nil && done
			if herr := a.call(ctx, hooks.MessageLoopEnd, &LoopPayload{Agent: a, Loop: ld}); herr != nil && err == nil {
				err = herr
			}
		}
		if err == nil && done {
			return answer, nil
		}
		if err != nil {
			if err := a.handleError(ctx, st, item, err); err != nil {
				return "", err
			}
		}
	}
}

// handleError is the error policy: interventions continue the loop,
// repairable errors go back to the model, anything else is retried a
// bounded number of times and then ends the run.
func (a *Agent) handleError(ctx context.Context, st *monologueState, item string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if overflow, err := a.recoverOverflow(ctx, item, err); overflow {
		return err
	}
	var rep *RepairableError
	var shown *shownError
	said := errors.As(err, &shown) // a failed tool's tool_result said it
	switch {
	case errors.Is(err, ErrIntervened):
		st.repeats, st.lastCanonical = 0, "" // "do that again" is not a loop
		return nil
	case errors.Is(err, ErrMisformat), errors.Is(err, ErrRepeat), errors.Is(err, ErrContextFull):
		a.emit(Event{Type: EventError, Item: item, Text: err.Error()})
		return err
	case errors.As(err, &rep):
		p := &ErrorFormatPayload{Agent: a, Message: a.session.mask(err.Error())}
		if herr := a.call(ctx, hooks.ErrorFormat, p); herr != nil {
			return herr
		}
		if !said {
			a.warn(item, p.Message)
		}
		a.histAddWarning(ctx, p.Message)
		return nil
	}
	if !said {
		a.emit(Event{Type: EventError, Item: item, Text: err.Error()})
	}
	var api *llm.APIError
	if errors.As(err, &api) && !api.Retryable() || errors.Is(err, llm.ErrUnreachable) {
		// A rejected key or an unknown model does not heal by retrying, nor
		// does a server that is not running (the client tried it again).
		return err
	}
	if st.critical >= *a.session.cfg.Limits.CriticalRetries {
		return err
	}
	st.critical++
	msg := a.session.mask(err.Error())
	p := &ErrorFormatPayload{Agent: a, Message: msg}
	if herr := a.call(ctx, hooks.ErrorFormat, p); herr == nil {
		msg = p.Message
	}
	a.histAddWarning(ctx, a.mustRender("fw.msg_critical_error.md", map[string]any{"error_message": msg}))
	return sleep(ctx, a.session.cfg.Limits.CriticalRetryDelay)
}

// checkIntervention delivers pending user messages: what the agent produced
// so far (progress) is kept in history, the messages are added, and
// ErrIntervened makes the loop start a new turn.
func (a *Agent) checkIntervention(ctx context.Context, progress string) error {
	msgs := a.session.takeIntervention()
	if len(msgs) == 0 {
		return nil
	}
	a.deliver(ctx, progress, msgs)
	return ErrIntervened
}

func (a *Agent) deliver(ctx context.Context, progress string, msgs []Input) {
	if tool := a.loop.CurrentTool; tool != nil {
		if out := strings.TrimSpace(tool.maskedOutput()); out != "" {
			a.histAddToolResult(ctx, toolRequest{Raw: tool.Name, CallID: tool.callID}, out)
		}
	}
	if p := a.pending; p.reqs != nil {
		// The native calls of the answer get their results before the
		// message, so each stays paired with its call.
		a.answerAll(ctx, p.reqs, p.from, "[not run: the user sent a message first]")
	}
	if strings.TrimSpace(progress) != "" {
		a.histAddAI(ctx, progress)
	}
	for _, m := range msgs {
		a.emit(Event{Type: EventIntervention, Text: m.Text, Images: refs(m.Images)})
		a.histAddUser(ctx, m, true)
	}
}

// turn is one message-loop iteration: build the prompt, stream the model's
// reply, and run the tool it asks for.
func (a *Agent) turn(ctx context.Context, ld *LoopData, st *monologueState, item string) (string, bool, error) {
	a.native.Store(a.nativeCalls())
	ld.refitted = false
	msgs, err := a.preparePrompt(ctx, ld)
	if err != nil {
		return "", false, err
	}
	if err := a.call(ctx, hooks.BeforeMainLLMCall, &LoopPayload{Agent: a, Loop: ld}); err != nil {
		return "", false, err
	}
	if err := a.session.waitWhilePaused(ctx); err != nil {
		return "", false, err
	}
	if err := a.checkIntervention(ctx, ""); err != nil {
		return "", false, err
	}
	r, err := a.callModel(ctx, ld, msgs, item)
	if errors.Is(err, errImagesRefused) {
		// The endpoint refused the images: this turn again without them
		// (sees no longer holds).
		if msgs, err = a.preparePrompt(ctx, ld); err != nil {
			return "", false, err
		}
		r, err = a.callModel(ctx, ld, msgs, item)
	}
	if errors.Is(err, errToolsRefused) {
		// The endpoint refused native calls: this turn again, in Agent
		// Zero's JSON protocol (nativeCalls no longer picks native).
		a.native.Store(false)
		if msgs, err = a.preparePrompt(ctx, ld); err != nil {
			return "", false, err
		}
		r, err = a.callModel(ctx, ld, msgs, item)
	}
	if err != nil {
		return "", false, err
	}
	for _, point := range []string{hooks.ReasoningStreamEnd, hooks.ResponseStreamEnd} {
		if err := a.call(ctx, point, &LoopPayload{Agent: a, Loop: ld}); err != nil {
			return "", false, err
		}
		if err := a.checkIntervention(ctx, r.text); err != nil {
			return "", false, err
		}
	}

	if r.native {
		if root, _ := r.parsed.(map[string]any); r.mode == modeJSON && root["tool_name"] == nil && len(r.calls) == 0 {
			r.mode, r.text = modeText, r.full // JSON, but no tool request in it: the answer, whole
		}
		if len(r.calls) > 0 || r.mode != modeJSON {
			return a.nativeTurn(ctx, ld, st, item, r)
		}
	}
	a.histAddAI(ctx, r.text) // whatever the model said stays in history
	req, verr := validateToolRequest(r.parsed)
	switch {
	case verr != nil:
		said := "it held no JSON tool request"
		if _, ok := r.parsed.(map[string]any); ok {
			said = "its tool request is malformed: " + verr.Error()
		}
		return "", false, a.unusable(ctx, st, item, r.text, a.mustRender("fw.msg_misformat.md", nil)+"\n"+verr.Error(), said)
	case !r.done:
		// The object never closed: the reply was cut off (by the token
		// limit, a dropped stream or a model that stopped early), and
		// running the repaired request could run half a command.
		why := "Your reply ended before its JSON tool request was closed, so nothing was run; send the whole request again."
		said := "it ended before its tool request was complete, so nothing was run"
		if r.finish == "length" {
			why = "Your reply was cut off by the output token limit before the tool request was complete; send a shorter one."
			said = "the output token limit cut it off before its tool request was complete, so nothing was run"
		}
		return "", false, a.unusable(ctx, st, item, r.text, a.mustRender("fw.msg_misformat.md", nil)+"\n"+why, said)
	}
	tool := a.tool(req.Name)
	if tool == nil {
		return "", false, a.unusable(ctx, st, item, r.text, a.toolNotFound(ctx, ld, req.Raw),
			fmt.Sprintf("it asked for a tool it does not have (%q)", req.Raw))
	}
	st.unusable = 0
	return a.runRequest(ctx, ld, st, item, tool, req, dirtyjson.Canonical(r.parsed), r.text)
}

// runRequest runs a usable tool request, unless it repeats the last one
// (canonical is the request as canonical JSON, reply what the model said).
func (a *Agent) runRequest(ctx context.Context, ld *LoopData, st *monologueState, item string, tool Tool, req toolRequest, canonical, reply string) (string, bool, error) {
	repeat := canonical == st.lastCanonical
	if repeat && !repeatSafe(tool, req) {
		return "", false, a.repeated(ctx, st, item, req, reply)
	}
	if !repeat {
		st.repeats = 0
	}
	st.lastCanonical = canonical
	prev := st.lastResult
	answer, done, err := a.runTool(ctx, ld, st, tool, req)
	if err == nil && !done && repeat {
		if st.lastResult == prev { // polling that shows no change any more
			return "", false, a.repeated(ctx, st, item, req, reply)
		}
		st.repeats = 0
	}
	return answer, done, err
}

// RepeatSafe is implemented by tools some of whose calls are meant to be
// repeated, such as reading more output of a running command. An identical
// request for such a call runs again, and counts as a repeat only when it
// also brings the same result.
type RepeatSafe interface {
	RepeatSafe(method string, args map[string]any) bool
}

func repeatSafe(t Tool, req toolRequest) bool {
	rs, ok := t.(RepeatSafe)
	return ok && rs.RepeatSafe(req.Method, req.Args)
}

// repeated handles a repeated tool request: Agent Zero's warning, or the
// end of the run once Limits.Repeat identical requests came in a row. The
// warning is the model's; the user is told what happened.
func (a *Agent) repeated(ctx context.Context, st *monologueState, item string, req toolRequest, reply string) error {
	st.repeats++
	limit := a.session.cfg.Limits.Repeat
	if st.repeats+1 >= limit {
		return fmt.Errorf("%w: it asked for %s %d times in a row; last reply began: %s. "+
			"The task may need another approach: say what to do differently, or try another model (--model)",
			ErrRepeat, req.Raw, st.repeats+1, quote(reply))
	}
	a.warn(item, fmt.Sprintf("the model asked for the same %s call again, so it was not run; told it to do something else (%d of %d)",
		req.Raw, st.repeats+1, limit))
	if req.CallID != "" { // a native call is answered by its result
		a.histAddToolResult(ctx, req, a.mustRender("fw.msg_repeat.md", nil))
		return nil
	}
	a.histAddWarning(ctx, a.mustRender("fw.msg_repeat.md", nil))
	return nil
}

// unusable handles a reply that holds no usable tool request: warning is
// what the model is told (the profile's fw.* text), said what the user is
// shown, in plain words; once Limits.Misformat such replies came in a row
// the run ends with an error that says what to do.
func (a *Agent) unusable(ctx context.Context, st *monologueState, item, reply, warning, said string) error {
	st.unusable++
	limit := a.session.cfg.Limits.Misformat
	if st.unusable >= limit {
		return fmt.Errorf("%w: %d in a row were not usable (the last: %s; it began: %s). "+
			"Zero needs a model that answers in its JSON tool format: try another one (--model or ZERO_MODEL) "+
			"and check it with zero doctor",
			ErrMisformat, st.unusable, said, quote(reply))
	}
	a.warn(item, fmt.Sprintf("the model's reply was not usable: %s; asked it again (%d of %d). It began: %s",
		said, st.unusable+1, limit, quote(reply)))
	a.histAddWarning(ctx, warning)
	return nil
}

// preparePrompt is Agent Zero's prepare_prompt: system prompt, history,
// and extras appended as a last user message.
//
// This is where the request to the chat model is made, so it is where
// secrets are masked for it, once: the system prompt (once per text), the
// extras, and whatever an extension changed; the history's messages hold
// aliases already.
func (a *Agent) preparePrompt(ctx context.Context, ld *LoopData) ([]llm.Message, error) {
	s := a.session
	if err := a.call(ctx, hooks.MessageLoopPromptsBefore, &LoopPayload{Agent: a, Loop: ld}); err != nil {
		return nil, err
	}
	ld.System = ld.System[:0:0]
	if err := a.call(ctx, hooks.SystemPrompt, &SystemPromptPayload{Agent: a, Loop: ld, System: &ld.System}); err != nil {
		return nil, err
	}
	// The history's state first, then its output: if a summary comes in
	// between, the two differ and outputCap counts what is sent.
	a.sent.size = a.History.size()
	ld.HistoryOutput = a.History.Output()
	// What History gave out holds aliases only: its messages are not
	// masked again below unless an extension changed them. The extensions
	// get a copy (the agent's, reused turn after turn), so one that writes
	// into it in place changes neither the history nor what is known to be
	// masked.
	var hist []llm.Message
	if s.cfg.Secrets != nil {
		if cap(a.histCopy) < len(ld.HistoryOutput) { // room for the turns to come
			a.histCopy = make([]llm.Message, 0, 2*len(ld.HistoryOutput)+32)
		}
		a.histCopy = append(a.histCopy[:0], ld.HistoryOutput...)
		hist, ld.HistoryOutput = ld.HistoryOutput, a.histCopy[:len(a.histCopy):len(a.histCopy)]
	}
	if err := a.call(ctx, hooks.MessageLoopPromptsAfter, &LoopPayload{Agent: a, Loop: ld}); err != nil {
		return nil, err
	}
	msgs := make([]llm.Message, 0, len(ld.HistoryOutput)+2)
	msgs = append(msgs, llm.Message{Role: llm.System, Content: a.maskSystem(strings.Join(ld.System, "\n\n"))})
	if a.native.Load() {
		msgs = append(msgs, forNative(s.maskMessages(ld.HistoryOutput, hist), a.tools(), s.join)...)
	} else {
		msgs = append(msgs, forJSON(s.maskMessages(ld.HistoryOutput, hist), s.join)...)
	}
	var extras string
	if ld.ExtrasPersistent.Len()+ld.ExtrasTemporary.Len() > 0 {
		extras = s.mask(a.mustRender("agent.context.extras.md", map[string]any{
			"extras": renderExtras(ld.ExtrasPersistent, ld.ExtrasTemporary),
		}))
		if last := &msgs[len(msgs)-1]; last.Role == llm.User {
			last.Content = s.join(last.Content, "\n\n", extras) // merged like consecutive history messages
		} else {
			msgs = append(msgs, llm.Message{Role: llm.User, Content: extras})
		}
	}
	a.sent.extras = extras
	msgs = a.fitImages("", msgs)
	if err := a.checkFits(msgs[0].Content, extras, len(msgs)); err != nil {
		// The check counted the system prompt, which may lower the
		// history's limit: compress now, once more, before refusing, as
		// the built-in wait would have (unless it was disabled or replaced).
		if a.builtinWaits() && a.historyOverLimit() && a.compressHistory(ctx) {
			return a.preparePrompt(ctx, ld)
		}
		// Within its limit, the history may still leave too little beside
		// the system prompt, the extras and what the API adds to each of
		// many short messages: compress it by what is over, once a turn.
		var full *ContextFullError
		if errors.As(err, &full) && a.builtinWaits() && !ld.refitted {
			ld.refitted = true
			over := full.Prompt - full.Window
			if h := a.History.Tokens(); h > over && a.compressHistoryTo(ctx, h-over) {
				return a.preparePrompt(ctx, ld)
			}
		}
		return nil, err
	}
	ld.ExtrasTemporary.Clear()
	return msgs, nil
}

// streamView remembers what of the streamed tool request was already
// emitted, so only growth is sent.
type streamView struct {
	item        string
	thoughtIdx  int
	thoughtOff  int
	thoughtsAny bool
	headline    string
	// headlineOpen: the headline's value is still being read.
	headlineOpen bool
	response     int
}

// modelReply is what callModel got: the reply to keep in history and the
// tool request parsed from it.
type modelReply struct {
	text   string
	parsed any
	done   bool   // the request object was closed
	finish string // the model's finish reason ("stop", "length", ...)
	// native: the request offered native calls; calls are the answer's,
	// mode what its text turned out to be (see replyStream.mode).
	native bool
	calls  []llm.ToolCall
	mode   int
	full   string // the whole text, of which text may be the request only
}

// callModel streams the model's reply, emitting reasoning, thoughts,
// headline and response deltas as they arrive, and stops the stream at the
// first complete, valid tool request.
func (a *Agent) callModel(ctx context.Context, ld *LoopData, msgs []llm.Message, item string) (modelReply, error) {
	s := a.session
	if err := s.checkBudget(); err != nil {
		return modelReply{}, err
	}
	cp := &ModelCallPayload{Agent: a, Messages: msgs} // masked by preparePrompt
	if a.hooks().Has(hooks.ChatModelCallBefore) {
		var clean []llm.Message
		if s.cfg.Secrets != nil {
			clean = slices.Clone(msgs) // an extension may change them in place
		}
		if err := a.call(ctx, hooks.ChatModelCallBefore, cp); err != nil {
			return modelReply{}, err
		}
		cp.Messages = s.maskMessages(cp.Messages, clean) // what an extension put there
	}
	r := &replyStream{a: a, ld: ld, h: a.hooks(), parser: dirtyjson.NewParser(), view: streamView{item: item}, native: a.native.Load()}
	req := llm.Request{Messages: cp.Messages}
	if a.native.Load() {
		req.Tools = a.tools().specs
	}
	req.MaxOutputTokens = a.outputCap(req)
	if set := s.cfg.Secrets; set != nil {
		r.reasoningMask, r.contentMask = set.NewStream(), set.NewStream()
	}
	pctx, endPhase := s.beginPhase(ctx)
	res, err := a.setup.Model.Stream(pctx, req, func(d llm.Delta) error {
		if err := context.Cause(pctx); err != nil {
			return err
		}
		return r.delta(pctx, d)
	})
	intervened := Intervened(pctx)
	endPhase()
	if err == nil {
		err = r.flush(ctx, true)
	} else {
		r.flush(ctx, false)
	}

	parser := r.parser
	reply := r.full.String()
	if parser.Done() {
		reply = parser.Consumed()
	}
	if r.contentMask != nil && !r.rewritten {
		a.maskedReply = reply // what the streams gave: aliases only (a part of it too)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil: // cancelled: keep what the model said
			if strings.TrimSpace(reply) != "" {
				a.histAddAI(ctx, reply)
			}
			return modelReply{}, context.Cause(ctx)
		case intervened:
			a.deliver(ctx, reply, s.takeIntervention())
			return modelReply{}, ErrIntervened
		case a.setup.Vision != VisionOn && hasImages(cp.Messages) && llm.RefusesImages(err):
			a.refuseImages(item, err)
			return modelReply{}, errImagesRefused
		case a.native.Load() && a.setup.ToolProtocol != ProtocolNative && llm.RefusesTools(err):
			// Remembered by the model's client for its endpoint and
			// model, else by the agent.
			if ts, ok := a.setup.Model.(modelToolSupport); ok {
				ts.RefuseTools()
			}
			a.toolsRefused.Store(true)
			a.warn(item, fmt.Sprintf("the model's endpoint refused native tool calls (%v): using Agent Zero's JSON protocol with this model from now on", err))
			return modelReply{}, errToolsRefused
		}
		return modelReply{}, fmt.Errorf("model call: %w", err)
	}
	a.emitUsage(item, cp.Messages, res)
	if a.hooks().Has(hooks.ChatModelCallAfter) { // the whole reply, as the model sent it, masked for them
		cp.Response, cp.Reasoning, cp.after = s.mask(res.Content), s.mask(res.Reasoning), true
		if err := a.call(ctx, hooks.ChatModelCallAfter, cp); err != nil {
			return modelReply{}, err
		}
	}
	if reply == "" && res.Content != "" {
		reply = s.mask(res.Content) // a model that streamed nothing but answered
		parser.Feed(reply)
		a.maskedReply = reply
		if r.mode == modeUndecided {
			r.mode = textMode(reply)
		}
	}
	return modelReply{text: reply, parsed: parser.Value(), done: parser.Done(), finish: res.FinishReason,
		native: a.native.Load(), calls: res.ToolCalls, mode: r.mode, full: cmp.Or(r.full.String(), reply)}, nil
}

// replyStream is the state of one streamed model reply.
type replyStream struct {
	a         *Agent
	ld        *LoopData
	h         *hooks.Set
	parser    *dirtyjson.Parser
	full      strings.Builder // the answer so far
	reasoning strings.Builder
	view      streamView
	// reasoningMask and contentMask mask secrets in what the model
	// streams (Config.Secrets; nil without): a hostile or confused model
	// may write a value, even split across deltas.
	reasoningMask, contentMask *secrets.Stream
	// rewritten is set when a response_stream_chunk extension changed a
	// chunk: its text is masked alone, so a value it joins with the
	// model's text may be whole only in the answer, which history then
	// masks again (see histAddAI).
	rewritten bool
	// native is set when the request offered native calls (nativestream.go).
	native bool
	nativeStream
}

// delta takes one streamed delta: masked first, then the extensions, the
// events and the parser see it.
func (r *replyStream) delta(ctx context.Context, d llm.Delta) error {
	chunk := d.Text
	if d.Kind == llm.ToolCallArgs {
		return r.onCall(d)
	}
	if d.Kind == llm.Reasoning {
		if r.reasoningMask != nil {
			if chunk = r.reasoningMask.Write(chunk); chunk == "" {
				return nil
			}
		}
		return r.onReasoning(ctx, chunk)
	}
	if r.contentMask != nil {
		if chunk = r.contentMask.Write(chunk); chunk == "" {
			return nil
		}
	}
	return r.content(ctx, chunk)
}

// content takes a masked chunk of the answer's text.
func (r *replyStream) content(ctx context.Context, chunk string) error {
	if r.native {
		return r.onNativeContent(ctx, chunk)
	}
	return r.onContent(ctx, chunk)
}

// flush ends the secrets masks. When the stream went well (live), what they
// held back goes through the usual steps; otherwise it is only kept.
func (r *replyStream) flush(ctx context.Context, live bool) error {
	if r.contentMask == nil {
		return nil
	}
	reasoning, content := r.reasoningMask.Flush(), r.contentMask.Flush()
	if !live {
		r.reasoning.WriteString(reasoning)
		r.full.WriteString(content)
		r.parser.Feed(content)
		return nil
	}
	if reasoning != "" {
		if err := r.onReasoning(ctx, reasoning); err != nil {
			return err
		}
	}
	if content != "" && !r.parser.Done() { // after the request it is not needed
		if err := r.content(ctx, content); err != nil && !errors.Is(err, llm.ErrStop) {
			return err
		}
	}
	return nil
}

func (r *replyStream) onReasoning(ctx context.Context, chunk string) error {
	a, h := r.a, r.h
	if h.Has(hooks.ReasoningStreamChunk) {
		p := &StreamChunkPayload{Agent: a, Loop: r.ld, Chunk: chunk, Full: r.reasoning.String() + chunk}
		if err := h.Call(ctx, hooks.ReasoningStreamChunk, p); err != nil {
			return err
		}
		if p.Chunk != chunk {
			chunk = a.session.mask(p.Chunk) // what an extension put there
		}
	}
	r.reasoning.WriteString(chunk)
	if chunk != "" {
		a.emit(Event{Type: EventReasoningDelta, Item: r.view.item, Text: chunk})
	}
	if h.Has(hooks.ReasoningStream) {
		return h.Call(ctx, hooks.ReasoningStream, &StreamPayload{Agent: a, Loop: r.ld, Text: r.reasoning.String()})
	}
	return nil
}

// onContent takes a chunk of the answer; it returns llm.ErrStop once a
// complete, valid tool request has arrived.
func (r *replyStream) onContent(ctx context.Context, chunk string) error {
	a, h, parser := r.a, r.h, r.parser
	chunk, err := r.chunkHook(ctx, chunk)
	if err != nil {
		return err
	}
	r.full.WriteString(chunk)
	parser.Feed(chunk)
	root, _ := parser.Value().(map[string]any)
	r.view.headlineOpen = parser.Reading("headline")
	a.emitStreamed(root, &r.view)
	if root != nil && h.Has(hooks.ResponseStream) && r.full.Len() >= 25 {
		if err := h.Call(ctx, hooks.ResponseStream, &StreamPayload{Agent: a, Loop: r.ld, Text: r.full.String(), Parsed: root}); err != nil {
			return err
		}
	}
	if parser.Done() {
		if _, err := validateToolRequest(root); err == nil {
			return llm.ErrStop
		}
	}
	return nil
}

// chunkHook runs the response_stream_chunk extensions on a chunk of the
// answer and returns the chunk they leave (masked, when one rewrote it).
func (r *replyStream) chunkHook(ctx context.Context, chunk string) (string, error) {
	if !r.h.Has(hooks.ResponseStreamChunk) {
		return chunk, nil
	}
	p := &StreamChunkPayload{Agent: r.a, Loop: r.ld, Chunk: chunk, Full: r.full.String() + chunk}
	if err := r.h.Call(ctx, hooks.ResponseStreamChunk, p); err != nil {
		return "", err
	}
	if p.Chunk != chunk { // what an extension put there
		r.rewritten, chunk = true, r.a.session.mask(p.Chunk)
	}
	return chunk, nil
}

func (a *Agent) emitUsage(item string, msgs []llm.Message, res llm.Result) {
	a.session.fitted(a) // a call that went through ends a run of overflows
	u := Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens, TotalTokens: res.Usage.TotalTokens}
	if u == (Usage{}) {
		// The system prompt (and the functions offered) as the history's
		// limit counts it: one count, kept in one place.
		u = Usage{PromptTokens: a.systemTokens(msgs[0].Content) + a.History.Tokens(),
			CompletionTokens: a.session.cfg.CountTokens(res.Content), Estimated: true}
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	a.chatUsage(item, u, res.Usage)
}

// emitStreamed emits the growth of thoughts, headline and, for the response
// tool, the answer text.
func (a *Agent) emitStreamed(root map[string]any, v *streamView) {
	if root == nil {
		return
	}
	switch t := root["thoughts"].(type) {
	case string:
		if len(t) > v.thoughtOff {
			a.emit(Event{Type: EventThoughtsDelta, Item: v.item, Text: t[v.thoughtOff:]})
			v.thoughtOff = len(t)
		}
	case []any:
		for v.thoughtIdx < len(t) {
			s, _ := t[v.thoughtIdx].(string)
			if len(s) > v.thoughtOff {
				text := s[v.thoughtOff:]
				if v.thoughtOff == 0 && v.thoughtsAny {
					text = "\n" + text
				}
				a.emit(Event{Type: EventThoughtsDelta, Item: v.item, Text: text})
				v.thoughtOff, v.thoughtsAny = len(s), true
			}
			if v.thoughtIdx == len(t)-1 {
				break
			}
			v.thoughtIdx, v.thoughtOff = v.thoughtIdx+1, 0
		}
	}
	// The headline goes out once, whole: faces show it as the step's
	// title, and every partial ("Running ", "Running the ") would be a
	// step of its own there.
	if hl, ok := root["headline"].(string); ok && hl != v.headline && !v.headlineOpen {
		v.headline = hl
		a.emit(Event{Type: EventHeadline, Item: v.item, Text: hl})
	}
	if name, _ := root["tool_name"].(string); name == "response" {
		args, _ := root["tool_args"].(map[string]any)
		text, ok := args["text"].(string)
		if !ok {
			text, _ = args["message"].(string)
		}
		if len(text) > v.response {
			a.emit(Event{Type: EventResponseDelta, Item: v.item, Text: text[v.response:]})
			v.response = len(text)
		}
	}
}

// runTool executes the requested tool with its extension points, events
// and intervention checkpoints, in Agent Zero's order: the arguments are
// shown (tool_output_update per argument, so an extension can mask them),
// then tool_execute_before may rewrite or block them, the tool runs, and
// tool_execute_after sees the result. Secrets' aliases in the arguments
// become values only for the tool itself, after the extensions and the
// approval gate; its output, result and error are masked before anything
// else sees them (see secrets.go).
func (a *Agent) runTool(ctx context.Context, ld *LoopData, st *monologueState, tool Tool, req toolRequest) (string, bool, error) {
	call := &ToolCall{ID: a.session.newItem("tool"), Name: req.Name, Method: req.Method, Args: req.Args, Agent: a, Loop: ld, callID: req.CallID}
	ld.CurrentTool = call
	defer func() { ld.CurrentTool = nil }()
	if err := a.checkIntervention(ctx, ""); err != nil {
		return "", false, err
	}
	shown, err := a.showArgs(ctx, req)
	if err != nil {
		return "", false, err
	}
	title := req.Headline
	if title == "" {
		title = req.Raw
	}
	kind := KindOf(tool, req.Method)
	a.emit(Event{Type: EventToolCall, Item: call.ID, Tool: req.Name, Method: req.Method, Args: shown, Kind: kind, Title: title})
	if err := a.checkIntervention(ctx, ""); err != nil {
		a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: ToolCancelled, Text: "not run: the user sent a message"})
		return "", false, err
	}
	readOnly := ChangesNothing(tool, req.Method)
	bp := &ToolBeforePayload{Agent: a, Loop: ld, ToolName: req.Name, Method: req.Method, Kind: kind, ReadOnly: readOnly, Args: req.Args}
	if err := a.call(ctx, hooks.ToolExecuteBefore, bp); err != nil {
		return "", false, err
	}
	if set := a.session.cfg.Secrets; set != nil && bp.Block == "" {
		// The gate may ask a person: it shows aliases, whatever an
		// extension did, and is not asked about a call that cannot run.
		bp.Args, _ = set.MaskValue(bp.Args).(map[string]any)
		_, bp.Block = a.expandArgs(bp.Args)
	}
	if gate := a.session.currentGate(); gate != nil && bp.Block == "" {
		// The gate decides about the call that runs: what the tool is and
		// does is not the extensions' to change.
		bp.ToolName, bp.Method, bp.Kind, bp.ReadOnly = req.Name, req.Method, kind, readOnly
		if err := gate(ctx, bp); err != nil {
			return "", false, err
		}
	}
	call.Args = bp.Args
	if bp.Block == "" {
		call.Args, bp.Block = a.toolArgs(tool, bp.Args) // the values, for the tool only (an AliasKeeper keeps aliases)
	}
	if bp.Block != "" {
		a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: ToolFailed, Text: bp.Block})
		a.histAddToolResult(ctx, req, a.session.mask(bp.Block)) // an extension's or the gate's words
		st.lastResult = bp.Block
		return "", false, nil
	}
	if ctx.Err() != nil { // cancelled while extensions ran: do not start anything
		why := CancelReason(context.Cause(ctx))
		a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: ToolCancelled, Text: "not run: " + why})
		a.histAddToolResult(ctx, req, a.session.mask("[not run: "+why+"]"))
		return "", false, context.Cause(ctx)
	}

	a.emit(Event{Type: EventToolStarted, Item: call.ID, Tool: req.Name})
	pctx, endPhase := a.session.beginPhase(ctx)
	res, err := tool.Execute(pctx, call)
	intervened := Intervened(pctx)
	endPhase()
	if a.session.cfg.Secrets != nil {
		fctx, cancel := cleanupCtx(ctx)
		call.flushOutput(fctx)
		cancel()
		a.session.maskResult(&res)
		err = a.session.maskError(err)
	}
	ld.CurrentTool = nil

	if ctx.Err() != nil { // cancelled: record what the tool did, then stop
		text := res.Text
		if text == "" {
			text = call.Output()
		}
		text = a.session.mask(strings.TrimSpace(text + "\n[" + CancelReason(context.Cause(ctx)) + "]")) // the cause's words too
		a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: ToolCancelled, Text: text})
		if !res.BreakLoop {
			a.histAddToolResult(ctx, req, text)
		}
		return "", false, context.Cause(ctx)
	}
	if err != nil && !intervened {
		// The failure is said here, once: the error policy acts on it
		// without another event (shownError), and the run's end, should
		// it end on it, carries the same text as Error.
		runErr := fmt.Errorf("tool %s: %w", req.Name, err)
		a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: ToolFailed, Text: err.Error(), Error: runErr.Error()})
		var rep *RepairableError
		if !errors.As(err, &rep) { // a repairable error reaches the model as a warning instead
			a.histAddToolResult(ctx, req, a.session.join("error:", " ", err.Error()))
		}
		return "", false, &shownError{runErr}
	}
	if err != nil && res.Text == "" {
		// Interrupted by the user's message: what the tool did so far, or
		// that it did not finish (never an empty result the model would
		// take for a silent success).
		res.Text = cmp.Or(call.maskedOutput(), a.session.mask("[not finished: "+err.Error()+"]"))
	}
	ap := &ToolAfterPayload{Agent: a, ToolName: req.Name, Result: &res}
	if a.hooks().Has(hooks.ToolExecuteAfter) {
		var sn resultSnapshot
		if a.session.cfg.Secrets != nil {
			sn = snapshotResult(&res)
		}
		if err := a.call(ctx, hooks.ToolExecuteAfter, ap); err != nil {
			return "", false, err
		}
		a.session.remask(&res, sn) // what an extension put there
	}
	status := ToolCompleted
	if res.IsError {
		status = ToolFailed
	}
	// A command the user's message interrupted (or a wait that timed out)
	// returned what it printed so far and goes on: the call completed,
	// Running says its work did not.
	res.Images = a.boundImages(res.Images)
	a.emit(Event{Type: EventToolResult, Item: call.ID, Tool: req.Name, Status: status, Text: res.Text, Diffs: res.Diffs,
		Running: res.Running, Streamed: streamedPrefix(res.Text, call.shownOutput()), Images: refs(res.Images)})
	if res.Plan != nil {
		a.emit(Event{Type: EventPlan, Item: call.ID, Plan: res.Plan})
	}
	st.lastResult = res.Text
	if res.BreakLoop {
		a.emit(Event{Type: EventResponse, Item: call.ID, Text: res.Text})
		return res.Text, true, nil
	}
	a.histAddToolResult(ctx, req, res.Text, res.Images...)
	if intervened {
		a.deliver(ctx, "", a.session.takeIntervention())
		return "", false, ErrIntervened
	}
	return "", false, a.checkIntervention(ctx, "")
}

// streamedPrefix is how many bytes at the start of a tool's result its live
// output (what Progress showed) already said: 0 unless the result begins
// with the whole of it (a long output kept as head and tail does not).
func streamedPrefix(result, output string) int {
	output = strings.TrimRight(output, "\n")
	if output == "" || !strings.HasPrefix(result, output) {
		return 0
	}
	return len(output)
}

// showArgs is Agent Zero's before_execution: each argument value passes
// through tool_output_update before it is shown, so extensions can mask
// secrets in what the editor displays.
func (a *Agent) showArgs(ctx context.Context, req toolRequest) (json.RawMessage, error) {
	if !a.hooks().Has(hooks.ToolOutputUpdate) {
		return marshalArgs(req.Args), nil
	}
	shown := make(map[string]any, len(req.Args))
	for _, k := range slices.Sorted(maps.Keys(req.Args)) {
		v := req.Args[k]
		text, ok := v.(string)
		if !ok {
			text = string(marshalArgs(map[string]any{"v": v}))
			text = strings.TrimSuffix(strings.TrimPrefix(text, `{"v":`), "}")
		}
		p := &ToolOutputPayload{Agent: a, ToolName: req.Name, Content: text}
		if err := a.hooks().Call(ctx, hooks.ToolOutputUpdate, p); err != nil {
			return nil, err
		}
		if p.Content == text {
			shown[k] = v
		} else {
			shown[k] = p.Content
		}
	}
	return marshalArgs(shown), nil
}

// toolRequest is a validated tool request.
type toolRequest struct {
	Raw      string // tool_name as sent, "name:method"
	Name     string
	Method   string
	Args     map[string]any
	Headline string
	// CallID is the id of a native call, whose result answers it by id.
	CallID string
	// bad says why a native call cannot run, to the model, and badSaid to
	// the user.
	bad, badSaid string
}

// validateToolRequest checks a parsed reply: tool_name a non-empty string,
// tool_args an object (empty allowed).
func validateToolRequest(v any) (toolRequest, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return toolRequest{}, errors.New("no JSON object with a tool request was found in the reply")
	}
	raw, ok := m["tool_name"].(string)
	if !ok || strings.TrimSpace(raw) == "" {
		return toolRequest{}, errors.New(`"tool_name" must be a non-empty string`)
	}
	args, ok := m["tool_args"].(map[string]any)
	if !ok {
		return toolRequest{}, errors.New(`"tool_args" must be a JSON object (use {} when the tool takes no arguments)`)
	}
	req := toolRequest{Raw: strings.TrimSpace(raw), Args: args}
	req.Name, req.Method, _ = strings.Cut(req.Raw, ":")
	req.Headline, _ = m["headline"].(string)
	return req, nil
}

// quote returns the start of a reply, on one line, for error messages.
func quote(s string) string {
	const max = 120
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// marshalArgs encodes tool arguments for events without HTML escaping, so
// commands read as written ("a && b", not "a \u0026\u0026 b").
func marshalArgs(args map[string]any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
