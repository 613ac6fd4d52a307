package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// Over streamable HTTP a call the client cancelled is not answered either:
// a zero_status that was waiting (no notification, so a JSON answer) comes
// back 202 with no body, and the session goes on.
func TestHTTPCancelledCallNotAnswered(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("done")})
	url, token := startHTTP(t, env)
	session := httpSession(t, url, token)
	_, body := post(t, url, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"zero_run","arguments":{"message":"hi","workspace":%q}}}`, env.Workspace))
	var out struct {
		Result struct {
			StructuredContent struct{ Session string } `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(body), &out) != nil || out.Result.StructuredContent.Session == "" {
		t.Fatalf("zero_run: %s", body)
	}
	sess, err := env.Manager.Get(out.Result.StructuredContent.Session)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   string
	}
	waited := make(chan answer, 1)
	go func() {
		status, body := post(t, url, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"zero_status","arguments":{"session":%q,"since":%d,"wait":30}}}`,
			sess.ID(), sess.Cursor()))
		waited <- answer{status, body}
	}()
	// A cancellation could overtake the call on its way in, so it is sent
	// until the call comes back: a client's repeated cancel does no harm.
	deadline := time.After(waitLong)
	for done := false; !done; {
		post(t, url, session, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user pressed Esc"}}`)
		select {
		case a := <-waited:
			if a.status != http.StatusAccepted || a.body != "" {
				t.Errorf("the cancelled call was answered: %d %q, want 202 and no body", a.status, a.body)
			}
			done = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("the cancelled zero_status never came back")
		}
	}
	if status, body := post(t, url, session, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"zero_sessions","arguments":{}}}`); status != http.StatusOK || !strings.Contains(body, out.Result.StructuredContent.Session) {
		t.Errorf("after the cancel: %d %s", status, body)
	}
}
