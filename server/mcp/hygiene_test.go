package mcp

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm/llmtest"
)

func TestHygieneRules(t *testing.T) {
	t.Parallel()
	h := newHygiene()
	h.in([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zero_run","_meta":{"progressToken":"tok-7"}}}`))
	h.in([]byte(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"zero_run","_meta":{"progressToken":70}}}`))
	progress := func(tok string) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1}}` + "\n")
	}
	if h.drop(progress(`"tok-7"`)) {
		t.Error("progress before the answer was dropped")
	}
	if h.drop([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n")) {
		t.Error("the answer of a live request was dropped")
	}
	if !h.drop(progress(`"tok-7"`)) {
		t.Error("progress after the answer went out")
	}
	if h.drop(progress(`70`)) {
		t.Error(`request "7" is not request 7: its progress goes on`)
	}
	h.in([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7","reason":"user"}}`))
	if !h.drop(progress(`70`)) {
		t.Error("progress after the client cancelled the request went out (the client forgot its token)")
	}
	if !h.drop([]byte(`{"jsonrpc":"2.0","id":"7","result":{"isError":true}}` + "\n")) {
		t.Error("the answer to a cancelled request went out")
	}
	if !h.drop(progress(`70`)) {
		t.Error("progress after the (dropped) answer went out")
	}
	if h.drop([]byte(`{"jsonrpc":"2.0","id":"7","result":{}}` + "\n")) {
		t.Error("a later request reusing the id was dropped")
	}
}

// A zero_run the client cancels (notifications/cancelled) cancels the run
// and gets no response: the client already forgot the request.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Match: "slow one", Content: command("sleeping", "sleep 30")})
	cw, lines := serveRaw(t, env)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	until := func(id string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("server output ended")
				}
				seen = append(seen, l)
				if strings.Contains(l, `"id":`+id+`,`) {
					return
				}
			case <-time.After(waitLong):
				t.Fatalf("no answer to %s; seen:\n%s", id, strings.Join(seen, "\n"))
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	until("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"slow one","workspace":%q},"_meta":{"progressToken":"p7"}}}`, env.Workspace))
	waitFor(t, func() bool {
		for _, in := range env.Manager.List() {
			if in.Running {
				return true
			}
		}
		return false
	}, "the run")
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user pressed Esc"}}`)
	waitFor(t, func() bool {
		for _, in := range env.Manager.List() {
			s, _ := env.Manager.Get(in.ID)
			if last, ok := s.Last(); ok && last.StopReason == "cancelled" {
				return true
			}
		}
		return false
	}, "the run to be cancelled")
	time.Sleep(300 * time.Millisecond) // time for a wrong answer to be written
	send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	until("8")
	for _, l := range seen {
		if strings.Contains(l, `"id":7,`) {
			t.Errorf("the cancelled request was answered: %s", l)
		}
	}
}
