package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// formFiller is the client's user: it records what it is asked and
// answers with answer (accept {name: "Ada"} when nil).
type formFiller struct {
	answer func(mcp.ElicitationParams) *mcp.ElicitationResult
	mu     sync.Mutex
	asked  []mcp.ElicitationParams
}

func (f *formFiller) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req.Params)
	f.mu.Unlock()
	if f.answer != nil {
		return f.answer(req.Params), nil
	}
	return elicitResult(mcp.ElicitationResponseActionAccept, map[string]any{"name": "Ada"}), nil
}

func (f *formFiller) questions() []mcp.ElicitationParams {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]mcp.ElicitationParams(nil), f.asked...)
}

func elicitResult(action mcp.ElicitationResponseAction, content map[string]any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
}

// bookingEnv is Zero with the user's MCP server "bookings" (the asking
// server: its tool book asks the user whose name the booking is under),
// and a model that books a table and says what the tool said.
func bookingEnv(t *testing.T) *servertest.Env {
	t.Helper()
	home := t.TempDir()
	servertest.MCPConfig(t, home, "bookings", servertest.AskingServer(t))
	return servertest.New(t, servertest.Options{Home: home, Replies: []llmtest.Reply{
		{Match: "Book a table", Content: toolReply("book it", "bookings.book", map[string]any{})},
		{Match: "Open the page", Content: toolReply("open it", "bookings.open", map[string]any{})},
		{Match: "booked for Ada, 2 seats", Content: answer("Booked for Ada.")},
		{Content: answer("The tool said something else.")},
	}})
}

// bookingSaid is what the session's call of tool said (its tool result).
func bookingSaid(t *testing.T, env *servertest.Env, session, tool string) string {
	t.Helper()
	s, err := env.Manager.Get(session)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events(0)
	for _, e := range evs {
		if e.Type == "tool_result" && e.Tool == tool {
			return e.Text
		}
	}
	return ""
}

// The agent's MCP server asks the user a form during zero_run: the client
// (which declared elicitation) is asked with the server named and the
// server's form as the requested schema; its answer reaches the server,
// the omitted fields filled with their defaults (seats: 2; window has
// none, so what the server makes of it is the server's); a decline is a
// decline.
func TestServerQuestionReachesTheClient(t *testing.T) {
	for _, tt := range []struct {
		name     string
		answer   *mcp.ElicitationResult
		said     string
		response string
	}{
		{"accept", elicitResult(mcp.ElicitationResponseActionAccept, map[string]any{"name": "Ada"}), "booked for Ada, 2 seats", "Booked for Ada."},
		{"decline", elicitResult(mcp.ElicitationResponseActionDecline, nil), "declined", "The tool said something else."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := bookingEnv(t)
			user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult { return tt.answer }}
			r := startStdio(t, env, clientOpts{elicit: user})
			out, res := call(t, r.c, "zero_run", map[string]any{"message": "Book a table for tonight", "workspace": env.Workspace})
			mustOK(t, res)
			if said := bookingSaid(t, env, out["session"].(string), "bookings.book"); !strings.Contains(said, tt.said) {
				t.Errorf("the server's tool said %q, want %q", said, tt.said)
			}
			if out["response"] != tt.response || out["stop_reason"] != "response" {
				t.Errorf("zero_run = %v", out)
			}
			asked := user.questions()
			if len(asked) != 1 {
				t.Fatalf("the client was asked %d times", len(asked))
			}
			if want := "The MCP server bookings asks: Which name is the booking under?"; asked[0].Message != want {
				t.Errorf("message %q, want %q", asked[0].Message, want)
			}
			wantSchema := `{"properties":{"name":{"title":"Name","type":"string"},` +
				`"seats":{"default":2,"maximum":12,"minimum":1,"title":"Seats","type":"integer"},` +
				`"window":{"title":"By the window","type":"boolean"}},"required":["name"],"type":"object"}`
			if got := canonical(t, asked[0].RequestedSchema); got != wantSchema {
				t.Errorf("requested schema\n got %s\nwant %s", got, wantSchema)
			}
		})
	}
}

// canonical is v as JSON with sorted keys.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(m)
	return string(b)
}

// Over `zero mcp --listen` (streamable HTTP) the question rides the
// zero_run request's own stream: a client that never opened the
// standalone GET stream is asked all the same.
func TestServerQuestionOverHTTP(t *testing.T) {
	env := bookingEnv(t)
	url, token := startHTTP(t, env)
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	user := &formFiller{}
	c := client.NewClient(tr, client.WithLegacyProtocolOnly(), client.WithElicitationHandler(user))
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	out, res := call(t, c, "zero_run", map[string]any{"message": "Book a table for tonight", "workspace": env.Workspace})
	mustOK(t, res)
	if said := bookingSaid(t, env, out["session"].(string), "bookings.book"); !strings.Contains(said, "booked for Ada, 2 seats") {
		t.Errorf("the server's tool said %q", said)
	}
	if n := len(user.questions()); n != 1 {
		t.Errorf("the client was asked %d times", n)
	}
}

// A page to open: a client that declared URL elicitation gets a URL-mode
// request, one that did not a form naming the address; either's accept
// goes back as accept.
func TestServerAsksToOpenAPage(t *testing.T) {
	for _, tt := range []struct {
		name string
		caps *mcp.ElicitationCapability
		mode string
	}{
		{"url mode", &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}, mcp.ElicitationModeURL},
		{"form", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := bookingEnv(t)
			user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
				return elicitResult(mcp.ElicitationResponseActionAccept, nil)
			}}
			opts := []client.ClientOption{client.WithLegacyProtocolOnly(), client.WithElicitationHandler(user)}
			if tt.caps != nil {
				opts = append(opts, client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: tt.caps}))
			}
			c, _ := startClient(t, env, opts...)
			out, res := call(t, c, "zero_run", map[string]any{"message": "Open the page", "workspace": env.Workspace})
			mustOK(t, res)
			if said := bookingSaid(t, env, out["session"].(string), "bookings.open"); !strings.Contains(said, "accept") {
				t.Errorf("the server's tool said %q, want accept", said)
			}
			asked := user.questions()
			if len(asked) != 1 {
				t.Fatalf("the client was asked %d times", len(asked))
			}
			q := asked[0]
			switch tt.mode {
			case mcp.ElicitationModeURL:
				if q.Mode != mcp.ElicitationModeURL || q.URL != "https://example.com/connect" || q.ElicitationID == "" ||
					q.Message != "The MCP server bookings asks: Connect your account" {
					t.Errorf("URL elicitation %+v", q)
				}
			default:
				if q.Mode == mcp.ElicitationModeURL || !strings.Contains(q.Message, "Open this page: https://example.com/connect") ||
					!strings.HasPrefix(q.Message, "The MCP server bookings asks: Connect your account") {
					t.Errorf("form elicitation %+v", q)
				}
			}
		})
	}
}

// A client that cannot be asked (no elicitation) declines the question at
// once: the server's tool hears "declined" and zero_run answers as the
// run ends, not at its budget.
func TestServerQuestionWithoutElicitation(t *testing.T) {
	env := bookingEnv(t)
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "Book a table for tonight", "workspace": env.Workspace})
	mustOK(t, res)
	if out["stop_reason"] != "response" {
		t.Fatalf("zero_run = %v", out)
	}
	if said := bookingSaid(t, env, out["session"].(string), "bookings.book"); said != "declined" {
		t.Errorf("the server's tool said %q, want declined", said)
	}
}

// On protocol 2026-07-28 the question goes back in zero_run's
// input-required result, with the server's form; the client's retry
// carries the answer to the server. A modern client without elicitation
// declines.
func TestModernClientAnswersServerQuestion(t *testing.T) {
	for _, tt := range []struct {
		name string
		user *formFiller
		said string
	}{
		{"elicitation", &formFiller{}, "booked for Ada, 2 seats"},
		{"no elicitation", nil, "declined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := bookingEnv(t)
			var opts []client.ClientOption
			if tt.user != nil {
				opts = append(opts, client.WithElicitationHandler(tt.user))
			}
			c := startModern(t, env, opts...)
			out, res := call(t, c, "zero_run", map[string]any{"message": "Book a table for tonight", "workspace": env.Workspace})
			mustOK(t, res)
			if said := bookingSaid(t, env, out["session"].(string), "bookings.book"); !strings.Contains(said, tt.said) {
				t.Errorf("the server's tool said %q, want %q (zero_run %v)", said, tt.said, out)
			}
			if tt.user == nil {
				return
			}
			asked := tt.user.questions()
			if len(asked) != 1 || asked[0].Message != "The MCP server bookings asks: Which name is the booking under?" {
				t.Fatalf("the client was asked %+v", asked)
			}
			if s := canonical(t, asked[0].RequestedSchema); !strings.Contains(s, `"required":["name"]`) || !strings.Contains(s, `"default":2`) {
				t.Errorf("requested schema %s", s)
			}
		})
	}
}

// Cancelling the zero_run call while the user is being asked cancels the
// question and the run.
func TestCancelledRunCancelsServerQuestion(t *testing.T) {
	env := bookingEnv(t)
	asked, release := make(chan struct{}), make(chan struct{})
	user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		close(asked)
		<-release // the user never answers
		return elicitResult(mcp.ElicitationResponseActionCancel, nil)
	}}
	r := startStdio(t, env, clientOpts{elicit: user})
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
			Arguments: map[string]any{"message": "Book a table for tonight", "workspace": env.Workspace}}})
		errc <- err
	}()
	<-asked
	cancel() // the client sends notifications/cancelled
	<-errc
	var id string
	for _, in := range env.Manager.List() {
		id = in.ID
	}
	s, err := env.Manager.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.WaitRun(t.Context(), 1)
	if err != nil || res.StopReason != "cancelled" {
		t.Fatalf("the run ended %+v (%v), want cancelled", res, err)
	}
	evs, _ := s.Events(0)
	var resolved []string
	for _, e := range evs {
		if e.Type == server.EventQuestionResolved {
			resolved = append(resolved, e.Status)
		}
	}
	if len(resolved) != 1 || resolved[0] != ask.Cancel {
		t.Errorf("question_resolved statuses %q, want [cancel]", resolved)
	}
}

// lockedBuffer is a log's output, read while the face may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// askRig is a face whose client can elicit (user), with a session it
// drove and that is idle, and the broker to ask questions on it directly:
// the face's side of a question whatever server asks it.
type askRig struct {
	env     *servertest.Env
	r       *stdioRig
	user    *formFiller
	log     *lockedBuffer
	session string
	broker  *server.Broker
}

func newAskRig(t *testing.T, user *formFiller) *askRig {
	t.Helper()
	env := newEnv(t, nil, llmtest.Reply{Content: answer("hello")})
	logs := &lockedBuffer{}
	co := clientOpts{}
	if user != nil {
		co.elicit = user
	}
	r := startStdioFace(t, env, co, func(f *face) {
		f.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "hi", "workspace": env.Workspace})
	mustOK(t, res)
	b, ok := env.Manager.Questions().(*server.Broker)
	if !ok {
		t.Fatalf("the manager's questions are %T", env.Manager.Questions())
	}
	return &askRig{env: env, r: r, user: user, log: logs, session: out["session"].(string), broker: b}
}

func (a *askRig) ask(t *testing.T, q ask.Question) ask.Answer {
	t.Helper()
	ans, err := a.broker.Ask(t.Context(), a.session, q)
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	return ans
}

func ptr[T any](v T) *T { return &v }

// A form of every kind of field reaches the client as the requested
// schema MCP defines (formats, bounds, enums, defaults, required), and the
// client's answer comes back completed: only the fields asked, defaults
// filled in. What the user typed is in no log and no event.
func TestQuestionFormOnTheWire(t *testing.T) {
	user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		return elicitResult(mcp.ElicitationResponseActionAccept, map[string]any{
			"email": "ada@example.com", "token": "hunter2-secret", "size": "m", "toppings": []any{"olives"}, "extra": "dropped",
		})
	}}
	a := newAskRig(t, user)
	q := ask.Question{Server: "shop", Message: "Your order?", Fields: []ask.Field{
		{Name: "email", Title: "Email", Type: ask.TypeString, Format: "email", Required: true},
		{Name: "token", Description: "The code we sent", Type: ask.TypeString, MinLength: ptr(4), MaxLength: ptr(40), Required: true},
		{Name: "count", Type: ask.TypeInteger, Min: ptr(1.0), Max: ptr(9.0), Default: 3.0},
		{Name: "tip", Type: ask.TypeNumber, Min: ptr(0.0)},
		{Name: "gift", Type: ask.TypeBoolean, Default: false},
		{Name: "size", Type: ask.TypeChoice, Options: []ask.Option{{Value: "s", Title: "Small"}, {Value: "m", Title: "Medium"}}, Default: "s"},
		{Name: "crust", Type: ask.TypeChoice, Options: []ask.Option{{Value: "thin"}, {Value: "thick"}}},
		{Name: "toppings", Type: ask.TypeChoices, Options: []ask.Option{{Value: "olives"}, {Value: "ham"}}, MaxItems: ptr(2)},
	}}
	got := a.ask(t, q)
	want := map[string]any{"email": "ada@example.com", "token": "hunter2-secret", "count": 3.0, "gift": false, "size": "m", "toppings": []string{"olives"}}
	if got.Action != ask.Accept || canonical(t, got.Content) != canonical(t, want) {
		t.Errorf("answer %+v, want accept %v", got, want)
	}
	asked := a.user.questions()
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	wantSchema := `{"properties":{` +
		`"count":{"default":3,"maximum":9,"minimum":1,"type":"integer"},` +
		`"crust":{"enum":["thin","thick"],"type":"string"},` +
		`"email":{"format":"email","title":"Email","type":"string"},` +
		`"gift":{"default":false,"type":"boolean"},` +
		`"size":{"default":"s","oneOf":[{"const":"s","title":"Small"},{"const":"m","title":"Medium"}],"type":"string"},` +
		`"tip":{"minimum":0,"type":"number"},` +
		`"token":{"description":"The code we sent","maxLength":40,"minLength":4,"type":"string"},` +
		`"toppings":{"items":{"enum":["olives","ham"],"type":"string"},"maxItems":2,"type":"array"}},` +
		`"required":["email","token"],"type":"object"}`
	if s := canonical(t, asked[0].RequestedSchema); s != wantSchema {
		t.Errorf("requested schema\n got %s\nwant %s", s, wantSchema)
	}
	if asked[0].Message != "The MCP server shop asks: Your order?" {
		t.Errorf("message %q", asked[0].Message)
	}
	// What the user typed is the server's alone.
	if strings.Contains(a.log.String(), "hunter2") {
		t.Errorf("the log holds what the user typed:\n%s", a.log.String())
	}
	s, _ := a.env.Manager.Get(a.session)
	evs, _ := s.Events(0)
	if b, _ := json.Marshal(evs); bytes.Contains(b, []byte("hunter2")) {
		t.Errorf("the session's events hold what the user typed")
	}
	st, _ := call(t, a.r.c, "zero_status", map[string]any{"session": a.session})
	if b, _ := json.Marshal(st); bytes.Contains(b, []byte("hunter2")) {
		t.Errorf("zero_status holds what the user typed")
	}
}

// An answer that does not fit the form (a required field left out, a
// value that is not an option) is not sent on: the question is cancelled,
// and the log names the field, not the value.
func TestQuestionAnswerThatDoesNotFit(t *testing.T) {
	user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		return elicitResult(mcp.ElicitationResponseActionAccept, map[string]any{"pin": "s3cret-pin", "size": "xxl"})
	}}
	a := newAskRig(t, user)
	got := a.ask(t, ask.Question{Server: "shop", Message: "Size?", Fields: []ask.Field{
		{Name: "pin", Type: ask.TypeString},
		{Name: "size", Type: ask.TypeChoice, Required: true, Options: []ask.Option{{Value: "s"}, {Value: "m"}}},
	}})
	if got.Action != ask.Cancel || got.Content != nil {
		t.Errorf("answer %+v, want cancel", got)
	}
	if l := a.log.String(); !strings.Contains(l, "size") || strings.Contains(l, "xxl") || strings.Contains(l, "s3cret") {
		t.Errorf("log:\n%s", l)
	}
}

// What a server asks is someone else's text: a huge message with terminal
// escapes and a bidirectional override reaches the client bounded and
// without them, and a form or a page that is not fit to show is declined
// without asking anyone.
func TestHostileServerQuestion(t *testing.T) {
	user := &formFiller{}
	a := newAskRig(t, user)
	huge := "\x1b[2J\x1b]0;owned\x07Please \u202eenter\u202c your name\r" + strings.Repeat("A", 1<<20)
	got := a.ask(t, ask.Question{Server: "evil\n\x1b[31mserver", Message: huge, Fields: []ask.Field{{Name: "name", Type: ask.TypeString}}})
	if got.Action != ask.Accept {
		t.Errorf("answer %+v", got)
	}
	asked := user.questions()
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	msg := asked[0].Message
	if len(msg) > maxQuestionMessage+200 || strings.ContainsAny(msg, "\x1b\x07\r\u202e\u202c") || !strings.HasSuffix(msg, "…") ||
		!strings.HasPrefix(msg, "The MCP server evil [31mserver asks: [2J]0;ownedPlease enter your name") {
		t.Errorf("message (%d bytes) %q…", len(msg), msg[:min(len(msg), 120)])
	}

	many := make([]ask.Field, maxQuestionFields+1)
	for i := range many {
		many[i] = ask.Field{Name: "f" + strings.Repeat("x", i), Type: ask.TypeBoolean}
	}
	for _, tt := range []struct {
		name string
		q    ask.Question
	}{
		{"too many fields", ask.Question{Server: "evil", Message: "?", Fields: many}},
		{"a name with an escape", ask.Question{Server: "evil", Message: "?", Fields: []ask.Field{{Name: "a\x1bb", Type: ask.TypeString}}}},
		{"a repeated name", ask.Question{Server: "evil", Message: "?", Fields: []ask.Field{{Name: "a", Type: ask.TypeString}, {Name: "a", Type: ask.TypeBoolean}}}},
		{"a nested object", ask.Question{Server: "evil", Message: "?", Fields: []ask.Field{{Name: "a", Type: "object"}}}},
		{"a choice without options", ask.Question{Server: "evil", Message: "?", Fields: []ask.Field{{Name: "a", Type: ask.TypeChoice}}}},
		{"a javascript page", ask.Question{Server: "evil", Message: "?", URL: "javascript:alert(1)"}},
		{"an http page elsewhere", ask.Question{Server: "evil", Message: "?", URL: "http://example.com/login"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := a.ask(t, tt.q); got.Action != ask.Decline {
				t.Errorf("answer %+v, want decline", got)
			}
		})
	}
	if n := len(user.questions()); n != 1 {
		t.Errorf("the client was asked %d times, want only the first question", n)
	}
}

// A client that cannot be asked, and a 2026-07-28 client with no zero_run
// to carry the question, decline it at once.
func TestQuestionNoOneCanAnswer(t *testing.T) {
	q := ask.Question{Server: "shop", Message: "Name?", Fields: []ask.Field{{Name: "name", Type: ask.TypeString}}}
	t.Run("no elicitation", func(t *testing.T) {
		a := newAskRig(t, nil)
		if got := a.ask(t, q); got.Action != ask.Decline {
			t.Errorf("answer %+v", got)
		}
	})
	t.Run("modern, no call", func(t *testing.T) {
		env := newEnv(t, nil, llmtest.Reply{Content: answer("hello")})
		user := &formFiller{}
		c := startModern(t, env, client.WithElicitationHandler(user))
		out, res := call(t, c, "zero_run", map[string]any{"message": "hi", "workspace": env.Workspace})
		mustOK(t, res)
		b := env.Manager.Questions().(*server.Broker)
		got, err := b.Ask(t.Context(), out["session"].(string), q)
		if err != nil || got.Action != ask.Decline {
			t.Errorf("answer %+v %v", got, err)
		}
		if n := len(user.questions()); n != 0 {
			t.Errorf("asked %d times", n)
		}
	})
}

// Titled choices are enum with enumNames for a client before 2025-11-25,
// oneOf const/title from then on; a titled multiple choice is items.anyOf;
// the properties keep the asker's order.
func TestQuestionSchemaVersions(t *testing.T) {
	fields := []ask.Field{
		{Name: "zeta", Type: ask.TypeChoice, Options: []ask.Option{{Value: "a", Title: "A"}, {Value: "b"}}},
		{Name: "alpha", Type: ask.TypeChoices, Options: []ask.Option{{Value: "x", Title: "X"}}, Default: []string{"x"}},
	}
	q := ask.Question{Server: "s", Message: "m", Fields: fields}
	old, err := json.Marshal(questionParams(q, mcp.ClientCapabilities{}, mcp.ProtocolVersion20250618).RequestedSchema)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"properties":{"zeta":{"enum":["a","b"],"enumNames":["A","b"],"type":"string"},` +
		`"alpha":{"default":["x"],"items":{"anyOf":[{"const":"x","title":"X"}]},"type":"array"}},"type":"object"}`; string(old) != want {
		t.Errorf("2025-06-18:\n got %s\nwant %s", old, want)
	}
	now, _ := json.Marshal(questionParams(q, mcp.ClientCapabilities{}, mcp.ProtocolVersion20251125).RequestedSchema)
	if !strings.Contains(string(now), `"zeta":{"oneOf":[{"const":"a","title":"A"},{"const":"b","title":"b"}],"type":"string"}`) {
		t.Errorf("2025-11-25: %s", now)
	}
}

// A zero_run that carries a question to the user stays open past its
// budget until the user answers (with progress as keep-alive): returning
// would take the form from under them. Then it returns as at any budget.
func TestRunStaysOpenWhileTheUserAnswers(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "first", Content: answer("hello")},
		llmtest.Reply{Match: "long task", Content: answer("done"), HoldAfter: 1})
	asked, answered := make(chan struct{}), make(chan struct{})
	user := &formFiller{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		close(asked)
		<-answered
		return elicitResult(mcp.ElicitationResponseActionAccept, map[string]any{"name": "Ada"})
	}}
	r := startStdioFace(t, env, clientOpts{elicit: user}, func(f *face) {
		f.runBudget, f.keepalive = time.Nanosecond, time.Millisecond
	})
	defer env.Model.Release()
	st, res := call(t, r.c, "zero_start", map[string]any{"message": "first", "workspace": env.Workspace})
	mustOK(t, res)
	session := st["session"].(string)
	poll(t, r.c, session, 0, finished)

	b := env.Manager.Questions().(*server.Broker)
	got := make(chan ask.Answer, 1)
	go func() {
		a, _ := b.Ask(t.Context(), session, ask.Question{Server: "bookings", Message: "Name?", Fields: []ask.Field{{Name: "name", Type: ask.TypeString}}})
		got <- a
	}()
	<-asked
	kept := make(chan struct{}, 100)
	r.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" && n.Params.AdditionalFields["progressToken"] == "tok-q" {
			select {
			case kept <- struct{}{}:
			default:
			}
		}
	})
	type ran struct {
		res *mcp.CallToolResult
		err error
	}
	returned := make(chan ran, 1)
	go func() {
		res, err := r.c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
			Arguments: map[string]any{"message": "long task", "session": session}, Meta: &mcp.Meta{ProgressToken: "tok-q"}}})
		returned <- ran{res, err}
	}()
	// Its budget is long gone; while the user answers, keep-alives come.
	for range 3 {
		select {
		case o := <-returned:
			t.Fatalf("zero_run returned while the user was answering: %v %v", o.err, o.res)
		case <-kept:
		}
	}
	close(answered)
	if a := <-got; a.Action != ask.Accept || a.Content["name"] != "Ada" {
		t.Errorf("answer %+v", a)
	}
	o := <-returned
	if o.err != nil {
		t.Fatal(o.err)
	}
	if out := structured(t, o.res); out["stop_reason"] != stopRunning {
		t.Errorf("zero_run after the answer = %v", out)
	}
}
