package llm_test

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
)

// countingTransport counts the requests it sees; the first fail of them get
// fail's error instead of reaching base.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    int
	fail []error
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.n++
	var err error
	if len(t.fail) > 0 {
		err, t.fail = t.fail[0], t.fail[1:]
	}
	t.mu.Unlock()
	if err != nil {
		if r.Body != nil {
			r.Body.Close() // as a RoundTripper must, also on errors
		}
		return nil, err
	}
	return t.base.RoundTrip(r)
}

func (t *countingTransport) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// refused is the error a dial to a port where nothing listens gives.
func refused(addr string) error {
	a, _ := net.ResolveTCPAddr("tcp", addr)
	return &net.OpError{Op: "dial", Net: "tcp", Addr: a, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// closedPort returns a loopback address where nothing listens any more.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func newCounted(t *testing.T, baseURL string, tr *countingTransport) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Options{Model: "m", BaseURL: baseURL, APIKey: testKey,
		HTTPClient: &http.Client{Transport: tr}, RetryDelay: time.Millisecond, MaxRetryDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A server that is not running costs two attempts, not four with seconds of
// backoff, and the error says what is wrong without the URL; a second call
// while it is still away makes one attempt.
func TestRefusedConnectionRetriedOnce(t *testing.T) {
	t.Parallel()
	addr := closedPort(t)
	tr := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	c := newCounted(t, "http://"+addr+"/v1", tr)
	_, err := c.Stream(testCtx(t), hello, nil)
	if n := tr.count(); n != 2 {
		t.Errorf("a refused connection was tried %d times, want 2 (one retry)", n)
	}
	ue, ok := errors.AsType[*llm.UnreachableError](err)
	if !ok || !errors.Is(err, llm.ErrUnreachable) {
		t.Fatalf("err = %v, want an *UnreachableError", err)
	}
	if ue.Reason != "connection refused" || ue.Host != addr {
		t.Errorf("UnreachableError = %+v, want connection refused at %s", ue, addr)
	}
	msg := err.Error()
	for _, want := range []string{"model connection failed", "connection refused", addr, "is the server running"} {
		if !strings.Contains(msg, want) {
			t.Errorf("err = %q, want it to contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "http://") || strings.Contains(msg, testKey) {
		t.Errorf("err leaks the URL or key: %q", msg)
	}

	_, err = c.Stream(testCtx(t), hello, nil)
	if n := tr.count(); n != 3 || !errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("a second call while the server is away: %d attempts in all (want 3), err %v", n, err)
	}
	if _, err := c.Models(testCtx(t)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Models = %v, want connection refused", err)
	}
}

// The one retry is there for a server that is just starting; once one
// answers, the next refusal gets its retry again.
func TestRefusedThenServerAnswers(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: "first"}, llmtest.Reply{Content: "second"})
	host := strings.TrimPrefix(strings.TrimPrefix(srv.URL(), "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	tr := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), fail: []error{refused(host)}}
	c := newCounted(t, srv.URL(), tr)
	res, err := c.Stream(testCtx(t), hello, nil)
	if err != nil || res.Content != "first" || tr.count() != 2 {
		t.Fatalf("Stream = %q, %v after %d attempts; want the answer after 2", res.Content, err, tr.count())
	}
	tr.mu.Lock()
	tr.fail = []error{refused(host)}
	tr.mu.Unlock()
	res, err = c.Stream(testCtx(t), hello, nil)
	if err != nil || res.Content != "second" || tr.count() != 4 {
		t.Errorf("after an answer: Stream = %q, %v, %d attempts in all; want the answer, 4", res.Content, err, tr.count())
	}
}

// A name that does not resolve is not retried at all.
func TestUnknownHostNotRetried(t *testing.T) {
	t.Parallel()
	dns := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "model.invalid", IsNotFound: true}}
	tr := &countingTransport{base: http.DefaultTransport, fail: []error{dns, dns, dns, dns}}
	c := newCounted(t, "http://model.invalid/v1", tr)
	_, err := c.Stream(testCtx(t), hello, nil)
	ue, ok := errors.AsType[*llm.UnreachableError](err)
	if !ok || ue.Reason != "no such host" || ue.Host != "model.invalid" {
		t.Fatalf("err = %v, want no such host for model.invalid", err)
	}
	if n := tr.count(); n != 1 {
		t.Errorf("an unknown host was tried %d times, want 1", n)
	}
}

// Failures of a server that is there keep their retries: a connection
// reset before any response, and 503s.
func TestTransientFailuresKeepRetries(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Hangup: true}, llmtest.Reply{Hangup: true}, llmtest.Reply{Hangup: true},
		llmtest.Reply{Content: "made it"})
	res, err := newClient(t, srv).Stream(testCtx(t), hello, nil)
	if err != nil || res.Content != "made it" || len(srv.Requests()) != 4 {
		t.Errorf("three resets then an answer: %q, %v after %d requests; want the answer after 4", res.Content, err, len(srv.Requests()))
	}

	busy := llmtest.Reply{Status: 503, Message: "overloaded"}
	srv = llmtest.NewServer(t, busy, busy, busy, busy)
	_, err = newClient(t, srv).Stream(testCtx(t), hello, nil)
	if err == nil || !strings.Contains(err.Error(), "after 4 attempts") || errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("four 503s: %v, want a failure after 4 attempts", err)
	}
}

// New leaves the caller's HTTP client as it was.
func TestNewKeepsCallersClient(t *testing.T) {
	t.Parallel()
	tr := &countingTransport{base: http.DefaultTransport}
	hc := &http.Client{Transport: tr}
	if _, err := llm.New(llm.Options{Model: "m", HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != tr {
		t.Errorf("New replaced the caller's transport with %T", hc.Transport)
	}
}
