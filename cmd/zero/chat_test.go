package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/zeroagent/zero/llm/llmtest"
)

// chatWait bounds every wait of these tests; it only guards against a hang.
const chatWait = 20 * time.Second

// chatTerm is zero chat in a pseudo-terminal, typed at and read as a person
// would: the test binary is the zero command (TestMain).
type chatTerm struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd

	mu  sync.Mutex
	raw []byte

	readDone chan struct{}
	exited   chan struct{}
	exitErr  error
}

// startChat starts `zero chat --sandbox local --workspace ws args...`
// against the scripted model srv.
func startChat(t *testing.T, srv *llmtest.Server, ws string, args ...string) *chatTerm {
	t.Helper()
	return startTerm(t, ws, chatEnv(t, srv), append([]string{"chat", "--sandbox", "local", "--workspace", ws}, args...)...)
}

func chatEnv(t *testing.T, srv *llmtest.Server) []string {
	return []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "TERM=xterm-256color",
		"XDG_DATA_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}
}

// startTerm starts zero with args in a pseudo-terminal of 200x40 in dir.
func startTerm(t *testing.T, dir string, env []string, args ...string) *chatTerm {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	cmd.Dir = dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal("no pseudo-terminal:", err)
	}
	ct := &chatTerm{t: t, ptmx: ptmx, cmd: cmd, readDone: make(chan struct{}), exited: make(chan struct{})}
	go func() { // ends when the terminal closes (the process and its children are gone)
		defer close(ct.readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			// Answer where the cursor is, as a terminal does: Bubble Tea
			// asks (through termenv) at start and waits up to 5 s.
			for range bytes.Count(buf[:n], []byte("\x1b[6n")) {
				_, _ = ptmx.Write([]byte("\x1b[1;1R"))
			}
			ct.mu.Lock()
			ct.raw = append(ct.raw, buf[:n]...)
			ct.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		ct.exitErr = cmd.Wait()
		close(ct.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-ct.exited:
		default:
			_ = cmd.Process.Kill()
			<-ct.exited
		}
		ptmx.Close()
		select {
		case <-ct.readDone:
		case <-time.After(5 * time.Second):
			t.Error("the terminal stayed open after zero ended")
		}
		if t.Failed() {
			t.Logf("terminal output:\n%s", ct.text())
		}
	})
	return ct
}

// text is what the terminal showed, without the control sequences.
func (ct *chatTerm) text() string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ansi.Strip(string(ct.raw))
}

// mark is where the output is now: waits from there see only what follows.
func (ct *chatTerm) mark() int { return len(ct.text()) }

// waitFor waits until want shows after from and returns where it ends.
func (ct *chatTerm) waitFor(from int, want string) int {
	ct.t.Helper()
	deadline := time.Now().Add(chatWait)
	for {
		if i := strings.Index(ct.text()[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-ct.exited:
			if i := strings.Index(ct.text()[from:], want); i >= 0 {
				return from + i + len(want)
			}
			ct.t.Fatalf("zero ended (%v) before it showed %q", ct.exitErr, want)
		default:
		}
		if time.Now().After(deadline) {
			ct.t.Fatalf("the terminal never showed %q", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// typeText types s (end it with "\r" for Enter).
func (ct *chatTerm) typeText(s string) {
	ct.t.Helper()
	if _, err := ct.ptmx.Write([]byte(s)); err != nil {
		ct.t.Fatal(err)
	}
}

// send types a message or command and presses Enter.
func (ct *chatTerm) send(s string) int {
	ct.t.Helper()
	at := ct.mark()
	ct.typeText(s)
	ct.typeText("\r")
	return at
}

// wait waits for zero to end and returns its exit status.
func (ct *chatTerm) wait() int {
	ct.t.Helper()
	select {
	case <-ct.exited:
	case <-time.After(chatWait):
		ct.t.Fatal("zero chat did not end")
	}
	var ee *exec.ExitError
	switch {
	case ct.exitErr == nil:
		return 0
	case errors.As(ct.exitErr, &ee):
		return ee.ExitCode()
	}
	ct.t.Fatal(ct.exitErr)
	return -1
}

// answered waits for the answer want after from, then for the idle
// prompt: its hint shows only once the run has ended.
func (ct *chatTerm) answered(from int, want string) {
	ct.t.Helper()
	ct.waitFor(ct.waitFor(from, want), "Enter sends")
}

// ready waits for the prompt.
func (ct *chatTerm) ready() {
	ct.t.Helper()
	ct.waitFor(0, "Enter sends")
}

func chatAnswer(text string) string {
	return `{"thoughts": ["answering"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "` + text + `"}}`
}

func chatCommandReply(code string) string {
	return `{"thoughts": ["run it"], "headline": "Running it", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "` + code + `"}}`
}

// A message typed gets its answer, the conversation goes on with the next
// one (the model sees the first exchange), and Ctrl-D at the empty prompt
// leaves with status 0.
func TestChatConversation(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatAnswer("FIRST-ANSWER is forty-two")},
		llmtest.Reply{Match: "second question", Content: chatAnswer("SECOND-ANSWER is yes")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	ct.answered(ct.send("what is the answer"), "FIRST-ANSWER is forty-two")
	ct.answered(ct.send("second question"), "SECOND-ANSWER is yes")
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "FIRST-ANSWER") {
		t.Errorf("the second request should carry the first exchange; %d requests", len(reqs))
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("Ctrl-D: exit %d, want 0", code)
	}
}

// A message typed while the model streams is an intervention: the model's
// next request carries it.
func TestChatIntervention(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Reasoning: "thinking slowly about it all", ChunkSize: 4, HoldAfter: 1, Content: chatAnswer("first answer")},
		llmtest.Reply{Match: "CHANGE-OF-PLAN", Content: chatAnswer("SWITCHED plans now")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	held := srv.Held()
	ct.send("start something")
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked")
	}
	ct.waitFor(0, "thinking slowly") // the run is live and showing
	at := ct.send("CHANGE-OF-PLAN please")
	ct.waitFor(at, "sent to the running agent")
	ct.answered(at, "SWITCHED plans now")
	reqs := srv.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[len(reqs)-1].Body), "CHANGE-OF-PLAN please") {
		t.Errorf("the model's next request lacks the intervention (%d requests)", len(reqs))
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// With approval ask, a command waits for the answer at the inline
// question: y runs it, n does not.
func TestChatApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		ran    bool
	}{{"y", true}, {"n", false}} {
		t.Run(tc.answer, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			marker := filepath.Join(ws, "ran")
			srv := llmtest.NewServer(t,
				llmtest.Reply{Content: chatCommandReply("echo yes > " + marker)},
				llmtest.Reply{Content: chatAnswer("ALL-DONE here")},
			)
			ct := startChat(t, srv, ws, "--approval", "ask")
			ct.ready()
			at := ct.send("mark it")
			ct.waitFor(at, "Allow code_execution_tool echo yes > "+marker+"? [y]es/[n]o/[a]lways")
			at = ct.mark()
			ct.typeText(tc.answer)
			ct.answered(at, "ALL-DONE here")
			if _, err := os.Stat(marker); (err == nil) != tc.ran {
				t.Errorf("the command ran = %v, want %v", err == nil, tc.ran)
			}
			ct.typeText("\x04")
			if code := ct.wait(); code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
		})
	}
}

// /reset starts a new session, /sessions lists both, /profile shows and
// switches, /load goes back to the first and shows its conversation.
func TestChatSlashCommands(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("FIRST-DONE indeed")})
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	ct.answered(ct.send("first task title"), "FIRST-DONE indeed")
	ct.waitFor(ct.send("/reset"), "a new conversation")

	at := ct.send("/sessions")
	ct.waitFor(at, "(no message yet)")
	out := ct.text()[at:]
	m := regexp.MustCompile(`([0-9a-f]{16}) +just now +1 +first task title`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("/sessions lacks the first session:\n%s", out)
	}
	first := m[1]
	if !regexp.MustCompile(`\* [0-9a-f]{16} +just now +0 +\(no message yet\)`).MatchString(out) {
		t.Errorf("/sessions should mark the new session as the current one:\n%s", out)
	}

	ct.waitFor(ct.send("/profile"), "* agent0")
	ct.waitFor(ct.send("/profile developer"), "profile developer from the next message on")
	ct.waitFor(ct.send("/profile nosuchprofile"), "profile not found")

	at = ct.send("/load " + first[:6])
	ct.waitFor(at, "session "+first+": first task title")
	ct.waitFor(at, "› first task title")
	ct.waitFor(at, "FIRST-DONE indeed")
	ct.waitFor(ct.send("/help"), "/load ID")
	ct.waitFor(ct.send("/nonsense"), "unknown command /nonsense")

	ct.send("/exit")
	if code := ct.wait(); code != 0 {
		t.Errorf("/exit: exit %d, want 0", code)
	}
}

// Ctrl-C cancels the run the model holds, the prompt comes back for the
// next message, and Ctrl-C at the idle prompt leaves with status 0.
func TestChatCtrlCCancelsRun(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{ChunkSize: 4, HoldAfter: 1, Content: chatAnswer("never seen")},
		llmtest.Reply{Match: "are you there", Content: chatAnswer("BACK-AGAIN yes")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	held := srv.Held()
	at := ct.send("hold on")
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked")
	}
	ct.waitFor(at, "waiting for the model") // the spinner says what Zero waits for
	at = ct.mark()
	ct.typeText("\x03")
	ct.waitFor(ct.waitFor(at, "cancelled"), "Enter sends") // the idle prompt's hint
	ct.answered(ct.send("are you there"), "BACK-AGAIN yes")
	// Ctrl-C with a message typed clears it; at the empty prompt it leaves.
	at = ct.mark()
	ct.typeText("abandoned text")
	at = ct.waitFor(at, "abandoned text")
	ct.typeText("\x03")
	ct.waitFor(at, "Message the agent") // the empty input's placeholder
	ct.typeText("\x03")
	if code := ct.wait(); code != 0 {
		t.Errorf("Ctrl-C at the idle prompt: exit %d, want 0", code)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the model got %d requests, want 2 (the cleared message is not sent)", n)
	}
}

// An error of the model is printed once.
func TestChatErrorOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Status: 401, Message: "Incorrect API key provided"})
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	at := ct.send("hello")
	ct.answered(at, "Incorrect API key provided")
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	if n := strings.Count(ct.text()[at:], "Incorrect API key provided"); n != 1 {
		t.Errorf("the error was shown %d times, want once", n)
	}
}

// zero alone opens the chat on a terminal.
func TestChatIsZeroOnATerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	ws := t.TempDir()
	ct := startTerm(t, ws, append(chatEnv(t, srv), "ZERO_SANDBOX=local"))
	ct.ready()
	if !strings.Contains(ct.text(), ws) {
		t.Errorf("the header should name the workspace %s", ws)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// --continue picks up the workspace's latest session in a new process: its
// conversation is shown, and the agent remembers it.
func TestChatContinue(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatAnswer("REMEMBERED the number 7")},
		llmtest.Reply{Match: "which number", Content: chatAnswer("it was seven")},
	)
	ws := t.TempDir()
	env := chatEnv(t, srv) // one data folder for both processes
	args := []string{"chat", "--sandbox", "local", "--workspace", ws}
	first := startTerm(t, ws, env, args...)
	first.ready()
	first.answered(first.send("remember the number 7"), "REMEMBERED the number 7")
	first.typeText("\x04")
	if code := first.wait(); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}

	again := startTerm(t, ws, env, append(args, "--continue")...)
	at := again.waitFor(0, "› remember the number 7") // the transcript
	again.waitFor(at, "REMEMBERED the number 7")
	again.ready()
	again.answered(again.send("which number was it"), "it was seven")
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "REMEMBERED the number 7") {
		t.Errorf("the continued session's request lacks the earlier exchange")
	}
	again.typeText("\x04")
	if code := again.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// zero typed in the home directory asks before the agent gets all of it; no
// is no chat.
func TestChatAsksForHomeWorkspace(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	home := t.TempDir()
	ct := startTerm(t, home, append(chatEnv(t, srv), "ZERO_SANDBOX=local", "HOME="+home))
	ct.waitFor(0, "whole home directory")
	ct.typeText("n\r")
	if code := ct.wait(); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if strings.Contains(ct.text(), "Enter sends") {
		t.Error("the chat started in a workspace the user refused")
	}
}

// Without a terminal, zero alone prints the usage and zero chat says it
// needs one; both exit 2.
func TestChatNeedsTerminal(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"chat"}} {
		cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"}, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("zero %v: %v, want exit 2", args, err)
		}
		want := "Usage:"
		if args != nil {
			want = "must be a terminal"
		}
		if !strings.Contains(stderr.String(), want) || stdout.Len() != 0 {
			t.Errorf("zero %v: stderr %q lacks %q (stdout %q)", args, stderr.String(), want, stdout.String())
		}
	}
}

func TestChatLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		writes []string
		width  int
		lines  []string
		view   string
	}{
		{name: "split", writes: []string{"one\ntw", "o\nthr"}, lines: []string{"one", "two"}, view: "thr"},
		{name: "crlf across writes", writes: []string{"a\r", "\nb"}, width: 80, lines: []string{"a"}, view: "b"},
		{name: "progress", writes: []string{"10%\r50%\r100%\n"}, lines: []string{"100%"}},
		{name: "style carried", writes: []string{dim + "x\ny" + reset + "\n"}, lines: []string{dim + "x" + reset, dim + "y" + reset}},
		{name: "cursor moves dropped", writes: []string{"a\x1b[2Kb\x1b]0;title\x07c\tz\n"}, lines: []string{"abc    z"}},
		{name: "wrapped", writes: []string{"aaa bbb ccc ddd"}, width: 8, lines: []string{"aaa bbb"}, view: "ccc ddd"},
		{name: "finished line wrapped", writes: []string{"aaa bbb ccc\n"}, width: 8, lines: []string{"aaa bbb", "ccc"}},
		{name: "escape cut between writes", writes: []string{"x\x1b[3", "1mred"}, width: 80, view: "x\x1b[31mred" + reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l chatLines
			var got []string
			for _, w := range tc.writes {
				l.Write([]byte(w))
				got = append(got, l.take(tc.width)...)
			}
			if strings.Join(got, "|") != strings.Join(tc.lines, "|") || l.view() != tc.view {
				t.Errorf("lines %q view %q, want %q and %q", got, l.view(), tc.lines, tc.view)
			}
		})
	}
}
