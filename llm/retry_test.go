package llm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestServerDelay(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{"none", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "1"}, time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond, true},
		{"milliseconds win", map[string]string{"Retry-After": "9", "retry-after-ms": "120"}, 120 * time.Millisecond, true},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"negative", map[string]string{"Retry-After": "-4"}, 0, false},
		{"bad ms falls back", map[string]string{"retry-after-ms": "x", "Retry-After": "2"}, 2 * time.Second, true},
		{"huge saturates", map[string]string{"Retry-After": "1e30"}, time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := serverDelay(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("serverDelay(%v) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	now := time.Now()
	noJitter := func(int64) int64 { return 0 }
	fullJitter := func(n int64) int64 { return n - 1 }
	ra := func(v string) http.Header { h := http.Header{}; h.Set("Retry-After", v); return h }
	tests := []struct {
		name    string
		attempt int
		header  http.Header
		jitter  func(int64) int64
		want    time.Duration
	}{
		{"Retry-After honoured", 0, ra("2"), noJitter, 2 * time.Second},
		{"Retry-After capped", 0, ra("120"), noJitter, time.Minute},
		{"first backoff, low jitter", 0, nil, noJitter, 500 * time.Millisecond},
		{"first backoff, high jitter", 0, nil, fullJitter, time.Second},
		{"third backoff", 2, nil, fullJitter, 4 * time.Second},
		{"backoff capped", 10, nil, fullJitter, time.Minute},
		{"absurd attempt capped", 1000, nil, noJitter, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := retryDelay(tt.attempt, time.Second, time.Minute, tt.header, now, tt.jitter)
			if got != tt.want {
				t.Errorf("retryDelay(%d) = %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}
}

func TestTransientConnErr(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "http://x/v1/chat/completions", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), true},
		{"reset", wrap(syscall.ECONNRESET), true},
		{"EOF", wrap(io.EOF), true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"timeout", wrap(&net.DNSError{Err: "i/o timeout", IsTimeout: true}), true},
		{"unknown host", wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}}), false},
		{"bad certificate", wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), false},
		{"hostname mismatch", wrap(x509.HostnameError{Host: "x"}), false},
		{"unsupported scheme", wrap(errors.New(`unsupported protocol scheme "ftp"`)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := transientConnErr(tt.err); got != tt.want {
				t.Errorf("transientConnErr(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
