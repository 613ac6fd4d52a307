package mcpclient

import (
	"net/http"
	"sync/atomic"
)

// maxListenFailures is how many GETs of the server's stream may fail in a
// row before Zero stops asking for one.
const maxListenFailures = 3

// listenGuard ends mcp-go's retries of a stream the server does not keep.
// mcp-go opens a GET stream for the server's own requests (questions,
// roots) and, after any failure but 405 and 404, opens it again a second
// later, forever, logging an error each time: a server that answers the
// GET with 400, 401 or 500 would cost a request and a log line every
// second of the session. After maxListenFailures failures in a row, the
// next GETs are answered 405 here, which mcp-go takes for "this server
// offers no stream". A stream that opens resets the count.
type listenGuard struct {
	base     http.RoundTripper
	failures atomic.Int32
}

func (g *listenGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return g.base.RoundTrip(req)
	}
	if g.failures.Load() >= maxListenFailures {
		if req.Body != nil {
			req.Body.Close()
		}
		return &http.Response{
			Status: "405 Method Not Allowed", StatusCode: http.StatusMethodNotAllowed,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Request: req,
		}, nil
	}
	resp, err := g.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		g.failures.Add(1)
	} else {
		g.failures.Store(0)
	}
	return resp, err
}
