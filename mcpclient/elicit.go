package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/zeroagent/zero/ask"
	"github.com/zeroagent/zero/cut"
)

// A server's questions (elicitation/create) reach the person through
// Options.Ask, as an ask.Question: a form (its fields parsed by
// ask.ParseForm, in the server's order) or a page to open. The call that
// caused the question waits for the answer with its timeout paused, and
// the run's end cancels the question. What the server sends is untrusted:
// its message is cut, a page must be https (or http on loopback), and a
// form that is not a flat form of ask's kinds is declined without asking.
// The answer (the form's values) is never logged.

// Bounds on what a question shows of the server's text.
const (
	maxQuestionText = 4 << 10 // bytes of a question's message
	maxPageURL      = 4 << 10 // bytes of a page's URL
	// maxOpenQuestions bounds the questions a server has open at once:
	// more are declined without asking (a server does not bury the
	// person under questions).
	maxOpenQuestions = 4
)

// callKey holds a call in flight in the context of its request, so that
// the question a server asks during it (over HTTP, on the call's stream)
// is tied to it.
type callKey struct{}

// rawSchemaKey holds an elicitation's requestedSchema as the server wrote
// it (see lineTap), for the handler mcp-go calls with a map.
type rawSchemaKey struct{}

// serverRequests wraps mcp-go's handler of a connection's requests from
// the server. An elicitation is answered "method not found" when no one
// can be asked (no capability was declared, so a server should not ask);
// else it gets its raw schema, by its id, before mcp-go decodes it. Roots
// and ping go straight to mcp-go.
func (p *Pool) serverRequests(sc *schemas, next transport.RequestHandler) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method != string(mcp.MethodElicitationCreate) {
			return next(ctx, req)
		}
		if p.opts.Ask == nil {
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND,
				"this client cannot ask its user: it declared no elicitation capability", nil), nil
		}
		if raw := sc.take(req.ID.String()); raw != nil {
			ctx = context.WithValue(ctx, rawSchemaKey{}, raw)
		}
		return next(ctx, req)
	}
}

// elicitor is mcp-go's elicitation handler for one server.
type elicitor struct {
	p *Pool
	c *conn
}

func (e elicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a := e.p.question(ctx, e.c, req.Params)
	res := &mcp.ElicitationResult{}
	res.Action = mcp.ElicitationResponseAction(a.Action)
	if a.Content != nil {
		res.Content = a.Content // a nil map would be sent as "content": null
	}
	return res, nil
}

// question puts a server's elicitation to the person and returns the
// answer for the server.
func (p *Pool) question(ctx context.Context, c *conn, params mcp.ElicitationParams) ask.Answer {
	log := p.opts.Logger.With("server", c.srv.Name)
	q := ask.Question{Server: c.srv.Name, Message: cut.Clip(strings.TrimSpace(params.Message), maxQuestionText)}
	if params.Mode == mcp.ElicitationModeURL {
		if err := checkPage(params.URL); err != nil {
			log.Warn("an mcp server's page to open was declined without asking", "reason", err)
			return ask.Declined
		}
		q.URL = params.URL
	} else {
		fields, err := ask.ParseForm(rawSchema(ctx, params.RequestedSchema))
		if err != nil {
			log.Warn("an mcp server's form was declined without asking", "reason", err)
			return ask.Declined
		}
		q.Fields = fields
	}
	c.mu.Lock()
	crowded := c.questions >= maxOpenQuestions
	if !crowded {
		c.questions++
	}
	c.mu.Unlock()
	if crowded {
		log.Warn("an mcp server's question was declined without asking: it has too many open", "open", maxOpenQuestions)
		return ask.Declined
	}
	defer func() {
		c.mu.Lock()
		c.questions--
		c.mu.Unlock()
	}()
	qctx, calls, release := p.bind(ctx, c)
	defer release()
	for _, cl := range calls {
		cl.pause()
		defer cl.resume()
	}
	log.Info("an mcp server asks the user", "fields", len(q.Fields), "page", q.URL != "")
	a, err := p.opts.Ask(qctx, q)
	switch {
	case err != nil && qctx.Err() != nil:
		log.Info("an mcp server's question was cancelled: its call ended")
		return ask.Answer{Action: ask.Cancel}
	case errors.Is(err, ask.ErrNoOne):
		log.Info("an mcp server's question was declined: no one can answer it")
		return ask.Declined
	case err != nil:
		log.Warn("an mcp server's question could not be asked; it is declined", "err", err)
		return ask.Declined
	}
	a, err = q.Complete(a)
	if err != nil {
		// The face should have checked it; the server gets no half answer.
		log.Warn("the answer to an mcp server's form did not fit it; the server is told cancel", "err", err)
		return ask.Answer{Action: ask.Cancel}
	}
	log.Info("an mcp server's question was answered", "action", a.Action)
	return a
}

// rawSchema is the schema as the server wrote it, when the reader kept it
// and it is the one mcp-go decoded; else mcp-go's (its fields in the
// order of their names).
func rawSchema(ctx context.Context, schema any) json.RawMessage {
	if raw, ok := ctx.Value(rawSchemaKey{}).(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) == nil && reflect.DeepEqual(v, schema) {
			return raw
		}
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}

// bind is the context of a question: it ends when the calls it belongs to
// have ended (the run cancelled, the call over) or the pool closes. Over
// HTTP a question comes on its call's stream and names it (callKey); over
// stdio it belongs to every call in flight on the server. A question
// outside any call lasts as long as the pool.
func (p *Pool) bind(ctx context.Context, c *conn) (context.Context, []*call, func()) {
	var calls []*call
	if cl, ok := ctx.Value(callKey{}).(*call); ok {
		calls = []*call{cl}
	} else {
		calls = c.inflight()
	}
	qctx, cancel := context.WithCancel(p.life)
	if len(calls) == 0 {
		return qctx, nil, cancel
	}
	var left atomic.Int32
	left.Store(int32(len(calls)))
	stops := make([]func() bool, 0, len(calls))
	for _, cl := range calls {
		stops = append(stops, context.AfterFunc(cl.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return qctx, calls, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// checkPage tells why a page a server asks the person to open is not one
// to show: only https, or http on this machine, with no user name in it
// (https://bank.example@evil.example reads as the bank).
func checkPage(raw string) error {
	if len(raw) > maxPageURL {
		return fmt.Errorf("the URL is %d bytes; at most %d are shown", len(raw), maxPageURL)
	}
	// No space, control or format character (a right-to-left override
	// makes a URL read as another).
	if strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsGraphic(r) }) {
		return errors.New("the URL holds spaces, control or format characters")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("the URL does not parse")
	case u.User != nil:
		return errors.New("the URL names a user")
	case u.Hostname() == "":
		return errors.New("the URL names no host")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("the URL's scheme is %q: only https, or http on this machine, is opened", cut.Clip(u.Scheme, 32))
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// rootLister answers a server's roots/list with the session's folders.
type rootLister struct {
	p *Pool
	c *conn
}

func (r rootLister) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	roots := rootsOf(r.p.opts.Roots())
	r.c.mu.Lock()
	r.c.rootsAsked, r.c.rootsSent = true, rootsKey(roots)
	r.c.mu.Unlock()
	return &mcp.ListRootsResult{Roots: roots}, nil
}

// rootsOf are folders as MCP roots: file:// URIs, named by the folder's
// name. A relative path (of no known folder) is left out.
func rootsOf(dirs []string) []mcp.Root {
	roots := []mcp.Root{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		p := filepath.ToSlash(d)
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // C:/x is file:///C:/x
		}
		roots = append(roots, mcp.Root{URI: (&url.URL{Scheme: "file", Path: p}).String(), Name: filepath.Base(d)})
	}
	return roots
}

func rootsKey(roots []mcp.Root) string {
	var b strings.Builder
	for _, r := range roots {
		b.WriteString(r.URI)
		b.WriteByte(0)
	}
	return b.String()
}

// tellRootsChanged sends notifications/roots/list_changed before a call
// when the session's folders are no longer those the server was last
// given, so that it asks again.
func (p *Pool) tellRootsChanged(ctx context.Context, c *conn, send func(context.Context) error) {
	if p.opts.Roots == nil {
		return
	}
	key := rootsKey(rootsOf(p.opts.Roots()))
	c.mu.Lock()
	changed := c.rootsAsked && key != c.rootsSent
	if changed {
		c.rootsAsked = false // once, until the server asks again
	}
	c.mu.Unlock()
	if changed {
		ctx, cancel := context.WithTimeout(ctx, p.opts.InitTimeout)
		defer cancel()
		if err := send(ctx); err != nil {
			p.opts.Logger.Warn("mcp server not told that the roots changed", "server", c.srv.Name, "err", err)
		}
	}
}
