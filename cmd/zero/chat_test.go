package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
)

// chatWait bounds every wait of these tests; it only guards against a hang,
// and is long enough for a pty test on two cores shared with other test runs
// (20 s was not: TestChat21ApprovalShowsTheChange ran out of it beside three
// other workers).
const chatWait = time.Minute

// chatTerm is zero chat in a pseudo-terminal, typed at and read as a person
// would: the test binary is the zero command (TestMain). What zero writes is
// kept twice: as a stream (text, mark and waitFor look for lines printed
// after a point), and on the screen of a terminal emulator (screen and
// waitScreen read the prompt area as it shows now: Bubble Tea redraws only
// the cells that changed, so the stream has no whole picture of it).
type chatTerm struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd

	mu  sync.Mutex
	raw []byte
	emu *vt.Emulator

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
	ct := &chatTerm{t: t, ptmx: ptmx, cmd: cmd, emu: vt.NewEmulator(200, 40), readDone: make(chan struct{}), exited: make(chan struct{})}
	// The emulator's answers to queries go nowhere (zero must not need
	// them); the copy ends when the emulator's pipe closes.
	go func() { _, _ = io.Copy(io.Discard, ct.emu) }()
	// The reader ends when the terminal closes (the process and its
	// children are gone).
	go func() {
		defer close(ct.readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			ct.mu.Lock()
			ct.raw = append(ct.raw, buf[:n]...)
			_, _ = ct.emu.Write(buf[:n])
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
		case <-time.After(time.Minute):
			t.Error("the terminal stayed open after zero ended")
		}
		if t.Failed() {
			t.Logf("terminal output:\n%s", ct.text())
			t.Logf("the screen at the end:\n%s", ct.screen())
		}
		if pw, ok := ct.emu.InputPipe().(*io.PipeWriter); ok {
			pw.Close()
		}
	})
	return ct
}

// screen is what the terminal's screen shows now, line by line.
func (ct *chatTerm) screen() string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var lines []string
	for y := range ct.emu.Height() {
		var b strings.Builder
		for x := 0; x < ct.emu.Width(); x++ {
			c := ct.emu.CellAt(x, y)
			switch {
			case c == nil:
				b.WriteByte(' ')
			case c.Width == 0 && c.Content == "": // the second half of a wide character
			case c.Content == "":
				b.WriteByte(' ')
			default:
				b.WriteString(c.Content)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// prompt is the prompt area, as far as the tests need it: the last lines
// the screen shows.
func (ct *chatTerm) prompt() string {
	lines := strings.Split(ct.screen(), "\n")
	return strings.Join(lines[max(len(lines)-10, 0):], "\n")
}

// waitScreen waits until the prompt area shows every one of want.
func (ct *chatTerm) waitScreen(want ...string) {
	ct.t.Helper()
	deadline := time.Now().Add(chatWait)
	for {
		p := ct.prompt()
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(p, w) }) {
			return
		}
		select {
		case <-ct.exited:
			ct.t.Fatalf("zero ended (%v) before its prompt area showed %q:\n%s", ct.exitErr, want, p)
		default:
		}
		if time.Now().After(deadline) {
			ct.t.Fatalf("the prompt area never showed %q:\n%s", want, p)
		}
		time.Sleep(10 * time.Millisecond)
	}
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

// send types a message or command and presses Enter once the input
// shows it: whatever the prompt area shows after that is news.
func (ct *chatTerm) send(s string) int {
	ct.t.Helper()
	at := ct.mark()
	ct.typeText(s)
	ct.waitScreen("› " + s)
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
	// What it printed last may still be on its way from the terminal: the
	// reader ends once the terminal is empty and closed (EIO).
	select {
	case <-ct.readDone:
	case <-time.After(2 * time.Second):
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
// prompt.
func (ct *chatTerm) answered(from int, want string) {
	ct.t.Helper()
	ct.waitFor(from, want)
	ct.idle()
}

// idleHint is the hint under the input while no run is going on.
const idleHint = "Enter sends · /help · Ctrl-D leaves"

// idle waits for the empty idle prompt: its hint shows only while no run
// goes on, and the input is empty once a message was sent (send waited
// for the input to show it).
func (ct *chatTerm) idle() {
	ct.t.Helper()
	ct.waitScreen("› Message the agent", idleHint)
}

// ready waits for the prompt.
func (ct *chatTerm) ready() {
	ct.t.Helper()
	ct.idle()
}

// askReady is what an approval question shows once keys answer it.
const askReady = "y: yes · n: no · a: always, then Enter"

// answer answers the approval question shown with a (y, n or a), as a
// person does: once the question takes answers, the key, then Enter once
// the choice shows.
func (ct *chatTerm) answer(a string) {
	ct.t.Helper()
	ct.waitScreen(askReady)
	ct.typeText(a)
	ct.waitScreen("· Enter confirms")
	ct.typeText("\r")
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
	ct.waitScreen("thinking slowly") // the run is live and showing
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
// question: y and Enter run it, n and Enter do not.
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
			ct.waitScreen("Allow code_execution_tool echo yes > " + marker + "? [y]es/[n]o/[a]lways")
			at = ct.mark()
			ct.answer(tc.answer)
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
	ct.waitFor(ct.send("/profile nosuchprofile"), `error: no profile "nosuchprofile"; the profiles are: agent0, default, developer, hacker, researcher`)

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
// next message, and Ctrl-C twice at the empty idle prompt leaves with
// status 0.
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
	ct.waitScreen("waiting for the model") // the spinner says what Zero waits for
	at = ct.mark()
	ct.typeText("\x03")
	ct.answered(at, "cancelled")
	ct.answered(ct.send("are you there"), "BACK-AGAIN yes")
	// Ctrl-C with a message typed clears it; at the empty prompt it says
	// how to leave, and the second one leaves.
	ct.typeText("abandoned text")
	ct.waitScreen("› abandoned text")
	ct.typeText("\x03")
	ct.waitScreen("› Message the agent") // the empty input's placeholder
	ct.typeText("\x03")
	ct.waitScreen("press Ctrl-C again to leave")
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
	// The header follows once the session is set up, which may be after
	// the prompt shows.
	ct.waitFor(0, " · "+ws+" · profile ")
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

// sessionID waits for the id of the session the chat shows (the n-th
// announced since from, counting from 0) and returns it.
func (ct *chatTerm) sessionID(from, n int) string {
	ct.t.Helper()
	re := regexp.MustCompile(`session ([0-9a-f]{16})\b`)
	deadline := time.Now().Add(chatWait)
	for {
		if m := re.FindAllStringSubmatch(ct.text()[from:], -1); len(m) > n {
			return m[n][1]
		}
		if time.Now().After(deadline) {
			ct.t.Fatalf("the terminal never named session %d", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runEnd is how the last run of a stored session ended, from zero
// sessions export.
func runEnd(t *testing.T, env []string, id string) string {
	t.Helper()
	out, errOut, code := zeroRun(t, env, "sessions", "export", id)
	if code != 0 {
		t.Fatalf("zero sessions export %s: exit %d: %s", id, code, errOut)
	}
	var exp struct {
		Events []loop.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &exp); err != nil {
		t.Fatalf("zero sessions export %s: %v", id, err)
	}
	end := ""
	for _, e := range exp.Events {
		if e.Type == loop.EventRunEnded {
			end = e.StopReason
		}
	}
	return end
}

// ptyRun runs zero with args in a pseudo-terminal that answers nothing
// (nothing is ever written to it) and returns what it wrote once it ended;
// it fails when zero has not ended within limit.
func ptyRun(t *testing.T, dir string, env []string, limit time.Duration, args ...string) (out string, code int) {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	cmd.Dir = dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	var buf bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&buf, ptmx) // ends with EIO once zero and its children are gone
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(limit): // a failure guard, not a measurement
		_ = cmd.Process.Kill()
		<-exited
		<-read
		t.Fatalf("zero %s did not end within %v in a terminal that answers nothing; it wrote %q", strings.Join(args, " "), limit, buf.String())
	}
	select {
	case <-read:
	case <-time.After(time.Minute):
		t.Fatal("the terminal stayed open after zero ended")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return buf.String(), code
}

// terminalQueries are questions to the terminal that hold a program until
// the terminal answers: the background color, and where the cursor is.
var terminalQueries = []string{"\x1b]11;?", "\x1b[6n"}

// zero --version and zero run on a terminal ask it nothing: a terminal
// that does not answer (script, some multiplexers) must not hold them, nor
// swallow what is typed ahead. No package of the binary queries the
// terminal as it starts.
func TestChatCommandsAskTheTerminalNothing(t *testing.T) {
	t.Parallel()
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		out, code := ptyRun(t, t.TempDir(), nil, 3*time.Second, "--version")
		if code != 0 || !strings.Contains(out, "zero ") {
			t.Errorf("zero --version: exit %d, wrote %q", code, out)
		}
		for _, q := range terminalQueries {
			if strings.Contains(out, q) {
				t.Errorf("zero --version asked the terminal %q: %q", q, out)
			}
		}
	})
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("RAN-QUIETLY yes")})
		ws := t.TempDir()
		out, code := ptyRun(t, ws, chatEnv(t, srv), chatWait, "run", "--sandbox", "local", "--workspace", ws, "say hello")
		if code != 0 || !strings.Contains(out, "RAN-QUIETLY yes") {
			t.Errorf("zero run: exit %d, wrote %q", code, out)
		}
		for _, q := range terminalQueries {
			if strings.Contains(out, q) {
				t.Errorf("zero run asked the terminal %q: %q", q, out)
			}
		}
	})
}

// A command the model chose cannot make the approval question say another
// one: its carriage return and erase-line show as what they are, in the
// question, in its answer kept in the scrollback, and in the command line.
func TestChatApprovalShowsControls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply(`rm -rf nothing-here #\r\u001b[2KAllow code_execution_tool ls -la`)},
		llmtest.Reply{Content: chatAnswer("NOT-RUN indeed")},
	)
	ct := startChat(t, srv, t.TempDir(), "--approval", "ask")
	ct.ready()
	at := ct.send("tidy the folder")
	ct.waitScreen("Allow code_execution_tool rm -rf nothing-here #")
	if strings.Contains(ct.prompt(), "\nAllow code_execution_tool ls -la") {
		t.Errorf("the question shows a line of its own that the model wrote:\n%s", ct.prompt())
	}
	ct.answer("n")
	ct.answered(at, "NOT-RUN indeed")
	out := ct.text()[at:]
	if !regexp.MustCompile(`Allow code_execution_tool rm -rf nothing-here #\S+Allow code_execution_tool ls -la\? \[y\]es/\[n\]o/\[a\]lways no`).MatchString(out) {
		t.Errorf("the answered question lacks the command as the model wrote it:\n%s", out)
	}
	if !strings.Contains(out, "$ rm -rf nothing-here #") {
		t.Errorf("the command line lacks the start of the command:\n%s", out)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// A message being typed when an approval question comes up answers
// nothing ("please" has an a, for always): what is typed then is kept in
// the message, which comes back once the question is answered with y and
// Enter.
func TestChatApprovalNeedsEnter(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatCommandReply("echo yes > " + marker)},
		llmtest.Reply{Content: chatAnswer("ALL-DONE here")},
		llmtest.Reply{Match: "please also note", Content: chatAnswer("DRAFT-SENT later")},
	)
	ct := startChat(t, srv, ws, "--approval", "ask")
	ct.ready()
	at := ct.send("mark it")
	ct.waitScreen("Allow code_execution_tool echo yes > " + marker)
	ct.typeText("please also note\r") // typed on, as the question came up
	ct.waitScreen(askReady, "your message, kept for after the answer:", "› please also note")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran: a message typed answered the question")
	}
	ct.answer("y")
	ct.waitFor(at, "ALL-DONE here")
	ct.waitScreen(idleHint, "› please also note") // the message is back in the input
	out := ct.text()[at:]
	if !strings.Contains(out, "[a]lways yes") || strings.Contains(out, "[a]lways always") {
		t.Errorf("the question's answer should be yes:\n%s", out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the command did not run after y and Enter")
	}
	at = ct.mark()
	ct.typeText("\r")
	ct.answered(at, "DRAFT-SENT later")
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// SIGTERM, or the terminal closing (SIGHUP), during a run cancels it and
// closes the session as leaving does: the run's end is stored, and the
// exit status tells the signal.
func TestChatSignalEndsRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hangup bool
		code   int
	}{{"SIGTERM", false, 143}, {"hangup", true, 129}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Reply{ChunkSize: 4, HoldAfter: 1, Content: chatAnswer("never seen")})
			ws := t.TempDir()
			env := chatEnv(t, srv) // one data folder for the chat and the export
			ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws)
			ct.ready()
			id := ct.sessionID(0, 0)
			held := srv.Held()
			ct.send("hold on")
			select {
			case <-held:
			case <-time.After(chatWait):
				t.Fatal("the model was never asked")
			}
			if tc.hangup {
				ct.ptmx.Close()
			} else if err := ct.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := ct.wait(); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if end := runEnd(t, env, id); end != loop.StopCancelled {
				t.Errorf("the run ended %q, want %q", end, loop.StopCancelled)
			}
		})
	}
}

// --continue refuses the latest session while another zero process has
// it open, as zero run --continue does, instead of going on in a new one.
func TestChatContinueHeldElsewhere(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("FIRST-DONE indeed")})
	ws := t.TempDir()
	env := chatEnv(t, srv)
	args := []string{"chat", "--sandbox", "local", "--workspace", ws}
	first := startTerm(t, ws, env, args...)
	first.ready()
	first.answered(first.send("first task"), "FIRST-DONE indeed")

	again := startTerm(t, ws, env, append(args, "--continue")...)
	if code := again.wait(); code != 1 {
		t.Errorf("--continue of a session open elsewhere: exit %d, want 1", code)
	}
	if out := again.text(); !strings.Contains(out, "open in another zero process") || strings.Contains(out, "Enter sends") {
		t.Errorf("--continue should refuse, saying why:\n%s", out)
	}
	first.typeText("\x04")
	if code := first.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// /reset and /load close the session the chat leaves: another zero
// process can go on with it.
func TestChatResetAndLoadLetGo(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "first task", Content: chatAnswer("FIRST-DONE indeed")},
		llmtest.Reply{Match: "from elsewhere one", Content: chatAnswer("ELSEWHERE-ONE done")},
		llmtest.Reply{Match: "second task", Content: chatAnswer("SECOND-DONE indeed")},
		llmtest.Reply{Match: "from elsewhere two", Content: chatAnswer("ELSEWHERE-TWO done")},
	)
	ws := t.TempDir()
	env := chatEnv(t, srv)
	ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws)
	ct.ready()
	first := ct.sessionID(0, 0)
	ct.answered(ct.send("first task"), "FIRST-DONE indeed")
	at := ct.send("/reset")
	ct.waitFor(at, "a new conversation")
	second := ct.sessionID(at, 0)
	elsewhere := func(id, msg, want string) {
		t.Helper()
		out, errOut, code := zeroRun(t, env, "run", "--sandbox", "local", "--workspace", ws, "--session", id, msg)
		if code != 0 || !strings.Contains(out+errOut, want) {
			t.Errorf("zero run --session %s: exit %d, want 0 and %q:\n%s%s", id, code, want, out, errOut)
		}
	}
	elsewhere(first, "from elsewhere one", "ELSEWHERE-ONE done")

	ct.answered(ct.send("second task"), "SECOND-DONE indeed")
	ct.waitFor(ct.send("/load "+first), "ELSEWHERE-ONE done") // its conversation, with what was said elsewhere
	ct.idle()
	elsewhere(second, "from elsewhere two", "ELSEWHERE-TWO done")
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// Text that arrives in one piece is text: "clean up now" is no Up key (it
// would recall the message before).
func TestChatTextInOnePiece(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatAnswer("FIRST-DONE indeed")},
		llmtest.Reply{Match: "clean up now", Content: chatAnswer("CLEANED up")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	ct.answered(ct.send("an earlier message"), "FIRST-DONE indeed")
	at := ct.mark()
	ct.typeText("clean up now\r")
	ct.answered(at, "CLEANED up")
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "clean up now") {
		t.Errorf("the model's request lacks the message typed")
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// A resize while the answer streams ends the line in progress at the new
// width; the chat goes on.
func TestChatResize(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Reasoning: "thinking slowly about the whole thing at length", ChunkSize: 4, HoldAfter: 1, Content: chatAnswer("RESIZED-AND-FINE")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	held := srv.Held()
	at := ct.send("stream something")
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked")
	}
	ct.waitScreen("thinking slowly") // the line in progress
	for _, cols := range []uint16{60, 30, 120} {
		if err := pty.Setsize(ct.ptmx, &pty.Winsize{Rows: 40, Cols: cols}); err != nil {
			t.Fatal(err)
		}
	}
	srv.Release()
	ct.waitFor(at, "RESIZED-AND-FINE") // a word streamed is never cut by a resize
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// Shift-Tab turns plan mode on (the prompt says so): the command the model
// asks for is refused and its answer is the plan; /act leaves plan mode
// and has the plan carried out; /plan on and off switch it too.
func TestChatPlanMode(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "PLAN-1", Content: chatCommandReply("touch planned.txt")},
		llmtest.Reply{Match: "plan mode is on", Content: chatAnswer("PLAN-ANSWER: 1. touch planned.txt")},
		llmtest.Reply{Match: "carry out the plan", Content: chatCommandReply("touch planned.txt")},
		llmtest.Reply{Match: "planned.txt", Content: chatAnswer("ACT-DONE")},
	)
	ws := t.TempDir()
	ct := startChat(t, srv, ws, "--approval", "auto")
	ct.ready()
	at := ct.mark()
	ct.typeText("\x1b[Z") // Shift-Tab
	ct.waitFor(at, "plan mode is on")
	ct.waitScreen("plan mode: the agent changes nothing")
	ct.waitFor(ct.send("PLAN-1: make planned.txt"), "PLAN-ANSWER: 1. touch planned.txt")
	if _, err := os.Stat(filepath.Join(ws, "planned.txt")); err == nil {
		t.Fatal("the command ran in plan mode")
	}
	at = ct.send("/act")
	ct.waitFor(at, "plan mode is off")
	ct.answered(at, "ACT-DONE")
	if _, err := os.Stat(filepath.Join(ws, "planned.txt")); err != nil {
		t.Errorf("/act did not carry the plan out: %v", err)
	}
	ct.waitFor(ct.send("/plan on"), "plan mode is on")
	ct.waitFor(ct.send("/plan off"), "plan mode is off")
}

// The agent's plan (todo:write) shows as a compact list.
func TestChatPlanList(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "PLAN-LIST", Content: `{"thoughts": ["plan"], "headline": "Planning", "tool_name": "todo:write", "tool_args": {"items": [{"content": "Write the test", "status": "completed"}, {"content": "Make it pass", "status": "in_progress", "priority": "high"}, {"content": "Tidy up", "status": "pending"}]}}`},
		llmtest.Reply{Match: "The plan is now", Content: chatAnswer("PLANNED")},
	)
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	at := ct.send("PLAN-LIST: go")
	ct.answered(at, "PLANNED")
	for _, want := range []string{"plan: 1 of 3 done", "✓ Write the test", "▸ Make it pass (high)", "○ Tidy up"} {
		ct.waitFor(at, want)
	}
}

// The workspace's saved commands: /help lists them, Tab completes their
// name, and /name ARGS sends the expanded text; a command that names its
// tools cannot get the agent to run another one.
func TestChatSavedCommands(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := filepath.Join(ws, ".claude", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summarize.md"), []byte("---\ndescription: Summarize a file\nargument-hint: FILE\nallowed-tools: Read\n---\nSUMMARIZE-CMD $1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "SUMMARIZE-CMD notes.md", Content: chatCommandReply("touch widened.txt")},
		llmtest.Reply{Match: "allows only these tools", Content: chatAnswer("SUMMARY-DONE")},
	)
	ct := startChat(t, srv, ws, "--approval", "auto")
	ct.ready()
	ct.waitFor(ct.send("/help"), "/summarize FILE")
	ct.typeText("/summ\t")
	ct.waitScreen("› /summarize") // and a space, which the screen does not show
	ct.typeText("notes.md")
	ct.waitScreen("› /summarize notes.md")
	at := ct.mark()
	ct.typeText("\r")
	ct.answered(at, "SUMMARY-DONE")
	if _, err := os.Stat(filepath.Join(ws, "widened.txt")); err == nil {
		t.Error("the command's allowed-tools was widened: the agent ran a command")
	}
}
