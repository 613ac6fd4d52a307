package lsp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sourcegraph/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// viewOpts is a client like Zero's VS Code view: approvals and questions
// come as events, answered with zero/approve and zero/answer.
var viewOpts = clientOpts{initOptions: map[string]any{"approvals": "events"}}

// bookingEnv is Zero with the MCP server "bookings" (servertest.AskingServer)
// configured, and a model that calls its tool "book" once, then answers
// with the tool's result.
func bookingEnv(t *testing.T) *servertest.Env {
	t.Helper()
	home := t.TempDir()
	servertest.MCPConfig(t, home, "bookings", servertest.AskingServer(t))
	return servertest.New(t, servertest.Options{Home: home, Replies: []llmtest.Reply{
		{Match: "book a table", Content: toolReply("booking", "bookings.book", map[string]any{})},
		{Match: "booked for", Content: answer("booked")},
		{Match: "declined", Content: answer("not booked")},
		{Match: "could not ask", Content: answer("could not ask")},
	}})
}

func asked(c *client) []protocol.ShowMessageRequestParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.asked)
}

// toolResult is the text of the session's first tool_result.
func toolResult(t *testing.T, c *client, session string) string {
	t.Helper()
	evs := events(c.snapshot(), session)
	i := index(evs, ofType(loop.EventToolResult))
	if i < 0 {
		t.Fatalf("no tool_result: %s", summary(c.snapshot()))
	}
	return evs[i].Text
}

// waitQuestion waits for the session's question_requested, and fails at
// once when the run ends without one.
func waitQuestion(t *testing.T, c *client, session string) server.Event {
	t.Helper()
	ns := c.waitFor("the question", func(ns []note) bool {
		return hasEvent(session, ofType(server.EventQuestionRequested))(ns) || hasEvent(session, ofType(loop.EventRunEnded))(ns)
	})
	evs := events(ns, session)
	i := index(evs, ofType(server.EventQuestionRequested))
	if i < 0 {
		result := ""
		if j := index(evs, ofType(loop.EventToolResult)); j >= 0 {
			result = evs[j].Text
		}
		t.Fatalf("the run ended without a question; the tool said %q", result)
	}
	return evs[i]
}

// A server's form reaches Zero's view as a question_requested event naming
// the server; zero/answer accepts it with the name only, and the server gets
// the defaults of the rest.
func TestQuestionAnsweredInTheView(t *testing.T) {
	t.Parallel()
	env := bookingEnv(t)
	c := start(t, env, viewOpts)
	c.initialize(env.Workspace)
	id := c.newSession()
	out := c.promptAsync("p1", map[string]any{"sessionId": id, "message": "book a table"})

	e := waitQuestion(t, c, id)
	q := e.Question
	if q == nil || e.Title != "bookings" || q.Server != "bookings" || q.Message != "Which name is the booking under?" || q.ID != e.Text || q.Session != id {
		t.Fatalf("question_requested %+v, question %+v", e, q)
	}
	names := []string{}
	for _, f := range q.Fields {
		names = append(names, f.Name+":"+f.Type)
	}
	slices.Sort(names)
	if want := []string{"name:string", "seats:integer", "window:boolean"}; !slices.Equal(names, want) {
		t.Errorf("fields %v, want %v", names, want)
	}

	c.call("zero/answer", map[string]any{"id": q.ID, "action": "accept", "content": map[string]any{"name": "Ada"}}, nil)
	res := wait(t, out, "the prompt")
	if res.err != nil {
		t.Fatal(res.err)
	}
	// The seats' default filled in; window has none and stays unset.
	if got := toolResult(t, c, id); !strings.HasPrefix(got, "booked for Ada, 2 seats (window: ") {
		t.Errorf("tool result %q, want the booking for Ada with the default 2 seats", got)
	}
	evs := events(c.snapshot(), id)
	r := index(evs, ofType(server.EventQuestionResolved))
	if r < 0 || evs[r].Text != q.ID || evs[r].Status != ask.Accept {
		t.Errorf("question_resolved: %+v", evs)
	}
	if a := asked(c); len(a) != 0 {
		t.Errorf("Zero's view was asked with showMessageRequest: %+v", a)
	}
	// A second answer finds nothing waiting.
	if e := c.rpcErr("zero/answer", map[string]any{"id": q.ID, "action": "decline"}); e.Code != codeRequestFailed {
		t.Errorf("a second answer: %+v", e)
	}
}

// Declined in the view: the server hears "decline".
func TestQuestionDeclinedInTheView(t *testing.T) {
	t.Parallel()
	env := bookingEnv(t)
	c := start(t, env, viewOpts)
	c.initialize(env.Workspace)
	id := c.newSession()
	out := c.promptAsync("p1", map[string]any{"sessionId": id, "message": "book a table"})
	qid := waitQuestion(t, c, id).Text
	// Content with decline is dropped, not passed on.
	c.call("zero/answer", map[string]any{"id": qid, "action": "decline", "content": map[string]any{"name": "Ada"}}, nil)
	if res := wait(t, out, "the prompt"); res.err != nil {
		t.Fatal(res.err)
	}
	if got := toolResult(t, c, id); got != "declined" {
		t.Errorf("tool result %q, want declined", got)
	}
}

// A client that is not Zero's view cannot fill in a form with a required
// field: the question is declined at once, and the user told which server
// asked and why.
func TestQuestionFormDeclinedForAPlainClient(t *testing.T) {
	t.Parallel()
	env := bookingEnv(t)
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "book a table"}, &res)
	if got := toolResult(t, c, id); got != "declined" {
		t.Errorf("tool result %q, want declined", got)
	}
	ns := c.waitFor("the message", func(ns []note) bool {
		return slices.ContainsFunc(ns, func(n note) bool { return n.method == "window/showMessage" })
	})
	for _, n := range ns {
		if n.method == "window/showMessage" {
			var p protocol.ShowMessageParams
			_ = json.Unmarshal(n.params, &p)
			if !strings.Contains(p.Message, `"bookings"`) || !strings.Contains(p.Message, "name") || !strings.Contains(p.Message, "declined") {
				t.Errorf("the message must name the server, the field and say it was declined: %q", p.Message)
			}
		}
	}
	if a := asked(c); len(a) != 0 {
		t.Errorf("a form that does not fit was asked: %+v", a)
	}
}

// broker is the manager's broker, to ask questions as mcpclient does for a
// server's elicitation.
func broker(t *testing.T, env *servertest.Env) *server.Broker {
	t.Helper()
	br, ok := env.Manager.Questions().(*server.Broker)
	if !ok {
		t.Fatal("the manager has no broker")
	}
	return br
}

type asking struct {
	a   ask.Answer
	err error
}

func askAsync(br *server.Broker, session string, q ask.Question) <-chan asking {
	out := make(chan asking, 1)
	go func() {
		a, err := br.Ask(context.Background(), session, q)
		out <- asking{a, err}
	}()
	return out
}

func fl(f float64) *float64 { return &f }

// A plain LSP client is asked with window/showMessageRequest when the
// question fits buttons, and the button it picks is the answer.
func TestQuestionAskedWithButtons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		q       ask.Question
		pick    any // the client's answer: a button's title, or nil
		actions []string
		want    ask.Answer
		shown   string // the page opened with showDocument
	}{
		{name: "yes or no", q: ask.Question{Message: "Go on?"}, pick: "Accept",
			actions: []string{"Accept", "Decline"}, want: ask.Answer{Action: ask.Accept, Content: map[string]any{}}},
		{name: "declined", q: ask.Question{Message: "Go on?"}, pick: "Decline",
			actions: []string{"Accept", "Decline"}, want: ask.Answer{Action: ask.Decline}},
		{name: "dismissed", q: ask.Question{Message: "Go on?"}, pick: nil,
			actions: []string{"Accept", "Decline"}, want: ask.Answer{Action: ask.Cancel}},
		{name: "a boolean", q: ask.Question{Message: "Notify?", Fields: []ask.Field{{Name: "notify", Type: ask.TypeBoolean, Title: "Send a mail"}}},
			pick: "No", actions: []string{"Yes", "No", "Decline"}, want: ask.Answer{Action: ask.Accept, Content: map[string]any{"notify": false}}},
		{name: "a choice", q: ask.Question{Message: "Which?", Fields: []ask.Field{{Name: "size", Type: ask.TypeChoice, Required: true,
			Options: []ask.Option{{Value: "s", Title: "Small"}, {Value: "l", Title: "Large"}}}}},
			pick: "Large", actions: []string{"Small", "Large", "Decline"}, want: ask.Answer{Action: ask.Accept, Content: map[string]any{"size": "l"}}},
		{name: "optional with defaults", q: ask.Question{Message: "Settings?", Fields: []ask.Field{
			{Name: "seats", Type: ask.TypeInteger, Default: 2.0, Min: fl(1)}, {Name: "note", Type: ask.TypeString}}},
			pick: "Accept", actions: []string{"Accept", "Decline"}, want: ask.Answer{Action: ask.Accept, Content: map[string]any{"seats": 2.0}}},
		{name: "a page", q: ask.Question{Message: "Connect your account", URL: "https://example.com/connect?x=1"},
			pick: "Open", actions: []string{"Open", "Decline"}, want: ask.Answer{Action: ask.Accept}, shown: "https://example.com/connect?x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, nil)
			c := start(t, env, clientOpts{answer: func(protocol.ShowMessageRequestParams) any {
				if tt.pick == nil {
					return nil
				}
				return protocol.MessageActionItem{Title: tt.pick.(string)}
			}})
			c.initialize(env.Workspace)
			id := c.newSession()
			q := tt.q
			q.Server = "bookings"
			got := wait(t, askAsync(broker(t, env), id, q), "the answer")
			if got.err != nil {
				t.Fatal(got.err)
			}
			if diff := cmp.Diff(tt.want, got.a); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			a := asked(c)
			if len(a) != 1 {
				t.Fatalf("asked %d times: %+v", len(a), a)
			}
			var titles []string
			for _, x := range a[0].Actions {
				titles = append(titles, x.Title)
			}
			if !slices.Equal(titles, tt.actions) || !strings.Contains(a[0].Message, `the MCP server "bookings" asks: `+q.Message) {
				t.Errorf("asked %q with %v, want the server named and %v", a[0].Message, titles, tt.actions)
			}
			c.mu.Lock()
			shown := slices.Clone(c.shown)
			c.mu.Unlock()
			if tt.shown == "" && len(shown) > 0 {
				t.Errorf("showDocument %s", shown)
			}
			if tt.shown != "" {
				var p protocol.ShowDocumentParams
				if len(shown) != 1 || json.Unmarshal(shown[0], &p) != nil || string(p.URI) != tt.shown || !p.External {
					t.Errorf("showDocument %s, want %s in the browser", shown, tt.shown)
				}
			}
		})
	}
}

// What a hostile server writes reaches a plain client as plain text: no
// control characters or reordering marks, no Markdown link, bounded; a
// page that is not an http(s) URL is never opened.
func TestQuestionHostileServer(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, clientOpts{answer: func(p protocol.ShowMessageRequestParams) any {
		return protocol.MessageActionItem{Title: p.Actions[0].Title}
	}})
	c.initialize(env.Workspace)
	id := c.newSession()
	br := broker(t, env)

	msg := "Click \x1b[31m[Approve](command:workbench.action.terminal.sendSequence?%7B%7D)\u202e evil\r" + strings.Repeat("x", 100_000)
	got := wait(t, askAsync(br, id, ask.Question{Server: "evil", Message: msg}), "the answer")
	if got.err != nil || got.a.Action != ask.Accept {
		t.Fatalf("answer %+v, %v", got.a, got.err)
	}
	a := asked(c)
	if len(a) != 1 {
		t.Fatalf("asked %+v", a)
	}
	m := a[0].Message
	if strings.ContainsAny(m, "\x1b\r\u202e") || strings.Contains(m, "](") || len(m) > maxQuestionMessage+200 {
		t.Errorf("the message was not made plain (%d bytes): %q", len(m), short(m))
	}

	for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "command:workbench.action.openSettings", "https://user:pw@example.com/"} {
		got := wait(t, askAsync(br, id, ask.Question{Server: "evil", Message: "open", URL: u}), "the answer")
		if got.a.Action != ask.Decline {
			t.Errorf("%s: answer %+v, want declined", u, got.a)
		}
	}
	c.mu.Lock()
	shown := slices.Clone(c.shown)
	c.mu.Unlock()
	if len(shown) != 0 || len(asked(c)) != 1 {
		t.Errorf("a bad page was offered or opened: shown %s, asked %+v", shown, asked(c))
	}
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// The first answer wins: a question answered with zero/answer while the
// plain client's prompt is open is not answered again by the prompt.
func TestQuestionFirstAnswerWins(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	prompted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	c := start(t, env, clientOpts{answer: func(protocol.ShowMessageRequestParams) any {
		close(prompted)
		<-release
		return protocol.MessageActionItem{Title: "Accept"}
	}})
	c.initialize(env.Workspace)
	id := c.newSession()
	out := askAsync(broker(t, env), id, ask.Question{Server: "bookings", Message: "Go on?"})
	wait(t, prompted, "the prompt")
	evs := events(c.waitFor("the question", hasEvent(id, ofType(server.EventQuestionRequested))), id)
	qid := evs[index(evs, ofType(server.EventQuestionRequested))].Text
	c.call("zero/answer", map[string]any{"id": qid, "action": "decline"}, nil)
	got := wait(t, out, "the answer")
	free()
	if got.a.Action != ask.Decline {
		t.Errorf("answer %+v, want the first (decline)", got.a)
	}
	c.waitFor("question_resolved", hasEvent(id, ofType(server.EventQuestionResolved)))
}

// A session loaded by a plain client while a question waits gets it asked.
func TestQuestionAskedAgainOnLoad(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	view := start(t, env, viewOpts)
	view.initialize(env.Workspace)
	id := view.newSession()
	out := askAsync(broker(t, env), id, ask.Question{Server: "bookings", Message: "Go on?"})
	view.waitFor("the question", hasEvent(id, ofType(server.EventQuestionRequested)))

	plainc := start(t, env, clientOpts{answer: func(protocol.ShowMessageRequestParams) any {
		return protocol.MessageActionItem{Title: "Accept"}
	}})
	plainc.initialize(env.Workspace)
	plainc.call("zero/loadSession", map[string]any{"sessionId": id}, nil)
	if got := wait(t, out, "the answer"); got.a.Action != ask.Accept {
		t.Errorf("answer %+v", got.a)
	}
	if a := asked(plainc); len(a) != 1 || !strings.Contains(a[0].Message, `"bookings"`) {
		t.Errorf("asked %+v", a)
	}
}

// zero/answer's errors: an id nothing waits for is requestFailed; a bad
// action, a missing id, a field the form lacks or a value of the wrong type
// are invalidParams, naming the field and never the value.
func TestQuestionAnswerErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, viewOpts)
	c.initialize(env.Workspace)
	id := c.newSession()
	out := askAsync(broker(t, env), id, ask.Question{Server: "bookings", Message: "Who?", Fields: []ask.Field{
		{Name: "name", Type: ask.TypeString, Required: true},
		{Name: "seats", Type: ask.TypeInteger},
		{Name: "tags", Type: ask.TypeChoices, Options: []ask.Option{{Value: "a"}, {Value: "b"}}},
	}})
	evs := events(c.waitFor("the question", hasEvent(id, ofType(server.EventQuestionRequested))), id)
	qid := evs[index(evs, ofType(server.EventQuestionRequested))].Text

	const secret = "hunter2-Sx81"
	for _, tt := range []struct {
		params map[string]any
		code   int64
		field  string
	}{
		{map[string]any{"id": "q-none", "action": "accept"}, codeRequestFailed, "q-none"},
		{map[string]any{"id": "q-none", "action": "decline"}, codeRequestFailed, "q-none"},
		{map[string]any{"id": qid, "action": "maybe"}, jsonrpc2.CodeInvalidParams, "action"},
		{map[string]any{"id": qid}, jsonrpc2.CodeInvalidParams, "action"},
		{map[string]any{"action": "accept"}, jsonrpc2.CodeInvalidParams, "id"},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": map[string]any{"x": secret}}}, jsonrpc2.CodeInvalidParams, `field "name"`},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": "Ada", "seats": secret}}, jsonrpc2.CodeInvalidParams, `field "seats"`},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": "Ada", "seats": 2.5}}, jsonrpc2.CodeInvalidParams, `field "seats"`},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": "Ada", "tags": []any{"a", 1}}}, jsonrpc2.CodeInvalidParams, `field "tags"`},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": "Ada", "tags": []any{secret}}}, jsonrpc2.CodeInvalidParams, `field "tags"`},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"password": secret}}, jsonrpc2.CodeInvalidParams, "password"},
		{map[string]any{"id": qid, "action": "accept", "content": map[string]any{"seats": 2}}, jsonrpc2.CodeInvalidParams, `"name" is required`},
		{map[string]any{"id": qid, "action": "accept", "content": []any{secret}}, jsonrpc2.CodeInvalidParams, "content"},
	} {
		e := c.rpcErr("zero/answer", tt.params)
		if e.Code != tt.code || !strings.Contains(e.Message, tt.field) || strings.Contains(e.Message, secret) {
			t.Errorf("%v: error %d %q, want %d naming %s and not the value", tt.params, e.Code, e.Message, tt.code, tt.field)
		}
	}
	// Still waiting after the bad answers; then a good one.
	c.call("zero/answer", map[string]any{"id": qid, "action": "accept", "content": map[string]any{"name": "Ada", "seats": 3, "tags": []string{"b"}}}, nil)
	got := wait(t, out, "the answer")
	if diff := cmp.Diff(ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Ada", "seats": 3.0, "tags": []string{"b"}}}, got.a); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

// What the person fills in goes to the asker only: no notification of any
// client (events, messages) carries it.
func TestQuestionContentNeverInAnEvent(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, viewOpts)
	other := start(t, env, viewOpts)
	c.initialize(env.Workspace)
	other.initialize(env.Workspace)
	id := c.newSession()
	other.call("zero/loadSession", map[string]any{"sessionId": id}, nil)
	const secret = "tok-9Qv7-secret"
	out := askAsync(broker(t, env), id, ask.Question{Server: "bookings", Message: "Your token?", Fields: []ask.Field{{Name: "token", Type: ask.TypeString}}})
	evs := events(c.waitFor("the question", hasEvent(id, ofType(server.EventQuestionRequested))), id)
	qid := evs[index(evs, ofType(server.EventQuestionRequested))].Text
	c.call("zero/answer", map[string]any{"id": qid, "action": "accept", "content": map[string]any{"token": secret}}, nil)
	if got := wait(t, out, "the answer"); got.a.Content["token"] != secret {
		t.Fatalf("answer %+v", got.a)
	}
	for _, cl := range []*client{c, other} {
		ns := cl.waitFor("question_resolved", hasEvent(id, ofType(server.EventQuestionResolved)))
		for _, n := range ns {
			if strings.Contains(string(n.params), secret) {
				t.Errorf("%s carries what the person typed: %s", n.method, n.params)
			}
		}
	}
	stored, _ := env.Manager.Get(id)
	all, _ := stored.Events(0)
	for _, e := range all {
		if b, _ := json.Marshal(e); strings.Contains(string(b), secret) {
			t.Errorf("the session's log carries what the person typed: %s", b)
		}
	}
}

// protocol.ts's question types (written as type aliases, which
// TestProtocolTS leaves alone) have exactly the JSON fields of the Go
// types, and AnswerAction is ask's actions.

// A server that needs a login is told to a plain LSP client as a message
// naming what to run (Zero's view has its own Log in button: it gets the
// warning event only).
func TestLoginNeededIsAMessage(t *testing.T) {
	t.Parallel()
	for _, view := range []bool{false, true} {
		home := t.TempDir()
		servertest.MCPConfig(t, home, "locked", servertest.LockedServer(t))
		env := servertest.New(t, servertest.Options{Home: home, Replies: []llmtest.Reply{{Content: answer("done")}}})
		opts := clientOpts{}
		if view {
			opts = viewOpts
		}
		c := start(t, env, opts)
		c.initialize(env.Workspace)
		id := c.newSession()
		var res PromptResult
		c.call("zero/prompt", map[string]any{"sessionId": id, "message": "hello"}, &res)
		hint := "needs a login: run `zero mcp login locked`"
		// The warning comes before the run's end, and what the face sends
		// about it too: once run_ended is here, all of it is.
		ns := c.waitFor("the run's end", hasEvent(id, ofType(loop.EventRunEnded)))
		warned := slices.ContainsFunc(events(ns, id), func(e server.Event) bool {
			return e.Type == loop.EventWarning && strings.Contains(e.Text, hint)
		})
		shown := slices.ContainsFunc(ns, func(n note) bool {
			var p protocol.ShowMessageParams
			return n.method == "window/showMessage" && json.Unmarshal(n.params, &p) == nil && strings.Contains(p.Message, hint)
		})
		if !warned || shown == view {
			t.Errorf("view %v: warned %v, shown as a message %v; want the warning, and a message for a plain client only:\n%s", view, warned, shown, summary(ns))
		}
	}
}
