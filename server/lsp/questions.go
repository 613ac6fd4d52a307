package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server"
)

// A question an MCP server asks during a run (an elicitation: a form to
// fill in, or a page to open) reaches every client as a question_requested
// zero/event. Zero's own view (a client that answers approvals with
// zero/approve, initializationOptions {"approvals": "events"}) shows it as
// a form and answers with zero/answer. Any other client is asked with
// window/showMessageRequest when the question fits a row of buttons; when
// it does not, the question is declined at once and the user told why: a
// server waiting for a form no one can fill in would hold the run up.

// The buttons of the questions put with window/showMessageRequest.
const (
	questionAccept  = "Accept"
	questionDecline = "Decline"
	questionYes     = "Yes"
	questionNo      = "No"
	questionOpen    = "Open" // opens the page (window/showDocument external), then accepts
	questionDone    = "Done" // the page was opened by hand: the client cannot open it
)

// Bounds of what a server's question puts on the user's screen.
const (
	maxQuestionMessage = 2000 // bytes of the server's message
	maxQuestionButtons = 8    // options of a choice shown as buttons
	maxAnswerFields    = 100  // fields in zero/answer's content
)

// answerParams are zero/answer's params: the question's id (the
// question_requested event's text), what the person did, and with accept
// the form's values by field name.
type answerParams struct {
	ID      *string        `json:"id"`
	Action  *string        `json:"action"`
	Content map[string]any `json:"content"`
}

// answer is zero/answer: the person's answer to a waiting question.
func (c *conn) answer(_ *jsonrpc2.Conn, params json.RawMessage) (continuation, error) {
	var p answerParams
	if err := decode(params, &p, ""); err != nil {
		return continuation{}, err
	}
	if p.ID == nil || *p.ID == "" {
		return continuation{}, invalidParams("id", "required")
	}
	if p.Action == nil {
		return continuation{}, invalidParams("action", "required: accept, decline or cancel")
	}
	switch *p.Action {
	case ask.Accept, ask.Decline, ask.Cancel:
	default:
		return continuation{}, invalidParams("action", "one of accept, decline or cancel, not %q", cut.Clip(*p.Action, 40))
	}
	qs := c.opts.Manager.Questions()
	if qs == nil {
		return continuation{}, fmt.Errorf("zero/answer: %w: no question broker", server.ErrUnsupported)
	}
	a := ask.Answer{Action: *p.Action}
	if a.Action == ask.Accept {
		q, ok := pendingQuestion(qs, *p.ID)
		if !ok {
			return continuation{}, notWaiting(*p.ID)
		}
		content, err := answerContent(q, p.Content)
		if err != nil {
			return continuation{}, err
		}
		a.Content = content
	}
	if err := qs.AnswerQuestion(*p.ID, a); errors.Is(err, server.ErrNotFound) {
		return continuation{}, notWaiting(*p.ID)
	} else if err != nil {
		return continuation{}, fmt.Errorf("zero/answer: %w", err)
	}
	return done(nil), nil
}

// notWaiting is zero/answer's error for a question that is not waiting:
// never asked, answered already (by another client, or the first click),
// or its run ended.
func notWaiting(id string) error {
	return fmt.Errorf("zero/answer: no question %q is waiting (answered already, or its run ended): %w", cut.Clip(id, 40), server.ErrNotFound)
}

func pendingQuestion(qs server.Questions, id string) (ask.Question, bool) {
	for _, q := range qs.PendingQuestions("") {
		if q.ID == id {
			return q, true
		}
	}
	return ask.Question{}, false
}

// answerContent is the form's values checked and completed as the asker
// will get them (ask.Question.Complete: the defaults of what was left out,
// each value of its field's type, within its bounds), so a value the form
// does not take is an error the person can fix. Errors name the field,
// never its value: what the person typed may be a secret.
func answerContent(q ask.Question, in map[string]any) (map[string]any, error) {
	if len(in) > maxAnswerFields {
		return nil, invalidParams("content", "has %d fields; the form has %d", len(in), len(q.Fields))
	}
	for name := range in {
		if !slices.ContainsFunc(q.Fields, func(f ask.Field) bool { return f.Name == name }) {
			return nil, invalidParams("content", "the form has no field %q", cut.Clip(name, 64))
		}
	}
	a, err := q.Complete(ask.Answer{Action: ask.Accept, Content: in})
	if err != nil {
		return nil, invalidParams("content", "%v", err)
	}
	return a.Content, nil
}

// askQuestion puts a question to a client that is not Zero's view, from a
// goroutine of its own: the answer may take minutes.
func (c *conn) askQuestion(t *tracked, q *ask.Question) {
	caps := c.capabilities()
	if q == nil || q.ID == "" || !caps.ask {
		return // Zero's view answers with zero/answer
	}
	qs := c.opts.Manager.Questions()
	if qs == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.questioning[q.ID]; ok || c.closing {
		return
	}
	qctx, cancel := context.WithCancel(c.ctx)
	c.questioning[q.ID] = cancel
	question := *q
	c.wg.Go(func() { // under mu with closing false
		defer func() {
			c.mu.Lock()
			delete(c.questioning, question.ID)
			c.mu.Unlock()
			cancel()
		}()
		c.putQuestion(qctx, t, qs, question, caps.openURL)
	})
}

// askPendingQuestions asks again the questions of a replayed session that
// still wait.
func (c *conn) askPendingQuestions(t *tracked) {
	qs := c.opts.Manager.Questions()
	if qs == nil {
		return
	}
	for _, q := range qs.PendingQuestions(t.sess.ID()) {
		c.askQuestion(t, &q)
	}
}

// stopQuestion stops waiting for the prompt of a question answered
// otherwise (another client, zero/answer) or abandoned (its run ended).
func (c *conn) stopQuestion(id string) {
	c.mu.Lock()
	cancel := c.questioning[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// putQuestion asks with window/showMessageRequest and answers with the
// button chosen; a question that does not fit buttons is declined, and
// the user told.
func (c *conn) putQuestion(ctx context.Context, t *tracked, qs server.Questions, q ask.Question, canOpen bool) {
	pr, why := promptFor(q, canOpen)
	if why != "" {
		c.answerQuestion(qs, q.ID, ask.Declined)
		c.tell(ctx, t, protocol.MessageTypeWarning, fmt.Sprintf(
			"Zero: the MCP server %q asked a question this editor cannot show (%s), so it was declined. "+
				"Zero's VS Code view and `zero chat` can answer it.", q.Server, why))
		return
	}
	var choice *protocol.MessageActionItem
	err := t.rc.Call(ctx, "window/showMessageRequest", &protocol.ShowMessageRequestParams{
		Type: protocol.MessageTypeInfo, Message: pr.message, Actions: pr.actions}, &choice)
	var rerr *jsonrpc2.Error
	switch {
	case errors.As(err, &rerr):
		// The client cannot ask: no one here can answer.
		c.log.Info("the client refused showMessageRequest: the question is declined", "id", q.ID, "server", q.Server, "err", err)
		c.answerQuestion(qs, q.ID, ask.Declined)
		return
	case err != nil:
		// Answered elsewhere, the run ended, or the connection closes.
		c.log.Debug("question prompt ended without an answer", "id", q.ID, "err", err)
		return
	case choice == nil: // dismissed
		c.answerQuestion(qs, q.ID, ask.Answer{Action: ask.Cancel})
		return
	}
	a, ok := pr.answers[choice.Title]
	if !ok {
		c.answerQuestion(qs, q.ID, ask.Answer{Action: ask.Cancel})
		return
	}
	if choice.Title == questionOpen {
		c.openPage(ctx, t, q)
	}
	c.answerQuestion(qs, q.ID, a)
}

func (c *conn) answerQuestion(qs server.Questions, id string, a ask.Answer) {
	if err := qs.AnswerQuestion(id, a); err != nil && !errors.Is(err, server.ErrNotFound) {
		c.log.Warn("answer to a question not applied", "id", id, "err", err)
	}
}

// openPage opens a URL question's page in the user's browser
// (window/showDocument external), or says where it is when that fails.
func (c *conn) openPage(ctx context.Context, t *tracked, q ask.Question) {
	u, err := url.Parse(q.URL)
	if err != nil {
		return // promptFor offers Open only for a good http(s) URL
	}
	cctx, cancel := context.WithTimeout(ctx, createTimeout)
	var res protocol.ShowDocumentResult
	err = t.rc.Call(cctx, "window/showDocument", &protocol.ShowDocumentParams{URI: protocol.URI(u.String()), External: true}, &res)
	cancel()
	if err != nil || !res.Success {
		c.log.Debug("the page of a question was not opened", "id", q.ID, "err", err)
		c.tell(ctx, t, protocol.MessageTypeWarning, fmt.Sprintf("Zero could not open the page the MCP server %q asks for; open it yourself: %s", q.Server, u.String()))
	}
}

func (c *conn) tell(ctx context.Context, t *tracked, typ protocol.MessageType, msg string) {
	if err := t.rc.Notify(ctx, "window/showMessage", &protocol.ShowMessageParams{Type: typ, Message: msg}); err != nil {
		c.log.Debug("message not shown", "err", err)
	}
}

// prompt is a question as window/showMessageRequest puts it: the text,
// the buttons, and the answer each button gives.
type prompt struct {
	message string
	actions []protocol.MessageActionItem
	answers map[string]ask.Answer
}

func (p *prompt) add(title string, a ask.Answer) bool {
	if _, dup := p.answers[title]; dup || title == "" {
		return false
	}
	p.actions = append(p.actions, protocol.MessageActionItem{Title: title})
	p.answers[title] = a
	return true
}

// promptFor says how q is asked with buttons, or why it cannot be: a
// yes-or-no question (Accept, Decline), a page to open (Open, Decline), one
// boolean field (Yes, No, Decline), one choice (its options, Decline), a
// form whose fields may all be left empty (Accept with the defaults,
// Decline). canOpen: the client opens pages (window/showDocument); else
// the person opens it by hand and says Done.
func promptFor(q ask.Question, canOpen bool) (prompt, string) {
	p := prompt{answers: map[string]ask.Answer{}}
	var b strings.Builder
	fmt.Fprintf(&b, "Zero: the MCP server %q asks: %s", plain(q.Server, 64), plain(q.Message, maxQuestionMessage))
	decline := ask.Answer{Action: ask.Decline}
	switch {
	case q.URL != "":
		u, err := url.Parse(q.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return p, "it asks to open a page whose address is not an http(s) URL"
		}
		fmt.Fprintf(&b, "\n\nThe page: %s", plain(u.String(), maxQuestionMessage))
		title := questionOpen
		if !canOpen {
			title = questionDone
			b.WriteString("\nOpen it in your browser, then choose Done.")
		}
		p.add(title, ask.Answer{Action: ask.Accept})
		p.add(questionDecline, decline)
	case len(q.Fields) == 0:
		p.add(questionAccept, ask.Answer{Action: ask.Accept, Content: map[string]any{}})
		p.add(questionDecline, decline)
	case len(q.Fields) == 1 && q.Fields[0].Type == ask.TypeBoolean:
		f := q.Fields[0]
		fmt.Fprintf(&b, "\n\n%s", fieldLabel(f))
		p.add(questionYes, ask.Answer{Action: ask.Accept, Content: map[string]any{f.Name: true}})
		p.add(questionNo, ask.Answer{Action: ask.Accept, Content: map[string]any{f.Name: false}})
		p.add(questionDecline, decline)
	case len(q.Fields) == 1 && q.Fields[0].Type == ask.TypeChoice:
		f := q.Fields[0]
		if len(f.Options) == 0 || len(f.Options) > maxQuestionButtons {
			return p, fmt.Sprintf("a choice of %d options", len(f.Options))
		}
		fmt.Fprintf(&b, "\n\n%s", fieldLabel(f))
		for _, o := range f.Options {
			if !p.add(plain(cmp.Or(o.Title, o.Value), 60), ask.Answer{Action: ask.Accept, Content: map[string]any{f.Name: o.Value}}) {
				return p, "a choice whose options are not told apart by their names"
			}
		}
		if !p.add(questionDecline, decline) {
			return p, "a choice with an option named Decline"
		}
	default:
		var required []string
		for _, f := range q.Fields {
			if f.Required && f.Default == nil {
				required = append(required, plain(f.Name, 64))
			}
		}
		if len(required) > 0 {
			return p, "a form with fields to fill in: " + strings.Join(required, ", ")
		}
		content := map[string]any{}
		b.WriteString("\n\nAccept answers with:")
		for _, f := range q.Fields {
			v := "(left out)"
			if f.Default != nil {
				content[f.Name] = f.Default
				v = plain(valueText(f.Default), 200)
			}
			fmt.Fprintf(&b, "\n  %s: %s", fieldLabel(f), v)
		}
		p.add(questionAccept, ask.Answer{Action: ask.Accept, Content: content})
		p.add(questionDecline, decline)
	}
	p.message = b.String()
	return p, ""
}

// fieldLabel is a field as the person reads it: its title (else its name)
// and its description.
func fieldLabel(f ask.Field) string {
	s := plain(cmp.Or(f.Title, f.Name), 100)
	if f.Description != "" {
		s += " (" + plain(f.Description, 300) + ")"
	}
	return s
}

func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []string:
		return strings.Join(v, ", ")
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// plain is text a server wrote, made safe to show as plain text: at most n
// bytes, no control characters but line breaks and tabs, no characters
// that reorder what is shown (bidirectional overrides), and no Markdown
// link (some editors render "[text](command:…)" in a message as a link
// that runs a command).
func plain(s string, n int) string {
	s = cut.Clip(s, n)
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n', r == '\t':
			return r
		case unicode.IsControl(r), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return -1
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "](", "]\u200b(")
}

// tellLogin shows a client that is not Zero's view (which has its own Log
// in button) a warning that an MCP server needs the person to log in, as
// a message: something to do, not a line in a log.
func (c *conn) tellLogin(ctx context.Context, t *tracked, text string) {
	if _, login := server.LoginHinted(text); !login || !c.capabilities().ask {
		return
	}
	t.notify(ctx, "window/showMessage", &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: "Zero: " + text})
}
