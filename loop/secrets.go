package loop

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/secrets"
)

// Secrets ([Config.Secrets]) are kept out of everything the engine shows,
// stores, logs or sends, by the engine itself: no extension can disable it.
// The model sees names only (the built-in _13_secrets_prompt), and writes
// §§secret(NAME) where it needs a value; the value is put in place of the
// alias in a tool's arguments just before the tool runs, after the
// tool_execute_before extensions and the approval gate, which see aliases
// only (an unknown alias refuses the call, before the gate is asked).
//
// Going the other way, a text is masked once: where it leaves the engine,
// or earlier, where it enters the loop, when the loop itself must hold
// aliases. What the engine masked is not masked again; what an extension
// changed is (each point compares the text it gave with the one it got
// back), and two masked texts joined are masked again only when a value
// may straddle the join ([secrets.Set.Straddles]: the history's merged
// messages, the extras added to the last one).
//
// Where data leaves the engine, once each:
//
//   - the event sink: every field of every event, in [Session.emit];
//   - the chat model's request, in preparePrompt: the system prompt (once
//     per text: it is the same turn after turn), the extras, and what an
//     extension changed there or at chat_model_call_before. The history's
//     messages go as the history holds them, masked already (below);
//   - the utility model ([Agent.CallUtilityModel]): the question and the
//     answer;
//   - the store: the history masks what enters it, so what it gives out
//     (the journal, [History.State], Output) is not masked again;
//   - the logs: the session's logger is wrapped in [secrets.NewHandler]
//     (over a logger that masks with the same Set already, as cmd/zero's
//     does, the record is left to that one: a line is masked once);
//   - extension scripts: the payload on a script's stdin (scriptInput);
//   - the approval gate: the tool's arguments, which it may show a person
//     (an extension at tool_execute_before may have put a value there);
//   - what Run returns: its error, which may come from anywhere (a model
//     client quoting a key). Its answer is the response tool's result,
//     masked as the tool returned. And [Agent.SystemPrompt].
//
// Where data enters the loop, because the loop must hold aliases (so the
// built-in extensions, which are handed the loop's own data, see aliases
// too):
//
//   - a tool's live output, through a [secrets.Stream] per call, before
//     the tool_output_update extensions, the kept output and the
//     tool_output_delta events: a value split across Progress chunks is
//     masked whole, which the sink, seeing one event at a time, cannot do;
//   - the model's reasoning and answer, through a Stream each, before the
//     *_stream_chunk extensions and the parser: the tool request, its
//     thoughts and headline hold aliases, so the gate sees aliases, a tool
//     that echoes its arguments gets the value from the alias and not from
//     the model, and the reply the history keeps needs no second mask;
//   - a tool's result, diffs and error, as the tool returns, before
//     tool_execute_after: a value a tool prints reaches neither the
//     extensions nor the history in clear. (The result is masked a second
//     time inside its history message, the JSON object that holds it: that
//     object, not the result, is what enters the history, and JSON's
//     escapes can spell a value that holds a backslash);
//   - the history: every message and summary as it enters it (histAdd,
//     before the hist_add_before extensions; History.Add, for a tool's own
//     add; a summary; a restored state, which may have been stored before
//     a secret was known). This one mask serves every later request to the
//     model, the store and the extensions;
//   - the user's message for the extensions (LoopData.UserMessage), apart
//     from the history's copy, which is the message inside its template;
//     and the error texts given to the error_format extensions (masked
//     again inside the warning that enters the history).
//
// A user's message is thus masked once on its way to the model (as it
// enters the history), once at the event sink (run_started) and once for
// LoopData.UserMessage (maskcount_internal_test.go counts the passes).
//
// A chunk a *_stream_chunk extension rewrote is masked alone: a value it
// completes with the model's next text is whole only in the reply, which
// the history masks again before keeping it or sending it back; the chunk
// extensions and the events' deltas may show it. Only an extension that
// knows the value can do that.
//
// A tool that keeps its arguments and never uses a value (the memory
// tools, behaviour_adjustment) implements [AliasKeeper] and gets the
// aliases, so a value is not stored at rest; the refusal of an unknown
// alias holds for it too. What any other tool does with a value is its own
// business: one that stores its arguments (a file it writes) stores the
// value. Values shorter than [secrets.MinMasked] are substituted but never
// masked; see package secrets for the forms of a value masking does not
// find.
//
// With a nil Set none of this runs: every step starts with a nil check
// and allocates nothing.

// maskFunc returns the session's mask, or nil without secrets.
func (s *Session) maskFunc() func(string) string {
	if s.cfg.Secrets == nil {
		return nil
	}
	return s.mask
}

// mask returns text with every secret value replaced by its alias. Every
// whole text the engine masks goes through it (streams excepted), so a
// test can count the passes (maskHook).
// Mask is text with the session's secrets replaced by their aliases, for
// what the engine's caller keeps or shows of a message (a title).
func (s *Session) Mask(text string) string { return s.mask(text) }

func (s *Session) mask(text string) string {
	if s.cfg.Secrets == nil {
		return text
	}
	if s.maskHook != nil {
		s.maskHook(text)
	}
	return s.cfg.Secrets.Mask(text)
}

// clipMasked is Clip of the masked text, without masking all of a text
// that may be huge: a value cut by the clip is masked as the end of a
// stream is (see [secrets.Stream.Flush]).
func (s *Session) clipMasked(text string, n int) string {
	set := s.cfg.Secrets
	if set == nil || len(text) <= n {
		return cut.Clip(s.mask(text), n)
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	st := set.NewStream()
	return st.Write(text[:n]) + st.Flush() + "…"
}

// maskMessages returns msgs with every content masked but those of clean,
// messages known to hold aliases only (what History gave out, say): a
// message whose content is that of clean's message at the same place is
// left alone. It returns msgs itself when nothing changed (it is never
// modified: it may be the history's output).
func (s *Session) maskMessages(msgs, clean []llm.Message) []llm.Message {
	if s.cfg.Secrets == nil {
		return msgs
	}
	var out []llm.Message
	for i, m := range msgs {
		if i < len(clean) && m.Content == clean[i].Content { // the same string: compared in O(1)
			continue
		}
		if c := s.mask(m.Content); c != m.Content {
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content = c
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// join returns a+sep+b for a and b that hold aliases only, masked again
// only when a value may straddle sep (see [secrets.Set.Straddles]).
func (s *Session) join(a, sep, b string) string {
	if set := s.cfg.Secrets; set != nil && set.Straddles(a, sep, b) {
		return s.mask(a + sep + b)
	}
	return a + sep + b
}

// maskSystem masks the system prompt, once per text: it is the same turn
// after turn, and long.
func (a *Agent) maskSystem(system string) string {
	if a.session.cfg.Secrets == nil {
		return system
	}
	if system != a.sysMasked.text {
		a.sysMasked.text, a.sysMasked.masked = system, a.session.mask(system)
	}
	return a.sysMasked.masked
}

// maskEvent masks every text field of e.
func (s *Session) maskEvent(e *Event) {
	e.Text = s.mask(e.Text)
	e.Error = s.mask(e.Error)
	e.Title = s.mask(e.Title)
	e.Tool = s.mask(e.Tool)
	e.Method = s.mask(e.Method)
	e.Kind = s.mask(e.Kind)
	e.Profile = s.mask(e.Profile)
	if len(e.Args) > 0 {
		e.Args = s.maskJSON(e.Args)
	}
	e.Diffs = s.maskDiffs(e.Diffs)
	if e.Plan != nil {
		p := &Plan{Items: make([]PlanItem, len(e.Plan.Items))}
		for i, it := range e.Plan.Items {
			it.Content = s.mask(it.Content)
			p.Items[i] = it
		}
		e.Plan = p
	}
}

// maskJSON masks a JSON document. Masking its text finds values inside
// strings (escaped too) and keeps it valid; a value found outside a string
// (a number equal to a secret) would break it, so the document is then
// decoded and its strings masked one by one.
func (s *Session) maskJSON(raw json.RawMessage) json.RawMessage {
	text := string(raw)
	masked := s.mask(text)
	if masked == text {
		return raw
	}
	if json.Valid([]byte(masked)) {
		return json.RawMessage(masked)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		out, _ := json.Marshal(masked) // not JSON at all: shown as a string
		return out
	}
	out, err := json.Marshal(s.cfg.Secrets.MaskValue(v))
	if err != nil {
		out, _ = json.Marshal(masked)
	}
	return out
}

// maskDiffs returns diffs with their paths and texts masked, a copy when
// anything changed (the tool's own slice is left alone).
func (s *Session) maskDiffs(diffs []FileDiff) []FileDiff {
	var out []FileDiff
	for i, d := range diffs {
		m := FileDiff{Path: s.mask(d.Path), OldText: d.OldText, NewText: s.mask(d.NewText)}
		if d.OldText != nil {
			if old := s.mask(*d.OldText); old != *d.OldText {
				m.OldText = &old
			}
		}
		if m == d {
			continue
		}
		if out == nil {
			out = slices.Clone(diffs)
		}
		out[i] = m
	}
	if out == nil {
		return diffs
	}
	return out
}

// maskResult masks what a tool returned: its text and diffs.
func (s *Session) maskResult(res *ToolResult) {
	if s.cfg.Secrets == nil {
		return
	}
	res.Text = s.mask(res.Text)
	res.Diffs = s.maskDiffs(res.Diffs)
}

// resultSnapshot is a masked ToolResult as it was before extensions could
// change it: remask masks only what they changed.
type resultSnapshot struct {
	text  string
	diffs []FileDiff
	old   []string // *diffs[i].OldText, which an extension may change in place
}

func snapshotResult(res *ToolResult) resultSnapshot {
	sn := resultSnapshot{text: res.Text, diffs: slices.Clone(res.Diffs), old: make([]string, len(res.Diffs))}
	for i, d := range res.Diffs {
		if d.OldText != nil {
			sn.old[i] = *d.OldText
		}
	}
	return sn
}

// remask masks what of res differs from the snapshot sn taken of it.
func (s *Session) remask(res *ToolResult, sn resultSnapshot) {
	if s.cfg.Secrets == nil {
		return
	}
	if res.Text != sn.text {
		res.Text = s.mask(res.Text)
	}
	var out []FileDiff
	for i, d := range res.Diffs {
		if i < len(sn.diffs) && d == sn.diffs[i] && (d.OldText == nil || *d.OldText == sn.old[i]) {
			continue
		}
		if m := s.maskDiffs([]FileDiff{d})[0]; m != d {
			if out == nil {
				out = slices.Clone(res.Diffs)
			}
			out[i] = m
		}
	}
	if out != nil {
		res.Diffs = out
	}
}

// maskedError is an error whose text held a secret: Error is the masked
// text, and errors.Is and errors.As still see the original.
type maskedError struct {
	err error
	msg string
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskError returns err with its text masked (err itself when its text
// holds no secret).
func (s *Session) maskError(err error) error {
	if err == nil || s.cfg.Secrets == nil {
		return err
	}
	text := err.Error()
	if masked := s.mask(text); masked != text {
		return &maskedError{err: err, msg: masked}
	}
	return err
}

// scriptInput masks the payload an extension script gets on its stdin.
func (a *Agent) scriptInput(v any) any {
	if a.session.cfg.Secrets == nil {
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return v // the hooks package reports it
	}
	return a.session.maskJSON(raw)
}

// expandArgs puts the secrets' values in place of their aliases in the
// arguments a tool is about to run with. An alias of no secret the agent
// may use gives refused, the message for the model, and the tool must not
// run.
func (a *Agent) expandArgs(args map[string]any) (expanded map[string]any, refused string) {
	set := a.session.cfg.Secrets
	if set == nil {
		return args, ""
	}
	out, missing := set.Expand(args)
	if len(missing) > 0 {
		return nil, unknownSecrets(set, missing)
	}
	expanded, _ = out.(map[string]any)
	return expanded, ""
}

// toolArgs is expandArgs for the arguments tool runs with: a tool that
// keeps aliases ([AliasKeeper]) gets args itself, with its aliases, once
// they all name secrets that exist; any other gets the values.
func (a *Agent) toolArgs(tool Tool, args map[string]any) (map[string]any, string) {
	expanded, refused := a.expandArgs(args)
	if refused != "" {
		return nil, refused
	}
	if k, ok := tool.(AliasKeeper); ok && k.KeepsAliases() {
		return args, ""
	}
	return expanded, ""
}

// unknownSecrets is the message for a tool request that names secrets that
// do not exist: like a blocked tool's, it goes to the model as the result.
func unknownSecrets(set *secrets.Set, missing []string) string {
	aliases := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = secrets.Alias(n)
		}
		return strings.Join(out, ", ")
	}
	word := "alias"
	if len(missing) > 1 {
		word = "aliases"
	}
	msg := "Not run: unknown secret " + word + " " + aliases(missing) + ". "
	if names := set.Names(); len(names) > 0 {
		msg += "The secrets you may use are " + aliases(names) + "; use one of them exactly, or do without."
	} else {
		msg += "No secrets are available in this session; do without."
	}
	return msg
}
