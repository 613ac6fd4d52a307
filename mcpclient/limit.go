package mcpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
)

// MaxMessage is the most Zero reads of one message from a server: a stdio
// line, an SSE event or a JSON body. It is enforced while the bytes
// arrive, so a server sending more costs Zero about this much memory, not
// what it sends: mcp-go would hold a whole line, and then a few copies of
// it while decoding. 16 MiB is four times MaxResult, so that a result of
// the size Zero keeps fits in its JSON whatever the escaping (a quote or a
// newline takes 2 bytes, a control character 6, as may a non-ASCII rune),
// and a result somewhat over MaxResult is cut to it rather than refused.
const MaxMessage = 16 << 20

// ErrMessageTooLarge is why a call fails whose answer (or any message of
// the server) ran past MaxMessage. Such a call is not tried again: the
// server would send the same, and the tool would run twice.
var ErrMessageTooLarge = fmt.Errorf("the server's answer exceeded %d MiB and was refused", MaxMessage>>20)

// maxSSECopying bounds what mcp-go copies to join an SSE event's lines: it
// appends each data line to the event's text so far, which is quadratic in
// the lines (16 MiB of empty data lines would copy terabytes). The cost is
// counted as the event's bytes so far at the end of each of its lines (an
// event on one line costs its size) and refused past this; servers send an
// event's JSON on one line.
const maxSSECopying = 4 * MaxMessage

// lineLimit passes r on until a line (the bytes between two '\n') grows
// past max: then it fails with ErrMessageTooLarge, and for good. ended is
// told, once, the first error it returns (the end of the stream, or that).
type lineLimit struct {
	r     io.Reader
	max   int
	line  int
	err   error
	over  atomic.Bool
	ended func(error)
	tap   *lineTap // shown what is read, when set
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if l.tap != nil {
		l.tap.feed(p[:n])
	}
	for b := p[:n]; ; {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.line += len(b)
			break
		}
		if l.line+i > l.max {
			l.line += i
			break
		}
		l.line, b = 0, b[i+1:]
	}
	if l.line > l.max {
		l.over.Store(true)
		err = ErrMessageTooLarge
	}
	if err != nil {
		l.err = err
		if l.ended != nil {
			l.ended(err)
		}
	}
	return n, err
}

// httpConn is the streamable HTTP transport whose requests say, through
// their context, when the answer ran past MaxMessage (limitedTransport
// refuses it), so that the call fails with ErrMessageTooLarge whatever
// mcp-go makes of the cut stream. It answers the server's questions
// itself, and tells the server of a call cancelled (see httpask.go).
type httpConn struct {
	*transport.StreamableHTTP
	url     string
	client  *http.Client // mcp-go's, with the round tripper of every request (OAuth's)
	headers map[string]string
	logger  *slog.Logger
	version atomic.Pointer[string] // the protocol version negotiated

	// life ends when the connection closes (the answers being sent).
	life context.Context
	end  context.CancelFunc

	schemas     *schemas // nil: no question is asked
	wrap        func(transport.RequestHandler) transport.RequestHandler
	detach      bool   // answer questions on Zero's own (see SetRequestHandler)
	requestDone func() // a test's hook
}

// schemasKey holds a connection's schemas in its requests' context, for
// the SSE reader's lineTap.
type schemasKey struct{}

// overflow is set by limitedTransport when a request's answer was refused.
type overflow struct{ hit atomic.Bool }

type overflowKey struct{}

// newHTTP is the transport of a URL server. wrap (Options.HTTPTransport),
// when set, wraps the round tripper that bounds what the server sends.
// listen opens the stream on which a server sends what is not part of a
// call's answer (GET): its requests outside a call, such as roots/list,
// which some servers (mcp-go's) send there only.
func newHTTP(s Server, logger *slog.Logger, wrap func(Server, http.RoundTripper) http.RoundTripper, listen bool) (*httpConn, error) {
	var rt http.RoundTripper = limitedTransport{http.DefaultTransport}
	if wrap != nil {
		rt = wrap(s, rt)
	}
	if listen {
		rt = &listenGuard{base: rt}
	}
	client := &http.Client{Transport: rt}
	opts := []transport.StreamableHTTPCOption{
		transport.WithHTTPBasicClient(client),
		transport.WithHTTPLogger(logger),
	}
	if len(s.Headers) > 0 {
		opts = append(opts, transport.WithHTTPHeaders(s.Headers))
	}
	if listen {
		opts = append(opts, transport.WithContinuousListening())
	}
	t, err := transport.NewStreamableHTTP(s.URL, opts...)
	if err != nil {
		return nil, err
	}
	h := &httpConn{StreamableHTTP: t, url: s.URL, client: client, headers: s.Headers, logger: logger}
	h.life, h.end = context.WithCancel(context.Background())
	return h, nil
}

// SendRequest sends a request; when its context ends before the answer,
// the server is told (notifications/cancelled), which mcp-go does over
// stdio only.
func (h *httpConn) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	o := &overflow{}
	rctx := context.WithValue(ctx, overflowKey{}, o)
	if h.schemas != nil {
		rctx = context.WithValue(rctx, schemasKey{}, h.schemas)
	}
	res, err := h.StreamableHTTP.SendRequest(rctx, req)
	if err != nil && ctx.Err() != nil {
		h.cancelled(ctx, req)
	}
	if err != nil && o.hit.Load() {
		return nil, ErrMessageTooLarge
	}
	return res, err
}

// limitedTransport bounds what a response's body may hold: each event of
// an SSE stream, or else the whole body, to MaxMessage.
type limitedTransport struct{ base http.RoundTripper }

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	o, _ := req.Context().Value(overflowKey{}).(*overflow)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		s := &sseLimit{rc: resp.Body, max: MaxMessage, maxCost: maxSSECopying, o: o}
		if sc, ok := req.Context().Value(schemasKey{}).(*schemas); ok {
			s.tap = &lineTap{to: sc}
		}
		resp.Body = s
	} else {
		resp.Body = &bodyLimit{rc: resp.Body, left: MaxMessage, o: o}
	}
	return resp, nil
}

// refuse records an overflow, and is the error saying it.
func refuse(o *overflow) error {
	if o != nil {
		o.hit.Store(true)
	}
	return ErrMessageTooLarge
}

// bodyLimit fails with ErrMessageTooLarge once more than left bytes came.
type bodyLimit struct {
	rc   io.ReadCloser
	left int
	o    *overflow
}

func (b *bodyLimit) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrMessageTooLarge
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if b.left -= n; b.left < 0 {
		return n, refuse(b.o)
	}
	return n, err
}

func (b *bodyLimit) Close() error { return b.rc.Close() }

// sseLimit fails with ErrMessageTooLarge once an SSE event (the bytes up
// to a blank line; lines end with '\n', as mcp-go reads them) grows past
// max or costs more than maxCost to join.
type sseLimit struct {
	rc                io.ReadCloser
	max, maxCost      int
	o                 *overflow
	event, line, cost int
	err               error
	tap               *lineTap // shown what is read, when set
}

func (s *sseLimit) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.rc.Read(p)
	if s.tap != nil {
		s.tap.feed(p[:n])
	}
	for _, c := range p[:n] {
		s.event++
		switch {
		case c == '\n' && s.line == 0:
			s.event, s.cost = 0, 0
		case c == '\n':
			s.cost += s.event
			s.line = 0
		case c != '\r':
			s.line++
		}
		if s.event > s.max || s.cost > s.maxCost {
			s.err = refuse(s.o)
			return n, s.err
		}
	}
	return n, err
}

func (s *sseLimit) Close() error { return s.rc.Close() }
