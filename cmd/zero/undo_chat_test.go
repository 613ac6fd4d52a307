package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/llm/llmtest"
)

// The scenario in zero chat: a run edits a file with text_editor,
// makes one and deletes another with a command; /rewind lists the
// checkpoint taken before it, /undo leaves the workspace exactly as it
// was and the next request no longer holds the run. A file the person
// changed after a later run is asked about, naming it: c cancels (nothing
// changes), k keeps it and takes back the rest.
func TestUndoInTheChat(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, append(undoReplies(),
		llmtest.Reply{Match: "mess again", Content: chatToolReply("Editing", "text_editor:write", `{"path": "kept.txt", "content": "changed again\n"}`)},
		llmtest.Reply{Match: "changed again", Content: chatAnswer("mess again made")},
	)...)
	ws := t.TempDir()
	seedUndoWorkspace(t, ws)
	before := listing(t, ws)
	env := chatEnv(t, srv)
	ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws, "--approval", "auto")
	ct.ready()
	at := ct.send("make the mess")
	ct.waitFor(at, "checkpoint 1 before run 1: the conversation and 3 files (44 bytes); 1 left out: build")
	ct.answered(at, "mess made")
	if after := listing(t, ws); after["kept.txt"] != "changed by the agent\n" || after["out/made.txt"] != "new\n" || after["gone.txt"] != "" {
		t.Fatalf("the run did not change the workspace as scripted: %q", after)
	}

	at = ct.send("/rewind")
	ct.waitFor(at, "/rewind N goes back to before checkpoint N")
	if list := ct.text()[at:]; !regexp.MustCompile(`ID +BEFORE +TAKEN +FILES +TITLE\r?\n1 +run 1 +just now +3 files, 44 bytes, 1 left out +make the mess`).MatchString(list) {
		t.Fatalf("/rewind does not list the checkpoint:\n%s", list)
	}

	at = ct.send("/undo")
	ct.waitFor(at, "rewound to checkpoint 1: 2 files restored, 2 removed; ")
	ct.waitFor(at, "restored: gone.txt, kept.txt")
	ct.waitFor(at, "removed: out/, out/made.txt")
	ct.idle()
	if diff := cmp.Diff(before, listing(t, ws)); diff != "" {
		t.Fatalf("after /undo the workspace differs from before the run (-before +now):\n%s", diff)
	}
	ct.answered(ct.send("after the undo"), "fresh")
	if text := requestWith(t, srv, "after the undo"); strings.Contains(text, "make the mess") || strings.Contains(text, "changed by the agent") {
		t.Errorf("the request after /undo still holds the undone run:\n%s", text)
	}

	ct.answered(ct.send("mess again"), "mess again made")
	mustWrite(t, filepath.Join(ws, "kept.txt"), "the user fixed it by hand\n")
	mustWrite(t, filepath.Join(ws, "mine.txt"), "the user's new file\n")
	const question = "Rewind to checkpoint 3: keep your changes to kept.txt, mine.txt? [k]eep them/[o]verwrite them/[c]ancel"
	const ready = "k: keep your changes, rewind the rest · o: overwrite them too · c: cancel, then Enter"
	at = ct.send("/undo")
	ct.waitFor(at, "2 files changed outside the agent since checkpoint 3 (nothing was rewound yet):")
	ct.waitScreen(question, ready)
	ct.typeText("c")
	ct.waitScreen("answer: cancel · Enter confirms")
	ct.typeText("\r")
	ct.waitFor(at, "not rewound: nothing was changed")
	ct.idle()
	if got := listing(t, ws)["kept.txt"]; got != "the user fixed it by hand\n" {
		t.Fatalf("a cancelled undo changed kept.txt: %q", got)
	}

	at = ct.send("/undo")
	ct.waitScreen(question, ready)
	ct.typeText("k")
	ct.waitScreen("answer: keep · Enter confirms")
	ct.typeText("\r")
	ct.waitFor(at, "rewound to checkpoint 3: ")
	ct.waitFor(at, "kept as you changed them: kept.txt, mine.txt")
	ct.idle()
	if now := listing(t, ws); now["kept.txt"] != "the user fixed it by hand\n" || now["mine.txt"] != "the user's new file\n" {
		t.Errorf("the kept changes were lost: %q", now)
	}
	if text := ct.text()[at:]; strings.Contains(text, "error") {
		t.Errorf("the rewind said an error:\n%s", text)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// /fork copies the conversation up to a run into a new session, which
// another process continues (zero run --session, then zero chat
// --session) while the chat's own goes on unchanged; /compact says the tokens before and after, and /undo takes
// it back. /help and Tab know the commands.
func TestUndoChatForkAndCompact(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		llmtest.Reply{Match: "second question", Content: chatAnswer("answer two")},
		llmtest.Reply{Match: "in the fork", Content: chatAnswer("fork answer")},
		llmtest.Reply{Match: "first question", Content: chatAnswer(strings.Repeat("long answer ", 60))},
		llmtest.Reply{Match: "third question", Content: chatAnswer("answer three")},
	)
	ws := t.TempDir()
	env := chatEnv(t, srv)
	ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws)
	ct.ready()
	id := ct.sessionID(0, 0)
	ct.answered(ct.send("first question"), "long answer long answer")
	ct.answered(ct.send("second question"), "answer two")

	at := ct.send("/fork 1")
	end := ct.waitFor(at, "this one goes on as it was")
	m := regexp.MustCompile(`forked: session ([0-9a-f]{16}) holds this conversation up to run 1`).FindStringSubmatch(ct.text()[at:end])
	if m == nil || m[1] == id {
		t.Fatalf("/fork did not name the new session:\n%s", ct.text()[at:])
	}
	fork := m[1]
	ct.waitFor(at, "continue it with /load "+fork+" here, or zero chat --session "+fork)
	original := conversationOf(t, env, id)
	out, errs, code := cliZero(t, env, "run", "--workspace", ws, "--session", fork, "in the fork")
	if code != 0 || !strings.Contains(out, "fork answer") {
		t.Fatalf("the fork's run in another process: exit %d\n%s\n%s", code, out, errs)
	}
	if text := requestWith(t, srv, "in the fork"); !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", text)
	}
	// The chat holds its session: another process does not rewind it.
	if _, errs, code := cliZero(t, env, "sessions", "undo", id); code != 1 || !strings.Contains(errs, "open in another zero process") || !strings.Contains(errs, "in its chat: /undo") {
		t.Errorf("zero sessions undo of the chat's session: exit %d\n%s", code, errs)
	}
	if diff := cmp.Diff(original, conversationOf(t, env, id)); diff != "" {
		t.Errorf("the fork's run changed the chat's conversation (-before +after):\n%s", diff)
	}

	at = ct.mark()
	ct.typeText("/comp\t") // Tab completes the command
	ct.waitScreen("› /compact")
	ct.typeText("keep the parser")
	ct.waitScreen("› /compact keep the parser")
	ct.typeText("\r")
	end = ct.waitFor(at, "/undo takes it back")
	m = regexp.MustCompile(`compacted: (\d+) → (\d+) tokens`).FindStringSubmatch(ct.text()[at:end])
	if m == nil || len(m[1]) < len(m[2]) || m[1] == m[2] {
		t.Fatalf("/compact does not say the tokens before and after:\n%s", ct.text()[at:])
	}
	ct.waitFor(at, "checkpoint 3 before compacting: the conversation")
	ct.idle()
	at = ct.send("/undo")
	ct.waitFor(at, "rewound to checkpoint 3: no file to restore; the conversation back as it was then")
	ct.idle()
	ct.answered(ct.send("third question"), "answer three")
	if text := requestWith(t, srv, "third question"); strings.Contains(text, "SUMMARY") || !strings.Contains(text, "long answer long answer") || !strings.Contains(text, "answer two") {
		t.Errorf("the request after undoing the compaction:\n%s", text)
	}

	at = ct.send("/help")
	for _, c := range []string{"/undo ", "/rewind [N]", "/compact [FOCUS]", "/fork [RUN]"} {
		ct.waitFor(at, c)
	}
	ct.waitFor(ct.send("/rewind 99"), "no such checkpoint")
	ct.waitFor(ct.send("/rewind soon"), "/rewind N [files|conversation] [keep|overwrite]")
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}

	// The fork goes on in a chat too: its conversation says where it
	// came from.
	ct = startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws, "--session", fork)
	ct.waitFor(0, "forked from session "+id+" after run 1")
	ct.ready()
	if text := ct.text(); strings.Contains(text, "second question") || !strings.Contains(text, "in the fork") {
		t.Errorf("the fork's conversation in the chat:\n%s", text)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// conversationOf is agent 0's history of a stored session, as zero
// sessions export has it.
func conversationOf(t *testing.T, env []string, id string) json.RawMessage {
	t.Helper()
	out, errs, code := cliZero(t, env, "sessions", "export", id)
	var x struct {
		Histories map[string]json.RawMessage `json:"histories"`
	}
	if err := json.Unmarshal([]byte(out), &x); err != nil || code != 0 || len(x.Histories["0"]) == 0 {
		t.Fatalf("zero sessions export %s: exit %d, %v\n%s", id, code, err, errs)
	}
	return x.Histories["0"]
}
