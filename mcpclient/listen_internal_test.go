package mcpclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

type countingRT struct {
	status int
	err    error
	calls  int
}

func (c *countingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	c.calls++
	if c.err != nil {
		return nil, c.err
	}
	return &http.Response{StatusCode: c.status, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

// A server that keeps refusing the stream's GET (or failing it) is asked
// maxListenFailures times, then told 405 without a request, which mcp-go
// takes for "no stream here" and stops retrying every second; POSTs are
// never touched, and a stream that opens resets the count.
func TestListenGuard(t *testing.T) {
	for _, base := range []*countingRT{{status: http.StatusInternalServerError}, {status: http.StatusUnauthorized}, {err: errors.New("refused")}} {
		g := &listenGuard{base: base}
		get := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		for range maxListenFailures {
			if resp, _ := g.RoundTrip(get); resp != nil && resp.StatusCode == http.StatusMethodNotAllowed {
				t.Fatal("405 before the server failed enough")
			}
		}
		resp, err := g.RoundTrip(get)
		if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || base.calls != maxListenFailures {
			t.Fatalf("after %d failures: %v %v, the server asked %d times", maxListenFailures, resp, err, base.calls)
		}
		post := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		if _, _ = g.RoundTrip(post); base.calls != maxListenFailures+1 {
			t.Fatal("a POST was not sent")
		}
	}
	ok := &countingRT{status: http.StatusOK}
	g := &listenGuard{base: ok}
	g.failures.Store(maxListenFailures - 1)
	if resp, _ := g.RoundTrip(httptest.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)); resp.StatusCode != http.StatusOK || g.failures.Load() != 0 {
		t.Fatalf("an opened stream: %v, failures %d", resp.StatusCode, g.failures.Load())
	}
}
