package term

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
)

// A question an MCP server puts to the person during a run (its
// elicitation: a form to fill in, a page to open, or a plain yes or no),
// asked at the terminal: in zero chat at its prompt, field after field
// (Enter takes the server's default, Esc declines); in zero run on stderr
// and stdin as its approvals are, or declined when no one can answer. Who
// asks is named, and what the server wrote is shown as its words, never
// let act on the terminal or pass for Zero's.

// questionTool is the Tool of a server's question among the chat's
// questions (chatUI.asks).
const questionTool = "/mcp-question"

// Bounds on what a server's question shows.
const (
	maxQuestionText  = 2000 // bytes of its message
	maxQuestionLines = 20   // lines of its message
	maxQuestionName  = 100  // a server's, a field's or an option's name
	// maxTries is how many answers that do not fit a field zero run takes
	// before it declines the question.
	maxTries = 3
)

// serverName is a server's name, on one line, its controls shown.
func serverName(name string) string {
	return termsafe.Reviewable(cut.Line(name, maxQuestionName))
}

// questionHead is the line that says who asks.
func questionHead(q ask.Question) string {
	return "the MCP server " + serverName(q.Server) + " asks (its words, not Zero's):"
}

// questionBody is the server's message, its controls shown, cut to a few
// lines, then the page it asks to open; each line indented.
func questionBody(q ask.Question) []string {
	lines := strings.Split(strings.TrimRight(cut.Clip(q.Message, maxQuestionText), "\n"), "\n")
	var out []string
	for i, l := range lines {
		if i == maxQuestionLines {
			out = append(out, fmt.Sprintf("  … %d more lines", len(lines)-i))
			break
		}
		out = append(out, "  "+termsafe.Reviewable(l))
	}
	if q.URL != "" {
		out = append(out, "  the page to open: "+termsafe.Reviewable(cut.Clip(q.URL, maxQuestionText)))
	}
	return out
}

// questionAsked is the one line a question is remembered by: who asked
// and the start of what.
func questionAsked(server, message string) string {
	return "the MCP server " + serverName(server) + " asked: " + termsafe.Reviewable(cut.Line(message, 200))
}

// answerWord says what was answered.
func answerWord(action string) string {
	switch action {
	case ask.Accept:
		return "answered"
	case ask.Decline:
		return "declined"
	}
	return "not answered"
}

// fieldLabel is how a field is asked for: its title (else its name), what
// it takes, whether it is required, its default.
func fieldLabel(f ask.Field) string {
	label := termsafe.Reviewable(cut.Line(cmp.Or(f.Title, f.Name), maxQuestionName))
	parts := []string{fieldKind(f)}
	if f.Required {
		parts = append(parts, "required")
	}
	if f.Default != nil {
		parts = append(parts, "default "+shownValue(f, f.Default))
	}
	return label + " (" + strings.Join(parts, ", ") + ")"
}

// fieldNotes are the lines under a field's label: its description and its
// options, numbered.
func fieldNotes(f ask.Field) []string {
	var out []string
	if f.Description != "" {
		out = append(out, termsafe.Reviewable(cut.Line(f.Description, 300)))
	}
	for i, o := range f.Options {
		out = append(out, fmt.Sprintf("%d) %s", i+1, optionName(o)))
	}
	return out
}

func optionName(o ask.Option) string {
	name := termsafe.Reviewable(cut.Line(cmp.Or(o.Title, o.Value), maxQuestionName))
	if o.Title != "" && o.Title != o.Value {
		name += " (" + termsafe.Reviewable(cut.Line(o.Value, maxQuestionName)) + ")"
	}
	return name
}

// shownValue is a value of f (its default) as the person reads it.
func shownValue(f ask.Field, v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []string:
		return termsafe.Reviewable(cut.Line(strings.Join(v, ", "), maxQuestionName))
	}
	return termsafe.Reviewable(cut.Line(fmt.Sprint(v), maxQuestionName))
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
	switch f.Type {
	case ask.TypeString:
		switch f.Format {
		case "email":
			return "an email address"
		case "uri":
			return "an address (URI)"
		case "date":
			return "a date, YYYY-MM-DD"
		case "date-time":
			return "a date and time, RFC 3339"
		}
		return "text"
	case ask.TypeNumber:
		return "a number" + bounds(f.Min, f.Max)
	case ask.TypeInteger:
		return "a whole number" + bounds(f.Min, f.Max)
	case ask.TypeBoolean:
		return "y or n"
	case ask.TypeChoice:
		return "the number of one option"
	case ask.TypeChoices:
		return "the numbers of any options, with commas"
	}
	return termsafe.Reviewable(cut.Line(f.Type, maxQuestionName))
}

// fieldValue is what was typed for f, as the form holds it; set is false
// when nothing was (the default, if any, stands). The error says what to
// type instead; it never repeats what was typed (it may be a secret).
func fieldValue(f ask.Field, typed string) (v any, set bool, err error) {
	s := strings.TrimSpace(typed)
	if s == "" {
		if f.Default == nil && f.Required {
			return nil, false, errors.New("this one is required")
		}
		return nil, false, nil
	}
	switch f.Type {
	case ask.TypeBoolean:
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			v = true
		case "n", "no", "false":
			v = false
		default:
			return nil, false, errors.New("answer y or n")
		}
	case ask.TypeChoice:
		o, ok := pickOption(f, s)
		if !ok {
			return nil, false, fmt.Errorf("type the number of one option, 1 to %d", len(f.Options))
		}
		v = o.Value
	case ask.TypeChoices:
		var picked []string
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			o, ok := pickOption(f, part)
			if !ok {
				return nil, false, fmt.Errorf("type the numbers of options, 1 to %d, with commas", len(f.Options))
			}
			picked = append(picked, o.Value)
		}
		v = picked
	default:
		v = s // a number is read by Complete ("3" is 3)
	}
	// Checked as the whole form will be: the type, the bounds, the format.
	one := ask.Question{Fields: []ask.Field{f}}
	a, err := one.Complete(ask.Answer{Action: ask.Accept, Content: map[string]any{f.Name: v}})
	if err != nil {
		// The field is the one asked: its name goes.
		why, _ := strings.CutPrefix(err.Error(), fmt.Sprintf("field %q: ", f.Name))
		return nil, false, errors.New(termsafe.Visible(why))
	}
	return a.Content[f.Name], true, nil
}

// pickOption is the option s names: its number, its value, or its title.
func pickOption(f ask.Field, s string) (ask.Option, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1], true
	}
	for _, o := range f.Options {
		if o.Value == s || strings.EqualFold(o.Title, s) || strings.EqualFold(o.Value, s) {
			return o, true
		}
	}
	return ask.Option{}, false
}

// yesNo reads a yes or a no ("" when it is neither).
func yesNo(typed string) string {
	switch strings.ToLower(strings.TrimSpace(typed)) {
	case "y", "yes":
		return "yes"
	case "n", "no":
		return "no"
	}
	return ""
}

// zero run

// askQuestion puts the question e (question_requested) announces to the
// person at the terminal, unless it was answered already; without a
// terminal, or with --json, no one can answer, and it is declined.
func (t *termAsker) askQuestion(ctx context.Context, e server.Event) {
	if t.questions == nil || e.Question == nil {
		return
	}
	q := *e.Question
	q.ID = e.Text
	if !slices.ContainsFunc(t.questions.PendingQuestions(e.Session), func(p ask.Question) bool { return p.ID == q.ID }) {
		return
	}
	if t.in == nil || t.noQuestions != "" {
		why := cmp.Or(t.noQuestions, "zero run has no terminal to ask on")
		fmt.Fprintf(t.out, "zero: declined the question of the MCP server %s: no one could answer it (%s)\n", serverName(q.Server), why)
		_ = t.questions.AnswerQuestion(q.ID, ask.Declined)
		return
	}
	fmt.Fprintln(t.out, "\nzero: "+questionHead(q))
	for _, l := range questionBody(q) {
		fmt.Fprintln(t.out, l)
	}
	a, ok := t.fillIn(ctx, q)
	if !ok {
		return // the run ended: the broker resolved the question
	}
	if err := t.questions.AnswerQuestion(q.ID, a); err != nil {
		fmt.Fprintln(t.out, "zero: (the question was no longer waiting)")
		return
	}
	fmt.Fprintf(t.out, "zero: %s the question of the MCP server %s\n", answerWord(a.Action), serverName(q.Server))
}

// fillIn asks q on the terminal and returns the answer; false when the run
// ended first. A closed stdin declines.
func (t *termAsker) fillIn(ctx context.Context, q ask.Question) (ask.Answer, bool) {
	read := func(prompt string) (string, bool, bool) {
		fmt.Fprint(t.out, prompt)
		select {
		case <-ctx.Done():
			return "", false, false
		case <-t.ended:
			return "", false, false
		case l, ok := <-t.typed():
			return l, ok, true
		}
	}
	first := "accept? [y]es, [N]o: "
	switch {
	case q.URL != "":
		first = "open the page, then say: done? [y]es, [N]o (declines): "
	case len(q.Fields) > 0:
		first = "fill it in? [y]es, [N]o (declines): "
	}
	l, got, live := read(first)
	switch {
	case !live:
		return ask.Answer{}, false
	case !got || yesNo(l) != "yes":
		return ask.Declined, true
	case len(q.Fields) == 0:
		return ask.Answer{Action: ask.Accept}, true
	}
	values := map[string]any{}
	for _, f := range q.Fields {
		fmt.Fprintln(t.out, "  "+fieldLabel(f))
		for _, n := range fieldNotes(f) {
			fmt.Fprintln(t.out, "    "+n)
		}
		for try := 1; ; try++ {
			l, got, live := read("  > ")
			if !live {
				return ask.Answer{}, false
			}
			if !got {
				return ask.Declined, true
			}
			v, set, err := fieldValue(f, l)
			if err == nil {
				if set {
					values[f.Name] = v
				}
				break
			}
			if try == maxTries {
				fmt.Fprintf(t.out, "  %s; declining after %d answers that did not fit\n", err, maxTries)
				return ask.Declined, true
			}
			fmt.Fprintf(t.out, "  %s\n", err)
		}
	}
	a, err := q.Complete(ask.Answer{Action: ask.Accept, Content: values})
	if err != nil { // each field was checked: this is the form's own fault
		fmt.Fprintln(t.out, "  "+termsafe.Visible(err.Error())+"; declining")
		return ask.Declined, true
	}
	return a, true
}

// zero chat

// formState is the answer being given in the chat to a server's question:
// the field asked now and the values given so far (never printed: one may
// be a secret).
type formState struct {
	q      ask.Question
	field  int
	values map[string]any
}

// questionEvent follows a session's questions: a new one joins the
// questions asked here; one resolved elsewhere (another face, the run's
// end) leaves them.
func (m *chatUI) questionEvent(e server.Event) {
	switch e.Type {
	case server.EventQuestionRequested:
		if e.Question == nil || slices.ContainsFunc(m.asks, func(r server.Request) bool { return r.ID == e.Text }) {
			return
		}
		q := *e.Question
		q.ID = e.Text
		m.addQuestion(q)
	case server.EventQuestionResolved:
		n := len(m.asks)
		m.asks = slices.DeleteFunc(m.asks, func(r server.Request) bool { return r.ID == e.Text })
		delete(m.forms, e.Text)
		if len(m.asks) < n && e.Status != ask.Cancel {
			m.view.line(m.view.style(fmt.Sprintf("(the question of the MCP server %s was %s elsewhere)", serverName(e.Title), answerWord(e.Status)), dim))
		}
	}
}

func (m *chatUI) addQuestion(q ask.Question) {
	if m.forms == nil {
		m.forms = map[string]*formState{}
	}
	m.forms[q.ID] = &formState{q: q, values: map[string]any{}}
	m.asks = append(m.asks, server.Request{ID: q.ID, Tool: questionTool, Session: q.Session, Title: q.Server, Subject: q.Message})
}

// addPendingQuestions asks here the questions a session resumed waits
// for.
func (m *chatUI) addPendingQuestions(session string) {
	if qs := m.c.Manager.Questions(); qs != nil {
		for _, q := range qs.PendingQuestions(session) {
			m.addQuestion(q)
		}
	}
}

// questionPreview prints, as the question comes up, who asks and the
// server's words.
func (m *chatUI) questionPreview(r server.Request) {
	fs := m.forms[r.ID]
	if fs == nil {
		return
	}
	for _, row := range m.wrap(questionHead(fs.q)) {
		m.view.line(m.view.style(row, bold, yellow))
	}
	for _, l := range questionBody(fs.q) {
		for _, row := range m.wrap(l) {
			m.view.line(row)
		}
	}
}

// questionView is the question shown in the prompt area: the field asked
// now (or the yes or no), and the answer being typed.
func (m *chatUI) questionView() string {
	fs := m.forms[m.asks[0].ID]
	var b strings.Builder
	line := func(s string, styles ...string) {
		for _, row := range m.wrap(s) {
			b.WriteString(m.view.style(row, styles...) + "\n")
		}
	}
	a := m.ask
	hint := "y: yes · n: no, then Enter · Esc declines"
	switch {
	case fs == nil:
		return ""
	case fs.q.URL != "":
		line("Open the page above; done? [y]es/[n]o", bold, yellow)
	case len(fs.q.Fields) == 0:
		line("Accept? [y]es/[n]o", bold, yellow)
	default:
		f := fs.q.Fields[fs.field]
		line(fmt.Sprintf("%d/%d %s", fs.field+1, len(fs.q.Fields), fieldLabel(f)), bold, yellow)
		for _, n := range fieldNotes(f) {
			line("  "+n, dim)
		}
		hint = "type the answer, then Enter (nothing: the default) · Esc declines the whole form"
	}
	if !a.ready {
		b.WriteString(m.view.style("…", dim))
	} else {
		b.WriteString(m.view.style(hint, dim))
	}
	if a.typed != "" {
		b.WriteString("\nanswer: " + termsafe.Visible(cut.Clip(a.typed, 200)))
	}
	if a.note != "" {
		b.WriteString("\n" + m.view.style(a.note, yellow))
	}
	if m.input.Value() != "" {
		b.WriteString("\n" + m.view.style("your message, kept for after the answer:", dim) + "\n" + m.input.View())
	}
	return b.String()
}

// questionKey handles a key while a server's question is shown: what is
// typed is the answer to the field asked, Enter gives it, Esc declines.
// Keys typed before the question is ready go to the message being
// written, as at an approval.
func (m *chatUI) questionKey(msg tea.KeyPressMsg) tea.Cmd {
	a := &m.ask
	text, cmd, taken := m.askPrelude(msg)
	if taken {
		return cmd
	}
	switch {
	case msg.Code == tea.KeyEscape:
		return m.answerQuestion(ask.Declined)
	case isEnter(msg):
		typed, typing := a.typed, a.typing
		a.typed, a.typing = "", false
		if typing {
			// The end of a message typed as the question came: kept for
			// after it, never taken as an answer.
			if typed != "" {
				m.toDraft(typed)
			}
			a.note = "that was taken as part of your message, not as an answer"
			return nil
		}
		return m.questionEnter(typed)
	case msg.Code == tea.KeyBackspace && a.typed != "":
		_, n := utf8.DecodeLastRuneInString(a.typed)
		a.typed = a.typed[:len(a.typed)-n]
		return nil
	case text != "":
		a.typed += text
		return nil
	}
	return m.edit(msg)
}

// questionPaste takes a paste as the answer being typed to a server's
// question (a token copied from elsewhere); false when no question is
// ready for it.
func (m *chatUI) questionPaste(msg tea.PasteMsg) bool {
	if len(m.asks) == 0 || m.asks[0].Tool != questionTool || !m.ask.ready || m.ask.typing {
		return false
	}
	m.ask.typed += strings.Join(strings.Fields(msg.Content), " ")
	return true
}

// questionEnter takes what was typed as the answer to the field asked (or
// to the yes or no), and once the last field is answered, answers the
// question.
func (m *chatUI) questionEnter(typed string) tea.Cmd {
	fs := m.forms[m.asks[0].ID]
	if fs == nil {
		return m.answerQuestion(ask.Declined)
	}
	if len(fs.q.Fields) == 0 {
		switch yesNo(typed) {
		case "yes":
			return m.answerQuestion(ask.Answer{Action: ask.Accept})
		case "no":
			return m.answerQuestion(ask.Declined)
		}
		m.ask.note = "answer y or n (Esc declines)"
		return nil
	}
	f := fs.q.Fields[fs.field]
	v, set, err := fieldValue(f, typed)
	if err != nil {
		m.ask.note = err.Error()
		return nil
	}
	if set {
		fs.values[f.Name] = v
	} else {
		delete(fs.values, f.Name)
	}
	if fs.field++; fs.field < len(fs.q.Fields) {
		return nil
	}
	a, err := fs.q.Complete(ask.Answer{Action: ask.Accept, Content: fs.values})
	if err != nil { // each field was checked: the form is at fault
		m.ask.note = termsafe.Visible(err.Error())
		fs.field = 0
		return nil
	}
	return m.answerQuestion(a)
}

// answerQuestion gives a to the question shown.
func (m *chatUI) answerQuestion(a ask.Answer) tea.Cmd {
	req := m.asks[0]
	m.asks = m.asks[1:]
	delete(m.forms, req.ID)
	m.view.line(questionAsked(req.Title, req.Subject) + " " + m.view.style(answerWord(a.Action), bold))
	qs := m.c.Manager.Questions()
	if qs == nil || qs.AnswerQuestion(req.ID, a) != nil { // answered elsewhere, or the run ended
		m.view.line(m.view.style("(the question was no longer waiting)", dim))
	}
	return nil
}

// replayQuestion is the line of the chat's transcript for a question's
// event: who asked what, and the answer, once it is resolved.
func replayQuestion(e server.Event, asked map[string]server.Request) (string, bool) {
	switch e.Type {
	case server.EventQuestionRequested:
		if e.Question != nil {
			asked[e.Text] = server.Request{Tool: questionTool, Title: e.Question.Server, Subject: e.Question.Message}
		}
		return "", false
	case server.EventQuestionResolved:
		r, ok := asked[e.Text]
		if !ok {
			r = server.Request{Title: e.Title}
		}
		return questionAsked(r.Title, r.Subject) + " " + answerWord(e.Status), true
	}
	return "", false
}
