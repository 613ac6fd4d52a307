package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server"
)

// A question that an MCP server used by Zero's agent asks during a run (a
// form to fill in, or a page to open; see package ask) goes to this face's
// client as an elicitation of its own, the way approvals do: asked as it
// comes (on the zero_run call in flight, else on the client's session)
// when the client declared elicitation, and from protocol 2026-07-28 on in
// zero_run's input-required result. No one else can answer it, so a client
// that cannot be asked declines it at once, and the run goes on.
//
// What the server asks is someone else's text: it is bounded and shown
// without control characters, and named as the server's. What the person
// types goes back to the server through the broker, and nowhere else: not
// to a log, not to an event.

// The bounds of a question put to the client. A text that is only shown
// (the message, a title) is cut; a form over the counts, or with a name or
// a value over its bound, is declined rather than cut: a form missing a
// field or an option is another form.
const (
	maxQuestionMessage = 4000 // bytes of the server's message shown
	maxQuestionText    = 2048 // bytes of a field's title or description
	maxQuestionFields  = ask.MaxFields
	maxQuestionOptions = ask.MaxOptions
	maxQuestionName    = 128  // bytes of a field's name (as ask.ParseForm takes it)
	maxQuestionValue   = 1024 // bytes of an option's value or a string default (likewise)
	maxQuestionURL     = 2048 // bytes of a page's address
	maxServerName      = 80   // characters of the server's name in the message
)

// onQuestion puts question e of a driven session to the client, or
// declines it when the client cannot be asked. Like onEvent it must not
// block: the elicitation gets a goroutine of its own (owned by f.wg).
func (f *face) onQuestion(session string, e server.Event) {
	if f.mgr.Questions() == nil || e.Question == nil {
		return
	}
	q := *e.Question
	f.mu.Lock()
	d := f.driven[session]
	if f.closed || d == nil {
		f.mu.Unlock()
		return
	}
	_, asked := f.asking[q.ID]
	rc := f.running[session]
	caps := sessionCaps(d.client)
	bad := checkQuestion(q)
	switch {
	case asked: // already in a 2026-07-28 client's input request
		f.mu.Unlock()
		return
	case bad != nil || !canAskQuestion(caps, q):
	case d.modern && rc != nil:
		f.mu.Unlock()
		return // the zero_run in flight puts it in its result (see handOut)
	case d.modern:
		// A server sends no requests on this protocol, and no zero_run
		// is there to carry it: no one can be asked.
	default:
		ctx := f.ctx
		if rc != nil {
			ctx = rc // where an HTTP client without a standalone stream listens
		}
		ctx, cancel := context.WithCancel(f.srv.WithContext(ctx, d.client))
		f.asking[q.ID] = cancel
		p := questionParams(q, caps, protocolOf(d.client))
		f.wg.Add(1)
		go f.askQuestion(ctx, cancel, q, p)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	if bad != nil {
		f.log.Warn("declined a question of an MCP server", "server", serverName(q.Server), "question", q.ID, "reason", bad)
	}
	f.answerQuestion(q.ID, ask.Declined)
}

// askQuestion asks the client question q (as p) and answers it with the
// client's answer: declined when the client failed to ask, cancelled when
// ctx ended first (the zero_run call that carried it was cancelled, or Zero
// stops; when it was answered elsewhere, the answer is a no-op).
func (f *face) askQuestion(ctx context.Context, cancel context.CancelFunc, q ask.Question, p mcp.ElicitationParams) {
	defer f.wg.Done()
	defer cancel()
	res, err := f.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  p,
	})
	switch {
	case err == nil:
		f.answerWith(q, res)
	case ctx.Err() == nil:
		f.log.Warn("elicitation failed; the MCP server's question is declined", "question", q.ID, "err", err)
		f.answerQuestion(q.ID, ask.Declined)
	default:
		f.answerQuestion(q.ID, ask.Answer{Action: ask.Cancel})
	}
}

// answerWith answers question q with the client's answer res, completed
// as the asker may be sent it (ask.Question.Complete: the form's fields
// only, defaults filled, each value checked). An answer that does not fit
// the form cancels the question; the log names the field, never the value.
func (f *face) answerWith(q ask.Question, res *mcp.ElicitationResult) {
	a, err := q.Complete(answerOf(res))
	if err != nil {
		f.log.Warn("the client's answer does not fit the MCP server's form; the question is cancelled", "question", q.ID, "err", err)
		a = ask.Answer{Action: ask.Cancel}
	}
	f.answerQuestion(q.ID, a)
}

// answerQuestion gives the broker a's answer to question id; the first
// answer wins, so a later one is only noted.
func (f *face) answerQuestion(id string, a ask.Answer) {
	qs := f.mgr.Questions()
	if qs == nil {
		return
	}
	if err := qs.AnswerQuestion(id, a); err != nil {
		f.log.Debug("question already answered", "question", id, "err", err)
	}
}

// questionInput is a question as one of zero_run's input requests.
type questionInput struct {
	id     string
	params mcp.ElicitationParams
}

// handOut returns the waiting questions of session for the input-required
// result of a 2026-07-28 client's zero_run (ctx is its call), noting them
// as asked; those it cannot be asked are declined.
func (f *face) handOut(ctx context.Context, session string) []questionInput {
	qs := f.mgr.Questions()
	if qs == nil {
		return nil
	}
	caps, version := clientCaps(ctx), mcpserver.RequestProtocolVersion(ctx)
	var out []questionInput
	var declined []string
	pending := qs.PendingQuestions(session)
	f.mu.Lock()
	for _, q := range pending {
		if checkQuestion(q) != nil || !canAskQuestion(caps, q) {
			declined = append(declined, q.ID)
			continue
		}
		if _, ok := f.asking[q.ID]; !ok {
			f.asking[q.ID] = func() {} // nothing to stop: the client holds it
		}
		out = append(out, questionInput{id: q.ID, params: questionParams(q, caps, version)})
	}
	f.mu.Unlock()
	for _, id := range declined {
		f.answerQuestion(id, ask.Declined)
	}
	return out
}

// answerInput answers the questions of session that a 2026-07-28 client's
// zero_run call brings answers to; the others keep waiting.
func (f *face) answerInput(session string, in mcp.InputResponses) {
	qs := f.mgr.Questions()
	if qs == nil || len(in) == 0 {
		return
	}
	for _, q := range qs.PendingQuestions(session) {
		if res := mcpserver.ElicitationResponse(in, q.ID); res != nil {
			f.answerWith(q, res)
		}
	}
}

// declineUnasked declines the waiting questions of session that no
// 2026-07-28 client was given, once no zero_run is there to give them: a
// question that came as the call returned would otherwise wait for no one.
func (f *face) declineUnasked(session string) {
	qs := f.mgr.Questions()
	if qs == nil {
		return
	}
	pending := qs.PendingQuestions(session)
	var out []string
	f.mu.Lock()
	if f.running[session] == nil {
		for _, q := range pending {
			if _, ok := f.asking[q.ID]; !ok {
				out = append(out, q.ID)
			}
		}
	}
	f.mu.Unlock()
	for _, id := range out {
		f.answerQuestion(id, ask.Declined)
	}
}

// questionWaits reports whether session waits for the answer to a question:
// a zero_run that carries its elicitation keeps the call open until it is
// answered, as returning would take the form from under the user.
func (f *face) questionWaits(session string) bool {
	qs := f.mgr.Questions()
	return qs != nil && len(qs.PendingQuestions(session)) > 0
}

// sessionCaps are the capabilities a client session declared.
func sessionCaps(cs mcpserver.ClientSession) mcp.ClientCapabilities {
	if ci, ok := cs.(mcpserver.SessionWithClientInfo); ok {
		return ci.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// protocolOf is the protocol version a client session negotiated, "" when
// unknown.
func protocolOf(cs mcpserver.ClientSession) string {
	if v, ok := cs.(mcpserver.SessionWithProtocolVersion); ok {
		return v.ProtocolVersion()
	}
	return ""
}

// elicitModes are the kinds of elicitation a client takes: an empty
// elicitation capability is forms (as before modes existed).
func elicitModes(caps mcp.ClientCapabilities) (form, page bool) {
	e := caps.Elicitation
	if e == nil {
		return false, false
	}
	if e.Form == nil && e.URL == nil {
		return true, false
	}
	return e.Form != nil, e.URL != nil
}

// canAskQuestion reports whether a client with caps can be asked q: a page
// to open goes as a URL elicitation, or as a form that says the address.
func canAskQuestion(caps mcp.ClientCapabilities, q ask.Question) bool {
	form, page := elicitModes(caps)
	return form || (page && q.URL != "")
}

// questionParams is question q as an elicitation for a client with caps
// speaking protocol version.
func questionParams(q ask.Question, caps mcp.ClientCapabilities, version string) mcp.ElicitationParams {
	msg := "The MCP server " + serverName(q.Server) + " asks: " + shown(q.Message, maxQuestionMessage)
	if q.URL != "" {
		if _, page := elicitModes(caps); page {
			return mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, Message: msg, ElicitationID: q.ID, URL: q.URL}
		}
		msg += "\n\nOpen this page: " + q.URL + "\nAccept once you have opened it, or decline."
	}
	// Titled choices are oneOf const/title from 2025-11-25 on; before,
	// enum with enumNames.
	oneOf := version == "" || version >= mcp.ProtocolVersion20251125
	return mcp.ElicitationParams{Message: msg, RequestedSchema: formSchema(q.Fields, oneOf)}
}

// formSchema is the requested schema of a form with fields: a flat object,
// its properties in the order the asker gave them.
func formSchema(fields []ask.Field, oneOf bool) map[string]any {
	props := make(orderedProps, 0, len(fields))
	var required []string
	for _, fl := range fields {
		props = append(props, orderedProp{fl.Name, fieldSchema(fl, oneOf)})
		if fl.Required {
			required = append(required, fl.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fieldSchema is one field as a property of a requested schema.
func fieldSchema(fl ask.Field, oneOf bool) map[string]any {
	p := map[string]any{}
	if fl.Title != "" {
		p["title"] = shown(fl.Title, maxQuestionText)
	}
	if fl.Description != "" {
		p["description"] = shown(fl.Description, maxQuestionText)
	}
	titled := slices.ContainsFunc(fl.Options, func(o ask.Option) bool { return o.Title != "" })
	switch fl.Type {
	case ask.TypeString:
		p["type"] = "string"
		if slices.Contains([]string{"email", "uri", "date", "date-time"}, fl.Format) {
			p["format"] = fl.Format
		}
		setInt(p, "minLength", fl.MinLength)
		setInt(p, "maxLength", fl.MaxLength)
	case ask.TypeNumber, ask.TypeInteger:
		p["type"] = fl.Type
		setNumber(p, "minimum", fl.Min)
		setNumber(p, "maximum", fl.Max)
	case ask.TypeBoolean:
		p["type"] = "boolean"
	case ask.TypeChoice:
		p["type"] = "string"
		switch {
		case titled && oneOf:
			p["oneOf"] = constTitles(fl.Options)
		case titled:
			p["enum"], p["enumNames"] = optionValues(fl.Options), optionTitles(fl.Options)
		default:
			p["enum"] = optionValues(fl.Options)
		}
	case ask.TypeChoices:
		p["type"] = "array"
		if titled {
			p["items"] = map[string]any{"anyOf": constTitles(fl.Options)}
		} else {
			p["items"] = map[string]any{"type": "string", "enum": optionValues(fl.Options)}
		}
		setInt(p, "minItems", fl.MinItems)
		setInt(p, "maxItems", fl.MaxItems)
	}
	if d, err := fl.Value(fl.Default); fl.Default != nil && err == nil {
		if s, isText := d.(string); !isText || plainValue(s, maxQuestionValue) {
			p["default"] = d
		}
	}
	return p
}

func setInt(p map[string]any, key string, v *int) {
	if v != nil {
		p[key] = *v
	}
}

func setNumber(p map[string]any, key string, v *float64) {
	if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
		p[key] = *v
	}
}

func optionValues(opts []ask.Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Value
	}
	return out
}

func optionTitles(opts []ask.Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = shown(cmpOr(o.Title, o.Value), maxQuestionText)
	}
	return out
}

func constTitles(opts []ask.Option) []map[string]any {
	out := make([]map[string]any, len(opts))
	for i, o := range opts {
		out[i] = map[string]any{"const": o.Value, "title": shown(cmpOr(o.Title, o.Value), maxQuestionText)}
	}
	return out
}

// orderedProps are a schema's properties in the asker's order, which a
// map would sort.
type (
	orderedProps []orderedProp
	orderedProp  struct {
		name   string
		schema map[string]any
	}
)

func (o orderedProps) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(p.schema)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// checkQuestion says what makes q a question this face does not put to
// anyone: a form over the bounds, names or values that are not plain
// text, a page that is not https (or http on loopback). Only the shape is
// named, never the server's text.
func checkQuestion(q ask.Question) error {
	if q.URL != "" {
		if len(q.Fields) > 0 {
			return errors.New("a page to open that is also a form")
		}
		return checkPage(q.URL)
	}
	if len(q.Fields) > maxQuestionFields {
		return fmt.Errorf("a form of %d fields (at most %d)", len(q.Fields), maxQuestionFields)
	}
	names := map[string]bool{}
	for i, fl := range q.Fields {
		if !plainValue(fl.Name, maxQuestionName) || fl.Name == "" || names[fl.Name] {
			return fmt.Errorf("field %d: a name that is empty, repeated, too long or not plain text", i)
		}
		names[fl.Name] = true
		switch fl.Type {
		case ask.TypeString, ask.TypeNumber, ask.TypeInteger, ask.TypeBoolean:
		case ask.TypeChoice, ask.TypeChoices:
			if len(fl.Options) == 0 || len(fl.Options) > maxQuestionOptions {
				return fmt.Errorf("field %d: %d options (1 to %d)", i, len(fl.Options), maxQuestionOptions)
			}
			values := map[string]bool{}
			for _, o := range fl.Options {
				if !plainValue(o.Value, maxQuestionValue) || values[o.Value] {
					return fmt.Errorf("field %d: an option that is repeated, too long or not plain text", i)
				}
				values[o.Value] = true
			}
		default:
			return fmt.Errorf("field %d: a field of type %q", i, cut.Line(fl.Type, 20))
		}
	}
	return nil
}

// checkPage checks the address of a page to open: https, or http on
// loopback (a local server's own page), nothing else a client would open.
func checkPage(raw string) error {
	if len(raw) > maxQuestionURL {
		return fmt.Errorf("an address of %d bytes (at most %d)", len(raw), maxQuestionURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !plainValue(raw, maxQuestionURL) {
		return errors.New("an address that is not a URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return errors.New("an address that is not https (or http on loopback)")
}

// serverName is the name of the server that asks, on one line and bounded
// (it is the configuration's, but a workspace's .mcp.json may name it).
func serverName(s string) string {
	return cut.Line(shown(s, 4*maxServerName), maxServerName)
}

// plainValue reports whether s, a value that goes to the client as it is
// (a name, an option, an address), is valid UTF-8 of at most n bytes
// without control characters.
func plainValue(s string, n int) bool {
	return len(s) <= n && utf8.ValidString(s) && !strings.ContainsFunc(s, hidden)
}

// shown is someone else's text as the client shows it: at most n bytes
// (cut marked), valid UTF-8, without the control characters that would
// act on a terminal or turn the text around (line breaks and tabs stay).
func shown(s string, n int) string {
	s = strings.ToValidUTF8(cut.Clip(s, n), "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && hidden(r) {
			return -1
		}
		return r
	}, s)
}

// hidden reports whether r is a control character: C0, DEL, C1, or a
// bidirectional override or isolate.
func hidden(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// answerOf is the client's answer res as the broker takes it: accept
// with what the client filled in, decline, or cancel (also for an action
// MCP does not know).
func answerOf(res *mcp.ElicitationResult) ask.Answer {
	if res == nil {
		return ask.Answer{Action: ask.Cancel}
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		content, _ := res.Content.(map[string]any)
		return ask.Answer{Action: ask.Accept, Content: content}
	case mcp.ElicitationResponseActionDecline:
		return ask.Answer{Action: ask.Decline}
	}
	return ask.Answer{Action: ask.Cancel}
}
