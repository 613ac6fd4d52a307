package llm

import (
	"net"
	"net/http"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// A server found away is taken for away only for a while: one that is
// starting later gets its one retry again.
func TestReachStateExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &reachTransport{base: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		})}
		req, _ := http.NewRequest("POST", "http://127.0.0.1:9/v1/chat/completions", nil)
		retryable := func() bool {
			_, err := tr.RoundTrip(req)
			ue, ok := err.(*UnreachableError)
			if !ok {
				t.Fatalf("err = %v, want an UnreachableError", err)
			}
			return ue.cause != nil
		}
		if !retryable() {
			t.Error("the first refusal should be worth a retry")
		}
		if retryable() {
			t.Error("a second refusal right after should not be")
		}
		time.Sleep(downFor + time.Second)
		if !retryable() {
			t.Error("a refusal long after the last should be worth a retry again")
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
