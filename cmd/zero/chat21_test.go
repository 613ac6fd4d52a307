package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zeroagent/zero/internal/proctest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// chatToolReply is a model reply calling tool with args (JSON).
func chatToolReply(headline, tool, args string) string {
	return `{"thoughts": ["doing it"], "headline": "` + headline + `", "tool_name": "` + tool + `", "tool_args": ` + args + `}`
}

// One Ctrl-C at the empty idle prompt does not leave: it says that a
// second one does, another key takes that back, and two in a row leave
// with status 0 (the README's chat section).
func TestChat21CtrlCTwiceLeaves(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Match: "still here", Content: chatAnswer("STILL-HERE yes")})
	ct := startChat(t, srv, t.TempDir())
	ct.ready()
	ct.typeText("\x03")
	ct.waitScreen("press Ctrl-C again to leave")
	// Another key takes it back: the message typed after it is sent.
	ct.answered(ct.send("still here"), "STILL-HERE yes")
	if strings.Contains(ct.prompt(), "press Ctrl-C again") {
		t.Errorf("the hint outlived the next key:\n%s", ct.prompt())
	}
	ct.typeText("\x03")
	ct.waitScreen("press Ctrl-C again to leave")
	ct.typeText("\x03")
	if code := ct.wait(); code != 0 {
		t.Errorf("Ctrl-C twice at the idle prompt: exit %d, want 0", code)
	}
}

// The chat has ACP's slash commands with their meaning: /pause holds the
// agent before its model call until /resume, /memory lists the memories,
// /trust shows the workspace's code and trusts it on y and Enter; /help
// lists them, and an unknown profile is named with the profiles there are.
func TestChat21SlashCommandsOfACP(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Match: "while paused", Content: chatAnswer("AFTER-RESUME yes")})
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, ".zero", "tools", "greet.sh"), "#!/bin/sh\necho hello\n")
	if err := os.Chmod(filepath.Join(ws, ".zero", "tools", "greet.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := t.TempDir() // the trust records: the chat's and zero trust --check's
	ct := startTerm(t, ws, append(chatEnv(t, srv), "XDG_CONFIG_HOME="+cfg), "chat", "--sandbox", "local", "--workspace", ws)
	ct.ready()

	at := ct.send("/help")
	for _, c := range []string{"/pause", "/resume", "/trust", "/memory [QUERY]"} {
		ct.waitFor(at, c)
	}

	ct.waitFor(ct.send("/profile nosuch"), `error: no profile "nosuch"; the profiles are: agent0, default, developer, hacker, researcher (/profile says`)
	if strings.Contains(ct.text(), "profile not found") {
		t.Errorf("/profile nosuch shows the internal error:\n%s", ct.text())
	}

	ct.waitFor(ct.send("/memory"), "the agent remembers nothing yet for this workspace")

	ct.waitFor(ct.send("/pause"), "paused: the agent stops before its next model call")
	at = ct.send("hello while paused")
	ct.waitScreen("the agent is paused before its next step: /resume lets it go on")
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the paused agent asked the model %d times", n)
	}
	ct.waitFor(ct.send("/resume"), "resumed")
	ct.answered(at, "AFTER-RESUME yes")
	ct.waitFor(ct.send("/resume"), "the agent is not paused")

	at = ct.send("/trust")
	ct.waitFor(at, ".zero/tools/greet.sh")
	ct.waitFor(at, "echo hello") // the content, as zero trust shows it
	ct.waitScreen("Trust 1 file of "+ws+"? [y]es/[n]o", "y: trust them · n: not now, then Enter")
	// "a" (always, as approvals take it) is no answer to a trust question.
	ct.typeText("a")
	ct.waitScreen("· Enter confirms")
	ct.typeText("\r")
	ct.waitFor(at, "answer y or n: trust is given to exactly these files")
	ct.waitScreen("Trust 1 file of " + ws + "? [y]es/[n]o")
	if out, _, code := cli21Run(t, []string{"XDG_CONFIG_HOME=" + cfg}, "", "trust", "--check", "--workspace", ws); code == 0 {
		t.Fatalf("\"a\" trusted the workspace:\n%s", out)
	}
	ct.typeText("y")
	ct.waitScreen("· Enter confirms")
	ct.typeText("\r")
	ct.waitFor(at, "trusted 1 file of "+ws)
	ct.idle()
	if out, _, code := cli21Run(t, []string{"XDG_CONFIG_HOME=" + cfg}, "", "trust", "--check", "--workspace", ws); code != 0 {
		t.Fatalf("\"y\" did not trust the workspace:\n%s", out)
	}
	ct.waitFor(ct.send("/trust"), "this workspace's code is trusted already (1 file)")

	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// /load shows the conversation as it happened: the tool calls, the
// approval question with its answer, the refusal, a failed call and the
// run's error, not only the messages and the model's last word (a
// refused write read "Wrote notes.txt." alone).
func TestChat21LoadReplaysToolCalls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "write the notes", Content: chatToolReply("Writing the notes", "text_editor:write", `{"path": "notes.txt", "content": "hello\n"}`)},
		llmtest.Reply{Match: "The user refused this call", Content: chatAnswer("Wrote notes.txt.")},
		llmtest.Reply{Match: "read the missing", Content: chatToolReply("Reading it", "text_editor:read", `{"path": "missing.txt"}`)},
		llmtest.Reply{Match: "missing.txt", Status: 401, Message: "Incorrect API key provided"},
	)
	ws := t.TempDir()
	env := chatEnv(t, srv) // one data folder for the chat and zero sessions show
	ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws, "--approval", "ask")
	ct.ready()
	first := ct.sessionID(0, 0)
	at := ct.send("write the notes")
	ct.waitScreen("Allow text_editor:write notes.txt? [y]es/[n]o/[a]lways")
	ct.answer("n")
	ct.answered(at, "Wrote notes.txt.")
	ct.answered(ct.send("read the missing file"), "Incorrect API key provided")
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); err == nil {
		t.Fatal("the refused write was done")
	}
	ct.waitFor(ct.send("/reset"), "a new conversation")
	ct.idle()

	at = ct.send("/load " + first[:8])
	ct.waitFor(at, "session "+first+":")
	end := ct.waitFor(at, "Incorrect API key provided")
	ct.idle()
	got := ct.text()[at:end]
	want := []string{
		"› write the notes",
		"● Writing the notes  text_editor:write",
		"Allow text_editor:write notes.txt? [y]es/[n]o/[a]lways no",
		"✗ The user refused this call: the user said no",
		"Wrote notes.txt.",
		"› read the missing file",
		"● Reading it  text_editor:read",
		"✗ cannot read " + filepath.Join(ws, "missing.txt") + ": no such file",
		"error: ",
	}
	pos := 0
	for _, w := range want {
		i := strings.Index(got[pos:], w)
		if i < 0 {
			t.Fatalf("the replay lacks %q after what came before it:\n%s", w, got)
		}
		pos += i + len(w)
	}
	if n := strings.Count(got, "Incorrect API key provided"); n != 1 {
		t.Errorf("the replay shows the error %d times, want once:\n%s", n, got)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}

	// zero sessions show tells the same story in markdown.
	show, errOut, code := zeroRun(t, env, "sessions", "show", first)
	if code != 0 {
		t.Fatalf("zero sessions show: exit %d: %s", code, errOut)
	}
	pos = 0
	for _, w := range []string{
		"## User\n\nwrite the notes",
		"### Zero calls Writing the notes",
		"_Zero asked the user to approve text_editor:write: notes.txt_",
		"_Refused: the user said no._",
		"Result (failed):\n\n```\nThe user refused this call: the user said no\n```",
		"## Zero\n\nWrote notes.txt.",
		"## User\n\nread the missing file",
		"Result (failed):\n\n```\ncannot read " + filepath.Join(ws, "missing.txt"),
		"> Error: ",
		"_Run ended: error_",
	} {
		i := strings.Index(show[pos:], w)
		if i < 0 {
			t.Fatalf("zero sessions show lacks %q after what came before it:\n%s", w, show)
		}
		pos += i + len(w)
	}
	if n := strings.Count(show, "Incorrect API key provided"); n != 1 {
		t.Errorf("zero sessions show says the error %d times, want once:\n%s", n, show)
	}
}

// /load with a prefix of several sessions says which ones instead of
// failing with "not found"; a prefix of one loads it, and a prefix of none
// says so.
func TestChat21LoadAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	var replies []llmtest.Reply
	for i := range 17 {
		replies = append(replies, llmtest.Reply{Match: fmt.Sprintf("task number %d.", i), Content: chatAnswer(fmt.Sprintf("DONE-%d here", i))})
	}
	srv := llmtest.NewServer(t, replies...)
	ws := t.TempDir()
	env := chatEnv(t, srv) // one data folder for both chats
	args := []string{"chat", "--sandbox", "local", "--workspace", ws}
	ct := startTerm(t, ws, env, args...)
	ct.ready()
	// 17 sessions, each with a run: two of them surely share their first
	// hex digit.
	for i := range 17 {
		if i > 0 {
			ct.waitFor(ct.send("/reset"), "a new conversation")
			ct.idle()
		}
		ct.answered(ct.send(fmt.Sprintf("task number %d.", i)), fmt.Sprintf("DONE-%d here", i))
	}
	at := ct.send("/sessions")
	ct.waitFor(at, "ID  ")
	var ids []string
	deadline := time.Now().Add(chatWait)
	for len(ids) < 17 {
		ids = regexp.MustCompile(`\b[0-9a-f]{16}\b`).FindAllString(ct.text()[at:], -1)
		if time.Now().After(deadline) {
			t.Fatalf("/sessions listed %d sessions, want 17:\n%s", len(ids), ct.text()[at:])
		}
		time.Sleep(10 * time.Millisecond)
	}
	byFirst := map[byte][]string{}
	for _, id := range ids {
		byFirst[id[0]] = append(byFirst[id[0]], id)
	}
	var shared []string
	for _, list := range byFirst {
		if len(list) > 1 {
			shared = list
			break
		}
	}
	at = ct.send("/load " + shared[0][:1])
	ct.waitFor(at, "sessions start with \""+shared[0][:1]+"\"; give more of the id:")
	for _, id := range shared {
		ct.waitFor(at, id)
	}
	ct.idle()
	if strings.Contains(ct.text()[at:], "not found") {
		t.Errorf("an ambiguous prefix reads as not found:\n%s", ct.text()[at:])
	}
	ct.waitFor(ct.send("/load zzzz"), `no session is "zzzz" or starts with it`)
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}

	// zero chat --session takes a prefix too, with the same error.
	again := startTerm(t, ws, env, append(args, "--session", shared[0][:1])...)
	if code := again.wait(); code != 2 {
		t.Errorf("--session with an ambiguous prefix: exit %d, want 2", code)
	}
	for _, id := range shared {
		if out := again.text(); !strings.Contains(out, "sessions start with \""+shared[0][:1]+"\"") || !strings.Contains(out, id) {
			t.Errorf("--session with an ambiguous prefix should list %s:\n%s", id, out)
		}
	}
	unique := startTerm(t, ws, env, append(args, "--session", shared[0][:12])...)
	unique.waitFor(0, "session "+shared[0]+":")
	unique.ready()
	unique.typeText("\x04")
	if code := unique.wait(); code != 0 {
		t.Errorf("--session with a prefix: exit %d, want 0", code)
	}
}

// An approval of a write or patch shows what it would change: a unified
// diff against the file as it is, the content of a new file, cut after
// some lines with how many were cut.
func TestChat21ApprovalShowsTheChange(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, "notes.txt"), "one\ntwo\nthree\n")
	var long strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	mustWrite(t, filepath.Join(ws, "long.txt"), long.String())
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatToolReply("Changing the notes", "text_editor:write", `{"path": "notes.txt", "content": "one\nTWO\nthree\n"}`)},
		llmtest.Reply{Content: chatToolReply("Making a file", "text_editor:write", `{"path": "fresh.txt", "content": "hello\nworld\n"}`)},
		llmtest.Reply{Content: chatToolReply("Reading it", "text_editor:read", `{"path": "long.txt"}`)},
		llmtest.Reply{Content: chatToolReply("Patching it", "text_editor:patch", `{"path": "long.txt", "edits": [{"from": 2, "to": 2, "content": "CHANGED"}]}`)},
		llmtest.Reply{Content: chatToolReply("Rewriting it", "text_editor:write", `{"path": "long.txt", "content": "all new\n"}`)},
		llmtest.Reply{Content: chatAnswer("ALL-DONE here")},
	)
	ct := startChat(t, srv, ws, "--approval", "ask")
	ct.ready()
	at := ct.send("change things")

	at = ct.waitFor(at, "--- notes.txt")
	for _, w := range []string{"+++ notes.txt", "@@ -1,3 +1,3 @@", " one", "-two", "+TWO", " three"} {
		ct.waitFor(at, w)
	}
	ct.waitScreen("Allow text_editor:write notes.txt? [y]es/[n]o/[a]lways")
	ct.answer("n")

	at = ct.waitFor(at, "new file fresh.txt, 2 lines:")
	ct.waitFor(at, "+hello")
	ct.waitFor(at, "+world")
	ct.answer("y")

	at = ct.waitFor(at, "--- long.txt")
	ct.waitFor(at, "-line 2")
	ct.waitFor(at, "+CHANGED")
	ct.waitScreen("Allow text_editor:patch long.txt?")
	ct.answer("y")

	// 100 lines go, one comes (104 lines of diff): the diff is cut, saying how much.
	at = ct.waitFor(at, "--- long.txt")
	ct.waitFor(at, "… 64 lines more not shown (40 of 104 shown)")
	ct.answer("n")
	ct.answered(at, "ALL-DONE here")

	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("the refused write changed notes.txt: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "fresh.txt")); string(b) != "hello\nworld\n" {
		t.Errorf("fresh.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "long.txt")); !strings.HasPrefix(string(b), "line 1\nCHANGED\nline 3\n") {
		t.Errorf("the patch was not applied: %q", b)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// zero run's question on the terminal shows the diff of a write too.
func TestChat21RunAskShowsTheChange(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	mustWrite(t, filepath.Join(ws, "notes.txt"), "one\ntwo\n")
	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: chatToolReply("Changing the notes", "text_editor:write", `{"path": "notes.txt", "content": "one\nTWO\n"}`)},
		llmtest.Reply{Content: chatAnswer("left alone")},
	)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	cmd := zeroCmd(t, []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}, "run", "--json", "--approval", "ask", "--workspace", ws, "change the notes")
	cmd.Stdin = tty
	stderr := &proctest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	deadline := time.Now().Add(chatWait)
	for !strings.Contains(stderr.String(), "allow? [y]es") {
		if time.Now().After(deadline) {
			t.Fatalf("zero run never asked:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := ptmx.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zero run: %v\n%s", err, stderr.String())
	}
	out := stderr.String()
	want := "  --- notes.txt\n  +++ notes.txt\n  @@ -1,2 +1,2 @@\n   one\n  -two\n  +TWO\nallow? [y]es"
	if !strings.Contains(out, want) {
		t.Errorf("the question lacks the diff %q:\n%s", want, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("the refused write changed notes.txt: %q", b)
	}
}
