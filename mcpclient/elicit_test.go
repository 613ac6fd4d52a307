package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/mcpclient"
)

// bookSchema lists its fields out of alphabetical order (name, seats,
// by_window), as a server may: the person is asked in this order.
const bookSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name"},
	"seats":{"type":"integer","title":"Seats","default":2,"minimum":1,"maximum":12},
	"by_window":{"type":"boolean","title":"By the window"}},
	"required":["name"]}`

// addAskingTools gives a server tools that ask the client during the call:
// book (a form; the result says what came back), form (the form its
// argument schema describes; the result is the action and the content),
// open (a page to open, its argument url), roots (the client's roots), caps
// (the capabilities the client declared) and wait (until cancelled).
func addAskingTools(s *server.MCPServer) {
	elicit := func(ctx context.Context, p mcp.ElicitationParams) (*mcp.ElicitationResult, *mcp.CallToolResult) {
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: p})
		if err != nil {
			return nil, mcp.NewToolResultError("could not ask: " + err.Error())
		}
		return res, nil
	}
	s.AddTool(mcp.NewTool("book"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, failed := elicit(ctx, mcp.ElicitationParams{Message: "Which name is the booking under?", RequestedSchema: json.RawMessage(bookSchema)})
		if failed != nil {
			return failed, nil
		}
		switch res.Action {
		case mcp.ElicitationResponseActionDecline:
			return mcp.NewToolResultText("declined"), nil
		case mcp.ElicitationResponseActionCancel:
			return mcp.NewToolResultText("cancelled"), nil
		}
		c, _ := res.Content.(map[string]any)
		return mcp.NewToolResultText(fmt.Sprintf("booked for %v, %v seats (window: %v)", c["name"], c["seats"], c["by_window"])), nil
	})
	s.AddTool(mcp.NewTool("form", mcp.WithString("schema")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, failed := elicit(ctx, mcp.ElicitationParams{Message: "Fill this in", RequestedSchema: json.RawMessage(req.GetString("schema", ""))})
		if failed != nil {
			return failed, nil
		}
		content, _ := json.Marshal(res.Content)
		return mcp.NewToolResultText(string(res.Action) + " " + string(content)), nil
	})
	s.AddTool(mcp.NewTool("open", mcp.WithString("url")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, failed := elicit(ctx, mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, ElicitationID: "e1", URL: req.GetString("url", ""), Message: "Connect your account"})
		if failed != nil {
			return failed, nil
		}
		return mcp.NewToolResultText(string(res.Action)), nil
	})
	s.AddTool(mcp.NewTool("roots"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
		if err != nil {
			return mcp.NewToolResultError("no roots: " + err.Error()), nil
		}
		var lines []string
		for _, r := range res.Roots {
			lines = append(lines, r.URI+" "+r.Name)
		}
		return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
	})
	s.AddTool(mcp.NewTool("caps"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		caps, _ := json.Marshal(server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo).GetClientCapabilities())
		return mcp.NewToolResultText(string(caps)), nil
	})
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return mcp.NewToolResultText("stopped"), nil
	})
}

// posted is what a client POSTed to the HTTP asking server: the id of
// each tools/call by tool name, each notification by method.
type posted struct {
	calls         chan callPosted
	notifications chan notePosted
}

type callPosted struct {
	tool string
	id   string
}

type notePosted struct {
	method string
	params map[string]any
}

// askingHTTP is an MCP server over streamable HTTP with the asking tools;
// what the client POSTs is recorded, as the server receives it. onRoots is
// told each notifications/roots/list_changed the server handles.
func askingHTTP(t *testing.T) (string, *posted) {
	s := server.NewMCPServer("asking", "1.0.0", server.WithElicitation(), server.WithRoots())
	addAskingTools(s)
	rec := &posted{calls: make(chan callPosted, 64), notifications: make(chan notePosted, 64)}
	h := server.NewStreamableHTTPServer(s)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params map[string]any  `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil {
				switch {
				case m.Method == "tools/call":
					rec.calls <- callPosted{tool: fmt.Sprint(m.Params["name"]), id: string(m.ID)}
				case m.ID == nil && m.Method != "":
					rec.notifications <- notePosted{m.Method, m.Params}
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp", rec
}

// askingServer is the asking server over transport ("stdio": a process;
// "http": in this one, with what the client posts).
func askingServer(t *testing.T, transport string) (mcpclient.Server, *posted) {
	if transport == "stdio" {
		srv, _ := fakeServer(t, "asking")
		srv.Env["FAKE_MCP_ASK"] = "1"
		return srv, nil
	}
	url, rec := askingHTTP(t)
	return mcpclient.Server{Name: "asking", URL: url}, rec
}

func newPool(t *testing.T, srv mcpclient.Server, o mcpclient.Options) *mcpclient.Pool {
	p, errs := mcpclient.NewPool([]mcpclient.Server{srv}, o)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func call(t *testing.T, p *mcpclient.Pool, tool string, args map[string]any) string {
	t.Helper()
	res, err := p.Call(ctx(t), "asking", tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Text
}

var transports = []string{"stdio", "http"}

// asker is a person who answers each question the same way, set by the
// test, and remembers the questions (it is asked on mcp-go's goroutines).
type asker struct {
	mu     sync.Mutex
	asked  []ask.Question
	answer ask.Answer
	err    error
}

func (a *asker) Ask(_ context.Context, q ask.Question) (ask.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer, a.err
}

func (a *asker) set(answer ask.Answer, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.answer, a.err = answer, err
}

func (a *asker) questions() []ask.Question {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ask.Question(nil), a.asked...)
}

// A server's form during a call reaches Options.Ask, named by its server,
// its fields in the server's order; the answer, with the omitted field's
// default filled in and the face's text converted, reaches the server.
// Both modes are declared.
func TestServerQuestionReachesTheUser(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			a := &asker{answer: ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Ann", "by_window": "true", "other": "dropped"}}}
			p := newPool(t, srv, mcpclient.Options{Ask: a.Ask})
			if got := call(t, p, "book", nil); got != "booked for Ann, 2 seats (window: true)" {
				t.Errorf("the server got: %q", got)
			}
			asked := a.questions()
			if len(asked) != 1 {
				t.Fatalf("asked %d times", len(asked))
			}
			q := asked[0]
			var names []string
			for _, f := range q.Fields {
				names = append(names, f.Name)
			}
			if q.Server != "asking" || q.Message != "Which name is the booking under?" || q.URL != "" ||
				strings.Join(names, ",") != "name,seats,by_window" || !q.Fields[0].Required || q.Fields[1].Default != 2.0 || *q.Fields[1].Max != 12 {
				t.Errorf("the question: %+v", q)
			}
			caps := call(t, p, "caps", nil)
			if !strings.Contains(caps, `"elicitation":{"form":{},"url":{}}`) || strings.Contains(caps, "roots") {
				t.Errorf("capabilities declared: %s", caps)
			}
		})
	}
}

// The person's other answers reach the server as such; an answer that does
// not fit the form is not sent (the server is told cancel); a question
// no one can answer is declined.
func TestServerQuestionAnswers(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			a := &asker{}
			p := newPool(t, srv, mcpclient.Options{Ask: a.Ask})
			for _, c := range []struct {
				answer ask.Answer
				err    error
				want   string
			}{
				{ask.Answer{Action: ask.Decline}, nil, "declined"},
				{ask.Answer{Action: ask.Cancel}, nil, "cancelled"},
				{ask.Answer{}, ask.ErrNoOne, "declined"},
				{ask.Answer{}, errors.New("the face broke"), "declined"},
				{ask.Answer{Action: ask.Accept, Content: map[string]any{"seats": 3}}, nil, "cancelled"},                  // name is required
				{ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Bo", "seats": "99"}}, nil, "cancelled"}, // over 12
				{ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Bo", "seats": "3", "by_window": false}}, nil, "booked for Bo, 3 seats (window: false)"},
			} {
				a.set(c.answer, c.err)
				if got := call(t, p, "book", nil); got != c.want {
					t.Errorf("answer %+v, %v: the server got %q, want %q", c.answer, c.err, got, c.want)
				}
			}
		})
	}
}

// With no Ask, no elicitation (nor roots) capability is declared, and a
// server that asks anyway is told at once that the method is not
// supported: the call ends with the server's own answer.
func TestNoOneToAsk(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			p := newPool(t, srv, mcpclient.Options{})
			res, err := p.Call(ctx(t), "asking", "book", nil)
			if err != nil || !res.IsError || !strings.Contains(res.Text, "could not ask") || !strings.Contains(res.Text, "declared no elicitation capability") {
				t.Errorf("book: %+v, %v", res, err)
			}
			if caps := call(t, p, "caps", nil); strings.Contains(caps, "elicitation") || strings.Contains(caps, "roots") {
				t.Errorf("capabilities declared: %s", caps)
			}
		})
	}
}

// A form that is not a flat form, or too large, and a page that is not
// https (or http on loopback), are declined without asking anyone; a page
// that is is asked about, with its URL.
func TestHostileQuestions(t *testing.T) {
	many := func(n int) string {
		var props []string
		for i := range n {
			props = append(props, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
		}
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	}
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			a := &asker{answer: ask.Answer{Action: ask.Accept}}
			p := newPool(t, srv, mcpclient.Options{Ask: a.Ask})
			for name, schema := range map[string]string{
				"nested":     `{"type":"object","properties":{"address":{"type":"object","properties":{"street":{"type":"string"}}}}}`,
				"many":       many(500),
				"huge":       `{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("x", 1<<20) + `"}}}`,
				"not a form": `{"type":"array"}`,
				"deep":       strings.Repeat(`{"type":"object","properties":{"a":`, 2000) + `{"type":"string"}` + strings.Repeat(`}}`, 2000),
			} {
				if got := call(t, p, "form", map[string]any{"schema": schema}); got != "decline null" {
					t.Errorf("%s: the server got %q", name, got)
				}
			}
			for _, url := range []string{"javascript:alert(1)", "http://example.com/connect", "https://bank.example@evil.example/",
				"file:///etc/passwd", "https://example.com/" + strings.Repeat("a", 5000), "https://example.com/\u202eevil", "https:///nohost"} {
				if got := call(t, p, "open", map[string]any{"url": url}); got != "decline" {
					t.Errorf("page %.40q: the server got %q", url, got)
				}
			}
			if asked := a.questions(); len(asked) != 0 {
				t.Fatalf("asked about a hostile question: %+v", asked)
			}
			for _, url := range []string{"https://example.com/connect", "http://127.0.0.1:8080/cb"} {
				if got := call(t, p, "open", map[string]any{"url": url}); got != "accept" {
					t.Errorf("page %s: the server got %q", url, got)
				}
			}
			if asked := a.questions(); len(asked) != 2 || asked[0].URL != "https://example.com/connect" || asked[0].Message != "Connect your account" || asked[0].Fields != nil {
				t.Errorf("asked: %+v", asked)
			}
		})
	}
}

// Over HTTP, mcp-go runs the handler of a server's request under a
// 30-second context and sends its answer on that context. The question
// here is answered only once mcp-go's own handling of it has ended: its
// context is over, which after 30 seconds it would be in any case. So an
// answer that still reaches the server was carried by Zero, and a person
// who takes longer than 30 seconds is heard. The gate is that event (the
// hook fires when mcp-go's context ends), not a clock.
func TestAnswerAfterMCPGoGaveUp(t *testing.T) {
	srv, _ := askingServer(t, "http")
	handedOver := make(chan struct{})
	var once sync.Once
	p := newPool(t, srv, mcpclient.Options{Ask: func(ctx context.Context, q ask.Question) (ask.Answer, error) {
		select {
		case <-handedOver:
		case <-ctx.Done():
			return ask.Answer{}, ctx.Err()
		}
		return ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Cy", "seats": 4}}, nil
	}})
	mcpclient.OnMCPGoHandlerDone(p, func() { once.Do(func() { close(handedOver) }) })
	if got := call(t, p, "book", nil); got != "booked for Cy, 4 seats (window: <nil>)" {
		t.Errorf("the server got %q", got)
	}
}

// fakeClock is time that moves only when the test says.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	added  chan struct{}
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1e9, 0), added: make(chan struct{}, 100)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.added <- struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// Advance moves the time on by d, running the timers due, before it
// returns.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// While a question is open the call's timeout does not run: the time
// moves ten timeouts on while the person answers, and the call still gets
// the server's answer. The same clock does end a call that gets no
// answer (so it is the clock the timeout counts).
func TestCallTimeoutPausedWhileAsking(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			clk := newFakeClock()
			p := newPool(t, srv, mcpclient.Options{CallTimeout: time.Minute, Ask: func(ctx context.Context, q ask.Question) (ask.Answer, error) {
				clk.Advance(10 * time.Minute)
				if ctx.Err() != nil {
					return ask.Answer{}, ctx.Err()
				}
				return ask.Answer{Action: ask.Accept, Content: map[string]any{"name": "Di"}}, nil
			}})
			mcpclient.SetClock(p, clk)
			if got := call(t, p, "book", nil); got != "booked for Di, 2 seats (window: <nil>)" {
				t.Errorf("the server got %q", got)
			}
			for len(clk.added) > 0 { // book's timers, all started before it returned
				<-clk.added
			}
			done := make(chan error, 1)
			go func() {
				_, err := p.Call(ctx(t), "asking", "wait", nil)
				done <- err
			}()
			<-clk.added // wait's timer
			clk.Advance(time.Minute)
			if err := <-done; err == nil || !strings.Contains(err.Error(), "no answer within 1m0s") {
				t.Errorf("a call with no answer: %v", err)
			}
		})
	}
}

// A question ends with the run: the call's context cancelled while the
// person is asked ends the question's context, and the call.
func TestQuestionEndsWithTheRun(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, _ := askingServer(t, tr)
			asked := make(chan struct{})
			ended := make(chan error, 1)
			p := newPool(t, srv, mcpclient.Options{Ask: func(ctx context.Context, q ask.Question) (ask.Answer, error) {
				close(asked)
				<-ctx.Done()
				ended <- ctx.Err()
				return ask.Answer{}, ctx.Err()
			}})
			cctx, cancel := context.WithCancel(ctx(t))
			done := make(chan error, 1)
			go func() {
				_, err := p.Call(cctx, "asking", "book", nil)
				done <- err
			}()
			<-asked
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("the call: %v", err)
			}
			if err := <-ended; err == nil {
				t.Error("the question's context did not end")
			}
		})
	}
}

// A call cancelled over HTTP is cancelled on the server too: it gets
// notifications/cancelled naming the call's request (mcp-go sends it
// over stdio only).
func TestCancelledCallTellsTheServer(t *testing.T) {
	srv, rec := askingServer(t, "http")
	p := newPool(t, srv, mcpclient.Options{})
	if _, errs := p.List(ctx(t)); len(errs) != 0 {
		t.Fatal(errs)
	}
	cctx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(cctx, "asking", "wait", nil)
		done <- err
	}()
	sent := <-rec.calls
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the call: %v", err)
	}
	for n := range rec.notifications {
		if n.method != "notifications/cancelled" {
			continue
		}
		if id, _ := json.Marshal(n.params["requestId"]); sent.tool != "wait" || string(id) != sent.id || !strings.Contains(fmt.Sprint(n.params["reason"]), "cancelled") {
			t.Errorf("cancelled %s (id %s); the server was told %v", sent.tool, sent.id, n.params)
		}
		break
	}
}

// roots/list is answered with the session's folders as file:// URIs,
// named; when they change, the server is told before the next call.
func TestRoots(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			srv, rec := askingServer(t, tr)
			var mu sync.Mutex
			roots := []string{"/work/my project", "/tmp/x/", "relative/is/left/out"}
			p := newPool(t, srv, mcpclient.Options{Roots: func() []string {
				mu.Lock()
				defer mu.Unlock()
				return roots
			}})
			if got := call(t, p, "roots", nil); got != "file:///work/my%20project my project\nfile:///tmp/x x" {
				t.Errorf("roots: %q", got)
			}
			if caps := call(t, p, "caps", nil); !strings.Contains(caps, `"roots":{"listChanged":true}`) || strings.Contains(caps, "elicitation") {
				t.Errorf("capabilities declared: %s", caps)
			}
			mu.Lock()
			roots = []string{"/srv"}
			mu.Unlock()
			if got := call(t, p, "roots", nil); got != "file:///srv srv" {
				t.Errorf("roots: %q", got)
			}
			if rec == nil {
				return
			}
			var methods []string
			for len(rec.notifications) > 0 {
				methods = append(methods, (<-rec.notifications).method)
			}
			if !reflect.DeepEqual(methods, []string{"notifications/initialized", "notifications/roots/list_changed"}) {
				t.Errorf("notifications the server got: %q", methods)
			}
		})
	}
}

// A server that asks many questions at once gets maxOpenQuestions (4) of
// them put to the person; the rest are declined without asking. The tool
// asks 10 at once; the person answers only once the server has had the 6
// declines, so the 4 are open while the others come.
func TestQuestionFlood(t *testing.T) {
	s := server.NewMCPServer("flood", "1.0.0", server.WithElicitation())
	sixDeclined := make(chan struct{})
	s.AddTool(mcp.NewTool("flood"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		results := make(chan string, 10)
		for range 10 {
			go func() {
				res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
					Message: "again?", RequestedSchema: map[string]any{"type": "object"}}})
				if err != nil {
					results <- "error"
					return
				}
				results <- string(res.Action)
			}()
		}
		count := map[string]int{}
		for i := range 10 {
			count[<-results]++
			if i == 5 {
				close(sixDeclined)
			}
		}
		return mcp.NewToolResultText(fmt.Sprint(count)), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(hs.Close)
	var mu sync.Mutex
	asked := 0
	p := newPool(t, mcpclient.Server{Name: "asking", URL: hs.URL + "/mcp"}, mcpclient.Options{Ask: func(ctx context.Context, q ask.Question) (ask.Answer, error) {
		mu.Lock()
		asked++
		mu.Unlock()
		<-sixDeclined
		return ask.Answer{Action: ask.Accept}, nil
	}})
	if got := call(t, p, "flood", nil); got != "map[accept:4 decline:6]" {
		t.Errorf("the server got %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 4 {
		t.Errorf("asked %d times", asked)
	}
}

// refusal is what an HTTPTransport (OAuth's) says when the server wants a
// login: the request was refused before it ran.
type refusal struct{}

func (refusal) Error() string {
	return "the MCP server asking needs a login: run `zero mcp login asking`"
}
func (refusal) Refused() bool { return true }

// refusingCalls refuses tools/call once armed, as OAuth does when the
// server asks for more scopes than the login has.
type refusingCalls struct {
	base  http.RoundTripper
	armed atomic.Bool
}

func (r *refusingCalls) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.armed.Load() && req.Method == http.MethodPost && req.Body != nil {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			return nil, refusal{}
		}
	}
	return r.base.RoundTrip(req)
}

// TestRefusedCallNamesTheLogin: a call the transport refused before it ran
// (a login needed) says so, keeps the error's type for the faces, is not
// called "may or may not have run", and the connection stays.
func TestRefusedCallNamesTheLogin(t *testing.T) {
	url, rec := askingHTTP(t)
	var rt *refusingCalls
	p := newPool(t, mcpclient.Server{Name: "asking", URL: url}, mcpclient.Options{
		HTTPTransport: func(_ mcpclient.Server, base http.RoundTripper) http.RoundTripper {
			rt = &refusingCalls{base: base}
			return rt
		},
	})
	if _, errs := p.List(ctx(t)); len(errs) != 0 {
		t.Fatal(errs)
	}
	rt.armed.Store(true)
	_, err := p.Call(ctx(t), "asking", "caps", nil)
	if _, ok := errors.AsType[refusal](err); !ok || errors.Is(err, mcpclient.ErrMaybeRan) ||
		err.Error() != "mcp asking.caps: the MCP server asking needs a login: run `zero mcp login asking`" {
		t.Fatalf("a refused call = %v; want the refusal itself, not ErrMaybeRan", err)
	}
	select {
	case c := <-rec.calls:
		t.Fatalf("the server got the refused call %v", c)
	default:
	}
	rt.armed.Store(false)
	if _, err := p.Call(ctx(t), "asking", "caps", nil); err != nil {
		t.Fatalf("after the login, the call = %v", err)
	}
}
