package acp

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server"
)

// Questions an MCP server puts to the user during a run (its elicitation:
// a form to fill in, or a page to open), as the broker carries them
// (question_requested, question_resolved). Each shows as a tool call of its
// own, not the MCP tool's call that asked, pending until the question is
// resolved: it names the server and quotes its words in a code block, so
// that nothing the server wrote reads as Zero's.
//
// The question goes to the person with the unstable elicitation/create when
// the client declares that it shows forms (or pages to open), else with
// session/request_permission when the question is a choice among a few
// options: yes or no, a page to open, one yes-or-no field, one field to
// choose from a list, or a form whose every field may be left as the server
// proposes. A form that needs typing cannot be put on buttons: the face says
// so in a message and declines it, so the server's call goes on.

const (
	// maxQuestionText bounds the server's message as shown.
	maxQuestionText = 4000
	// maxQuestionName bounds a server's name, a field's name or title and a
	// choice's name.
	maxQuestionName = 100
	// maxQuestionFields bounds the fields listed.
	maxQuestionFields = 50
	// maxQuestionOptions: a longer list is no choice to put on buttons.
	maxQuestionOptions = 20
)

// Permission option ids of a question (a choice's is optQChoice and its
// index).
const (
	optQAccept  = "accept"
	optQDecline = "decline"
	optQYes     = "yes"
	optQNo      = "no"
	optQChoice  = "choice-"
)

// questionCallID is the tool call that shows question id.
func questionCallID(id string) sdk.ToolCallId { return sdk.ToolCallId("zero-question-" + id) }

// question maps a question's events: its tool call, pending until the
// question is resolved (completed when answered, failed when declined or
// cancelled); live, the question is put to the client, and withdrawn when
// it was resolved some other way (another face answered, the run ended).
func (m *mapper) question(e server.Event, replay bool, send func(sdk.SessionUpdate), ask asker) {
	switch e.Type {
	case server.EventQuestionRequested:
		if e.Question == nil {
			return
		}
		q := *e.Question
		q.ID = e.Text
		send(sdk.StartToolCall(questionCallID(q.ID), questionTitle(q.Server), sdk.WithStartKind(sdk.ToolKindOther),
			sdk.WithStartStatus(sdk.ToolCallStatusPending), sdk.WithStartContent(questionContent(q))))
		if !replay && ask != nil {
			ask.askQuestion(q)
		}
	case server.EventQuestionResolved:
		if !replay && ask != nil {
			ask.withdraw(e.Text)
		}
		status, said := resolvedQuestion(e.Status)
		send(sdk.UpdateToolCall(questionCallID(e.Text), sdk.WithUpdateStatus(status),
			sdk.WithUpdateTitle(questionTitle(e.Title)+": "+said)))
	}
}

// resolvedQuestion is the status of a question's tool call once it was
// answered with action, and the word for what happened.
func resolvedQuestion(action string) (sdk.ToolCallStatus, string) {
	switch action {
	case ask.Accept:
		return sdk.ToolCallStatusCompleted, "answered"
	case ask.Decline:
		return sdk.ToolCallStatusFailed, "declined"
	}
	return sdk.ToolCallStatusFailed, "not answered"
}

// askQuestion puts q to the client on a goroutine of its own (the drainer
// goes on) and answers the broker with the person's answer.
func (st *sessState) askQuestion(q ask.Question) {
	qs := st.a.opts.Manager.Questions()
	if qs == nil || !slices.ContainsFunc(qs.PendingQuestions(st.id), func(p ask.Question) bool { return p.ID == q.ID }) {
		return // answered already
	}
	st.mu.Lock()
	if st.stopped || st.asks[q.ID] != nil {
		st.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(st.a.ctx)
	st.asks[q.ID] = cancel
	st.mu.Unlock()
	run := func() {
		defer cancel()
		a, ok := st.putQuestion(ctx, q)
		st.mu.Lock()
		delete(st.asks, q.ID)
		st.mu.Unlock()
		if !ok || ctx.Err() != nil {
			return // answered elsewhere, run over, or the client left
		}
		if err := qs.AnswerQuestion(q.ID, a); err != nil {
			st.a.opts.Logger.Debug("answer to a question not taken", "session", st.id, "err", err)
		}
	}
	if !st.a.spawn(run) {
		cancel()
	}
}

// askPendingQuestions puts the questions the session already waits for
// to the client (after load or resume: their events were only replayed).
func (a *agent) askPendingQuestions(st *sessState) {
	qs := a.opts.Manager.Questions()
	if qs == nil {
		return
	}
	for _, q := range qs.PendingQuestions(st.id) {
		st.askQuestion(q)
	}
}

// putQuestion asks the client q and returns the answer; false when there
// is none to give (ctx ended: the question was withdrawn).
func (st *sessState) putQuestion(ctx context.Context, q ask.Question) (ask.Answer, bool) {
	form, page := st.a.elicits()
	if q.URL == "" && form || q.URL != "" && page {
		a, err := st.elicit(ctx, q)
		if err == nil {
			return a, true
		}
		if ctx.Err() != nil {
			return ask.Answer{}, false
		}
		// The capability is unstable: a client may declare it and still
		// refuse the request.
		st.a.opts.Logger.Warn("elicitation request failed; asking with session/request_permission", "session", st.id, "err", err)
	}
	p := planPermission(q)
	if p.cannot != "" {
		st.enqueue(item{message: cannotAsk(q, p.cannot)})
		return ask.Declined, true
	}
	id := questionCallID(q.ID)
	title := questionTitle(q.Server)
	kind := sdk.ToolKindOther
	resp, err := st.a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(st.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: id, Title: &title, Kind: &kind, Status: sdk.Ptr(sdk.ToolCallStatusPending),
			Content: questionContent(q)},
		Options: p.options,
	})
	switch {
	case ctx.Err() != nil:
		return ask.Answer{}, false
	case err != nil:
		st.a.opts.Logger.Warn("permission request failed", "session", st.id, "err", err)
		st.enqueue(item{message: fmt.Sprintf("\n\nThe editor could not ask you the question of the MCP server %s (%s): Zero declined it for you.\n",
			code(serverName(q.Server)), visible(cut.Clip(err.Error(), 300)))})
		return ask.Declined, true
	case resp.Outcome.Selected == nil:
		return ask.Answer{Action: ask.Cancel}, true
	}
	a, ok := p.answers[resp.Outcome.Selected.OptionId]
	if !ok { // an option that was not offered
		return ask.Declined, true
	}
	return a, true
}

// elicits says whether the client declared that it shows forms, and pages
// to open (elicitation/create).
func (a *agent) elicits() (form, page bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.clientCaps.Elicitation
	return e != nil && e.Form != nil, e != nil && e.Url != nil
}

// elicit puts q to the client with elicitation/create, for the session
// and the question's tool call. The SDK's request has no place for the
// two (the schema's sessionId and toolCallId, which clients require): they
// go in its _meta, and the wire moves them where they belong (see
// lineWriter).
func (st *sessState) elicit(ctx context.Context, q ask.Question) (ask.Answer, error) {
	msg := "The MCP server " + serverName(q.Server) + " asks: " + visible(cut.Clip(q.Message, maxQuestionText))
	meta := map[string]any{metaSessionID: st.id, metaToolCallID: string(questionCallID(q.ID))}
	var req sdk.UnstableCreateElicitationRequest
	if q.URL != "" {
		req.Url = &sdk.UnstableCreateElicitationUrl{Meta: meta, Mode: "url", ElicitationId: sdk.UnstableElicitationId(q.ID), Message: msg, Url: q.URL}
	} else {
		req.Form = &sdk.UnstableCreateElicitationForm{Meta: meta, Mode: "form", Message: msg, RequestedSchema: elicitationSchema(q.Fields)}
	}
	resp, err := st.a.conn.UnstableCreateElicitation(ctx, req)
	switch {
	case err != nil:
		return ask.Answer{}, err
	case resp.Accept != nil:
		// Only the form's fields go back, each checked and as its type
		// says (the editor's form may not have checked them).
		a, err := q.Complete(ask.Answer{Action: ask.Accept, Content: resp.Accept.Content})
		if err != nil {
			st.enqueue(item{message: fmt.Sprintf("\n\nThe answer to the MCP server %s's form was not sent (%s): Zero declined it for you.\n",
				code(serverName(q.Server)), visible(err.Error()))})
			return ask.Declined, nil
		}
		return a, nil
	case resp.Decline != nil:
		return ask.Declined, nil
	}
	return ask.Answer{Action: ask.Cancel}, nil
}

// elicitationSchema is the form's JSON Schema, as MCP's elicitation writes
// it (flat, primitive properties).
func elicitationSchema(fields []ask.Field) sdk.UnstableElicitationSchema {
	s := sdk.UnstableElicitationSchema{Type: sdk.UnstableElicitationSchemaTypeObject, Properties: map[string]any{}}
	for _, f := range fields {
		p := map[string]any{}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		options := func() map[string]any {
			if !slices.ContainsFunc(f.Options, func(o ask.Option) bool { return o.Title != "" }) {
				values := make([]string, len(f.Options))
				for i, o := range f.Options {
					values[i] = o.Value
				}
				return map[string]any{"type": "string", "enum": values}
			}
			one := make([]map[string]any, len(f.Options))
			for i, o := range f.Options {
				one[i] = map[string]any{"const": o.Value, "title": cmp.Or(o.Title, o.Value)}
			}
			return map[string]any{"type": "string", "oneOf": one}
		}
		switch f.Type {
		case ask.TypeString:
			p["type"] = "string"
			if f.Format != "" {
				p["format"] = f.Format
			}
			setInt(p, "minLength", f.MinLength)
			setInt(p, "maxLength", f.MaxLength)
		case ask.TypeNumber, ask.TypeInteger:
			p["type"] = f.Type
			if f.Min != nil {
				p["minimum"] = *f.Min
			}
			if f.Max != nil {
				p["maximum"] = *f.Max
			}
		case ask.TypeBoolean:
			p["type"] = "boolean"
		case ask.TypeChoice:
			for k, v := range options() {
				p[k] = v
			}
		case ask.TypeChoices:
			p["type"] = "array"
			items := options()
			if one, ok := items["oneOf"]; ok {
				items = map[string]any{"anyOf": one}
			}
			p["items"] = items
			setInt(p, "minItems", f.MinItems)
			setInt(p, "maxItems", f.MaxItems)
		default:
			p["type"] = f.Type
		}
		s.Properties[f.Name] = p
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

func setInt(p map[string]any, key string, v *int) {
	if v != nil {
		p[key] = *v
	}
}

// permissionPlan is a question put as session/request_permission: its
// options and the answer each one gives.
type permissionPlan struct {
	options []sdk.PermissionOption
	answers map[sdk.PermissionOptionId]ask.Answer
	// cannot names what the options cannot ask ("" when they can): the
	// fields that need typing.
	cannot string
}

// planPermission puts q as options, if it can be.
func planPermission(q ask.Question) permissionPlan {
	p := permissionPlan{answers: map[sdk.PermissionOptionId]ask.Answer{}}
	add := func(id, name string, kind sdk.PermissionOptionKind, a ask.Answer) {
		oid := sdk.PermissionOptionId(id)
		p.options = append(p.options, sdk.PermissionOption{OptionId: oid, Name: name, Kind: kind})
		p.answers[oid] = a
	}
	accept := func(content map[string]any) ask.Answer { return ask.Answer{Action: ask.Accept, Content: content} }
	var f ask.Field
	if len(q.Fields) == 1 {
		f = q.Fields[0]
	}
	switch {
	case q.URL != "":
		add(optQAccept, "Open it / I have done it", sdk.PermissionOptionKindAllowOnce, accept(nil))
	case len(q.Fields) == 0:
		add(optQAccept, "Accept", sdk.PermissionOptionKindAllowOnce, accept(nil))
	case len(q.Fields) == 1 && f.Type == ask.TypeBoolean:
		add(optQYes, "Yes", sdk.PermissionOptionKindAllowOnce, accept(map[string]any{f.Name: true}))
		add(optQNo, "No", sdk.PermissionOptionKindAllowOnce, accept(map[string]any{f.Name: false}))
	case len(q.Fields) == 1 && f.Type == ask.TypeChoice && len(f.Options) > 0 && len(f.Options) <= maxQuestionOptions:
		for i, o := range f.Options {
			add(fmt.Sprintf("%s%d", optQChoice, i), cut.Line(visible(cmp.Or(o.Title, o.Value)), maxQuestionName),
				sdk.PermissionOptionKindAllowOnce, accept(map[string]any{f.Name: o.Value}))
		}
	default:
		// A form whose every field may be left as the server proposes is
		// accepted as it proposes; one that needs typing cannot be asked.
		var content map[string]any
		var typing []string
		for _, f := range q.Fields {
			switch {
			case f.Default != nil:
				if content == nil {
					content = map[string]any{}
				}
				content[f.Name] = f.Default
			case f.Required:
				typing = append(typing, f.Name)
			}
		}
		if len(typing) > 0 {
			p.cannot = nameList(codeAll(typing), 10, false)
			return p
		}
		name := "Accept with the defaults"
		if content == nil {
			name = "Accept, leaving it empty"
		}
		add(optQAccept, name, sdk.PermissionOptionKindAllowOnce, accept(content))
	}
	add(optQDecline, "Decline", sdk.PermissionOptionKindRejectOnce, ask.Declined)
	return p
}

// codeAll makes each name (a server's words) a code span.
func codeAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = code(cut.Line(visible(n), maxQuestionName))
	}
	return out
}

// cannotAsk is the message that says q was declined because it needs
// typing (fields) that options cannot ask.
func cannotAsk(q ask.Question, fields string) string {
	return fmt.Sprintf("\n\nThe MCP server %s asked you to fill in a form, and %s must be typed in: "+
		"this editor shows no forms, so Zero declined it for you and the server was told no. "+
		"`zero chat` and editors that show ACP forms can answer such questions.\n", code(serverName(q.Server)), fields)
}

// questionTitle is the title of a question's tool call.
func questionTitle(server string) string {
	return "The MCP server " + serverName(server) + " asks"
}

// serverName is a server's name as shown: on one line, clipped.
func serverName(name string) string {
	return cut.Line(visible(name), maxQuestionName)
}

// questionContent shows q: who asks, its words verbatim in a code block
// (never Markdown that could pass for Zero's), the page it asks to open and
// the fields it asks for.
func questionContent(q ask.Question) []sdk.ToolCallContent {
	var b strings.Builder
	fmt.Fprintf(&b, "The MCP server %s asks (its words, not Zero's):\n\n", code(serverName(q.Server)))
	b.WriteString(fence(visible(cut.Clip(q.Message, maxQuestionText))))
	if q.URL != "" {
		b.WriteString("\n\nIt asks you to open this page:\n\n" + pageLink(q.URL))
	}
	if len(q.Fields) > 0 {
		var lines []string
		for i, f := range q.Fields {
			if i == maxQuestionFields {
				lines = append(lines, fmt.Sprintf("… %d more", len(q.Fields)-i))
				break
			}
			lines = append(lines, fieldLine(f))
		}
		b.WriteString("\n\nIt asks for:\n\n" + fence(strings.Join(lines, "\n")))
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(b.String()))}
}

// pageLink shows the page a question asks to open: as a link whose text is
// the address itself, so it cannot read as another, or in a code block when
// it is no plain address.
func pageLink(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || len(u) > 2000 ||
		strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == '<' || r == '>' || r == '`' || r >= 0x7f }) {
		return fence(visible(cut.Clip(u, 2000)))
	}
	return "<" + u + ">"
}

// fieldLine says what a field asks for, on one line (plain text, shown in
// a code block).
func fieldLine(f ask.Field) string {
	name := cut.Line(visible(f.Name), maxQuestionName)
	if f.Title != "" && f.Title != f.Name {
		name += " (" + cut.Line(visible(f.Title), maxQuestionName) + ")"
	}
	parts := []string{fieldKind(f)}
	if f.Required {
		parts = append(parts, "required")
	}
	if f.Default != nil {
		parts = append(parts, "default "+cut.Line(visible(fmt.Sprint(f.Default)), maxQuestionName))
	}
	line := name + ": " + strings.Join(parts, ", ")
	if f.Description != "" {
		line += " — " + cut.Line(visible(f.Description), 300)
	}
	return line
}

// fieldKind says what kind of answer a field takes.
func fieldKind(f ask.Field) string {
	bounds := func(lo, hi *float64) string {
		switch {
		case lo != nil && hi != nil:
			return fmt.Sprintf(" from %g to %g", *lo, *hi)
		case lo != nil:
			return fmt.Sprintf(" of at least %g", *lo)
		case hi != nil:
			return fmt.Sprintf(" of at most %g", *hi)
		}
		return ""
	}
	choices := func() string {
		var names []string
		for i, o := range f.Options {
			if i == maxQuestionOptions {
				names = append(names, fmt.Sprintf("… %d more", len(f.Options)-i))
				break
			}
			names = append(names, cut.Line(visible(cmp.Or(o.Title, o.Value)), maxQuestionName))
		}
		return strings.Join(names, " | ")
	}
	switch f.Type {
	case ask.TypeString:
		kind := "text"
		switch f.Format {
		case "email":
			kind = "an email address"
		case "uri":
			kind = "an address (URI)"
		case "date":
			kind = "a date"
		case "date-time":
			kind = "a date and time"
		}
		if f.MinLength != nil || f.MaxLength != nil {
			kind += fmt.Sprintf(" (%s characters)", strings.TrimPrefix(bounds(intf(f.MinLength), intf(f.MaxLength)), " "))
		}
		return kind
	case ask.TypeNumber:
		return "a number" + bounds(f.Min, f.Max)
	case ask.TypeInteger:
		return "a whole number" + bounds(f.Min, f.Max)
	case ask.TypeBoolean:
		return "yes or no"
	case ask.TypeChoice:
		return "one of " + choices()
	case ask.TypeChoices:
		return "any of " + choices()
	}
	return cut.Line(visible(f.Type), maxQuestionName)
}

func intf(p *int) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

// visible shows the control and format characters of text someone else
// wrote (a server's) instead of passing them on: newlines and tabs stay,
// the rest are written as \xNN or \uNNNN, so a bidirectional override
// cannot make the question read other than it is.
func visible(s string) string {
	hidden := func(r rune) bool {
		return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || unicode.Is(unicode.Cf, r))
	}
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hidden(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// code is s as a Markdown code span, whatever backticks it holds.
func code(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}
