package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm/llmtest"
)

// A tool that fails is said once in the terminal: its ✗ line, not again
// as an error line, and the run's end, which the failure caused, says
// nothing more. (The shell cannot start: the workspace is gone. Shell 1,
// as agent 0's shell 0 started with the session.)
func TestInterveneChatFailedToolOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{HoldAfter: 1, Content: strings.Replace(chatCommandReply("echo one"), `"terminal"`, `"terminal", "session": 1`, 1)},
		llmtest.Reply{Content: strings.Replace(chatCommandReply("echo two"), `"terminal"`, `"terminal", "session": 1`, 1)},
	)
	ws := t.TempDir()
	ct := startChat(t, srv, ws, "--approval", "auto")
	ct.ready()
	held := srv.Held()
	at := ct.send("run something")
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked")
	}
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	srv.Release()
	// The second failure's line, then the idle prompt: the scrollback's
	// lines and the prompt's redraw reach the terminal in either order.
	ct.waitFor(ct.waitFor(at, "echo two"), "✗ ")
	ct.idle()
	out := ct.text()[at:]
	if n := strings.Count(out, "✗ "); n != 2 {
		t.Errorf("want one ✗ line per failed call (2), got %d:\n%s", n, out)
	}
	if strings.Contains(out, "error: tool") {
		t.Errorf("a failed tool is said again as an error:\n%s", out)
	}
	ct.typeText("\x04")
	ct.wait()
}

// Ctrl-C during a command is said once: the run's end says cancelled, the
// tool's result does not say it before.
func TestInterveneChatCancelOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatCommandReply("echo started-up; sleep 30")})
	ct := startChat(t, srv, t.TempDir(), "--approval", "auto")
	ct.ready()
	at := ct.send("wait a while")
	ct.waitFor(at, "started-up\r")
	ct.typeText("\x03")
	ct.answered(at, "cancelled")
	out := ct.text()[at:]
	if n := strings.Count(out, "cancelled"); n != 1 {
		t.Errorf("the cancel is said %d times, want once:\n%s", n, out)
	}
	ct.typeText("\x04")
	ct.wait()
}

// The model's misformatted replies: the user reads what happened in plain
// words (not the text meant for the model), and the error that ends the
// run says what to try.
func TestInterveneMisformatSaidPlainly(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: "I would rather chat"},
		llmtest.Reply{Content: "still chatting"},
		llmtest.Reply{Content: "chatting on"},
	)
	stdout, stderr, code := zeroRun(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--tool-protocol", "json", "--workspace", t.TempDir(), "hi")
	all := stdout + stderr
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if strings.Contains(all, "Reply with exactly one JSON object") || strings.Contains(all, "Your last reply") {
		t.Errorf("the user is shown the text meant for the model:\n%s", all)
	}
	for _, want := range []string{"asked it again (2 of 3)", "asked it again (3 of 3)", "--model", "zero doctor"} {
		if !strings.Contains(all, want) {
			t.Errorf("the output lacks %q:\n%s", want, all)
		}
	}
	if reqs := srv.Requests(); len(reqs) != 3 || !strings.Contains(requestText(reqs[1]), "Reply with exactly one JSON object") {
		t.Errorf("the model should still be told how to reply (%d requests)", len(reqs))
	}
}
