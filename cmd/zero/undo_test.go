package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// undoReplies script a run that changes the workspace three ways: a file
// edited with text_editor, one created and one deleted by a command; and
// the answer to the message after an undo.
func undoReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Match: "make the mess", Content: chatToolReply("Editing", "text_editor:write", `{"path": "kept.txt", "content": "changed by the agent\n"}`)},
		{Match: "changed by the agent", Content: chatCommandReply("mkdir -p out && echo new > out/made.txt && rm gone.txt && echo done-shell")},
		{Match: "done-shell", Content: chatAnswer("mess made")},
		{Match: "after the undo", Content: chatAnswer("fresh")},
	}
}

// seedUndoWorkspace writes the files the scripted run changes, an ignored
// build output and the user's .git, none of which an undo may lose.
func seedUndoWorkspace(t *testing.T, ws string) {
	t.Helper()
	mustWrite(t, filepath.Join(ws, "kept.txt"), "the user's text\n")
	mustWrite(t, filepath.Join(ws, "gone.txt"), "deleted by a command\n")
	mustWrite(t, filepath.Join(ws, ".gitignore"), "build/\n")
	mustWrite(t, filepath.Join(ws, "build", "out.bin"), "ignored build output\n")
	mustWrite(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
}

// listing is every file and folder under dir with its content (a
// folder's is "/"), Zero's own .zero folder left out.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
			return nil
		case rel == ".zero":
			return filepath.SkipDir
		case d.IsDir():
			out[rel+"/"] = "/"
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cliZero runs zero with args and env, stdin empty (no terminal), and
// returns its stdout, stderr and exit status.
func cliZero(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// onlySession is the id of the one stored session of ws.
func onlySession(t *testing.T, env []string, ws string) string {
	t.Helper()
	list, errs, code := cliZero(t, env, "sessions", "ls", "--workspace", ws)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("zero sessions ls: exit %d\n%s\n%s", code, list, errs)
	}
	return strings.Fields(lines[1])[0]
}

// requestWith is the last chat request whose text holds s.
func requestWith(t *testing.T, srv *llmtest.Server, s string) string {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if text := requestText(reqs[i]); strings.Contains(text, s) {
			return text
		}
	}
	t.Fatalf("no request holds %q", s)
	return ""
}

// The scenario through the terminal: a zero run that edits a file
// with text_editor, makes one and deletes another with a command; zero
// sessions checkpoints lists the checkpoint taken before it, and zero
// sessions undo (another process) leaves the workspace exactly as it was,
// the ignored build output and .git untouched; the next run's request no
// longer holds the undone one.
func TestUndoSessionsUndoRestoresTheWorkspace(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, undoReplies()...)
	ws := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + t.TempDir()}
	seedUndoWorkspace(t, ws)
	before := listing(t, ws)
	out, errs, code := cliZero(t, env, "run", "--approval", "auto", "--workspace", ws, "make the mess")
	if code != 0 || !strings.Contains(out, "mess made") {
		t.Fatalf("zero run: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "checkpoint 1 before run 1: the conversation and ") {
		t.Errorf("zero run does not say the checkpoint:\n%s", out)
	}
	after := listing(t, ws)
	if after["kept.txt"] != "changed by the agent\n" || after["out/made.txt"] != "new\n" || after["gone.txt"] != "" {
		t.Fatalf("the run did not change the workspace as scripted: %q", after)
	}
	id := onlySession(t, env, ws)

	cps, errs, code := cliZero(t, env, "sessions", "checkpoints", id)
	if code != 0 || !regexp.MustCompile(`(?m)^ID +BEFORE +TAKEN +FILES +TITLE\n1 +run 1 +\S+ \S+ +\d+ files, \d+ bytes, 1 left out +make the mess$`).MatchString(cps) {
		t.Fatalf("zero sessions checkpoints: exit %d\n%s\n%s", code, cps, errs)
	}
	js, _, code := cliZero(t, env, "sessions", "checkpoints", "--json", id)
	var list []server.Checkpoint
	if err := json.Unmarshal([]byte(js), &list); err != nil || code != 0 || len(list) != 1 || list[0].ID != 1 || list[0].Run != 1 || len(list[0].Files) != 1 {
		t.Fatalf("zero sessions checkpoints --json: exit %d, %v\n%s", code, err, js)
	}

	out, errs, code = cliZero(t, env, "sessions", "undo", id[:8])
	if code != 0 {
		t.Fatalf("zero sessions undo: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"rewound to checkpoint 1: 2 files restored, 2 removed; ", " messages left the conversation",
		"\n  restored: gone.txt, kept.txt\n", "\n  removed: out/, out/made.txt\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("zero sessions undo does not say %q:\n%s", want, out)
		}
	}
	if diff := cmp.Diff(before, listing(t, ws)); diff != "" {
		t.Fatalf("after the undo the workspace differs from before the run (-before +now):\n%s", diff)
	}
	if cps, _, _ := cliZero(t, env, "sessions", "checkpoints", id); !strings.Contains(cps, "has no checkpoints") {
		t.Errorf("the undone run's checkpoint is still listed:\n%s", cps)
	}

	out, errs, code = cliZero(t, env, "run", "--approval", "auto", "--workspace", ws, "--session", id, "after the undo")
	if code != 0 || !strings.Contains(out, "fresh") {
		t.Fatalf("the run after the undo: exit %d\n%s\n%s", code, out, errs)
	}
	if text := requestWith(t, srv, "after the undo"); strings.Contains(text, "make the mess") || strings.Contains(text, "changed by the agent") || strings.Contains(text, "done-shell") {
		t.Errorf("the request after the undo still holds the undone run:\n%s", text)
	}
	// A checkpoint that is not there is refused, naming those there are
	// (ids are never given twice: the undone run's 1 is gone).
	if _, errs, code := cliZero(t, env, "sessions", "rewind", id, "--to", "7"); code != 1 || !strings.Contains(errs, "no such checkpoint") || !strings.Contains(errs, "checkpoints 2") {
		t.Errorf("rewind --to 7: exit %d\n%s", code, errs)
	}
}

// A file the user changed after the run is never overwritten unasked:
// without a terminal the undo fails, naming the files and the flags, and
// changes nothing; --keep keeps the user's changes and takes back the
// rest.
func TestUndoSessionsKeepsTheUsersEdit(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, undoReplies()...)
	ws := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + t.TempDir()}
	seedUndoWorkspace(t, ws)
	if out, errs, code := cliZero(t, env, "run", "--approval", "auto", "--workspace", ws, "make the mess"); code != 0 {
		t.Fatalf("zero run: exit %d\n%s\n%s", code, out, errs)
	}
	id := onlySession(t, env, ws)
	mustWrite(t, filepath.Join(ws, "kept.txt"), "the user fixed it by hand\n")
	mustWrite(t, filepath.Join(ws, "mine.txt"), "the user's new file\n")
	edited := listing(t, ws)

	out, errs, code := cliZero(t, env, "sessions", "undo", id)
	if code != 1 || !strings.Contains(errs, "nothing was changed: 2 files changed outside the agent since checkpoint 1: kept.txt, mine.txt") ||
		!strings.Contains(errs, "--keep") || !strings.Contains(errs, "--overwrite") {
		t.Fatalf("undo with the user's changes and no terminal: exit %d\n%s\n%s", code, out, errs)
	}
	if diff := cmp.Diff(edited, listing(t, ws)); diff != "" {
		t.Fatalf("a refused undo changed the workspace (-before +now):\n%s", diff)
	}
	if _, errs, code := cliZero(t, env, "sessions", "undo", id, "--keep", "--overwrite"); code != 2 || !strings.Contains(errs, "exclude each other") {
		t.Errorf("--keep --overwrite: exit %d\n%s", code, errs)
	}

	out, errs, code = cliZero(t, env, "sessions", "rewind", id, "--to", "1", "--keep", "--json")
	var rep server.RewindReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.To != 1 || !rep.Files || !rep.Conversation ||
		!slices.Equal(rep.Kept, []string{"kept.txt", "mine.txt"}) || !slices.Equal(rep.Restored, []string{"gone.txt"}) || !slices.Equal(rep.Deleted, []string{"out/", "out/made.txt"}) {
		t.Fatalf("rewind --keep --json: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	want := map[string]string{
		"kept.txt": "the user fixed it by hand\n", "mine.txt": "the user's new file\n", "gone.txt": "deleted by a command\n",
		".gitignore": "build/\n", "build/": "/", "build/out.bin": "ignored build output\n", ".git/": "/", ".git/HEAD": "ref: refs/heads/main\n",
	}
	if diff := cmp.Diff(want, listing(t, ws)); diff != "" {
		t.Fatalf("after rewind --keep (-want +got):\n%s", diff)
	}
}

// On a terminal the undo asks about the user's changes, naming them, and
// does what the answer says.
func TestUndoSessionsAsksOnATerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, undoReplies()...)
	ws := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + t.TempDir()}
	seedUndoWorkspace(t, ws)
	if out, errs, code := cliZero(t, env, "run", "--approval", "auto", "--workspace", ws, "make the mess"); code != 0 {
		t.Fatalf("zero run: exit %d\n%s\n%s", code, out, errs)
	}
	id := onlySession(t, env, ws)
	mustWrite(t, filepath.Join(ws, "kept.txt"), "the user fixed it by hand\n")
	ct := startTerm(t, ws, env, "sessions", "undo", id)
	ct.waitFor(0, "1 file changed outside the agent since checkpoint 1 (nothing was rewound yet):\r\n  kept.txt")
	at := ct.waitFor(0, "[k]eep your changes (the rest is rewound), [o]verwrite them too, or [c]ancel? ")
	ct.typeText("o\r")
	ct.waitFor(at, "restored: gone.txt, kept.txt")
	if code := ct.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "kept.txt")); string(data) != "the user's text\n" {
		t.Errorf("kept.txt = %q after overwrite", data)
	}
}

// zero sessions fork copies a session up to a run under a new id; another
// process goes on with the fork (zero run --session) and the original's
// history does not change.
func TestUndoSessionsForkGoesOnApart(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "second question", Content: chatAnswer("answer two")},
		llmtest.Reply{Match: "in the fork", Content: chatAnswer("fork answer")},
		llmtest.Reply{Match: "first question", Content: chatAnswer("answer one")},
	)
	ws := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + t.TempDir()}
	if out, errs, code := cliZero(t, env, "run", "--workspace", ws, "first question"); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	id := onlySession(t, env, ws)
	if out, errs, code := cliZero(t, env, "run", "--workspace", ws, "--session", id, "second question"); code != 0 {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, errs)
	}
	original, _, code := cliZero(t, env, "sessions", "export", id)
	if code != 0 {
		t.Fatal("export failed")
	}

	out, errs, code := cliZero(t, env, "sessions", "fork", id, "--at", "1")
	m := regexp.MustCompile(`^forked session ` + id + ` up to run 1 as ([0-9a-f]+)\ncontinue it: zero run --session ([0-9a-f]+) "…", or zero chat --session ([0-9a-f]+)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] == id || m[2] != m[1] || m[3] != m[1] {
		t.Fatalf("zero sessions fork: exit %d\n%s\n%s", code, out, errs)
	}
	fork := m[1]
	out, errs, code = cliZero(t, env, "run", "--workspace", ws, "--session", fork, "in the fork")
	if code != 0 || !strings.Contains(out, "fork answer") {
		t.Fatalf("the fork's run: exit %d\n%s\n%s", code, out, errs)
	}
	if text := requestWith(t, srv, "in the fork"); !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", text)
	}
	if now, _, _ := cliZero(t, env, "sessions", "export", id); now != original {
		t.Errorf("the fork's run changed the original:\n%s", cmp.Diff(original, now))
	}
	show, _, _ := cliZero(t, env, "sessions", "show", id)
	if strings.Contains(show, "in the fork") || !strings.Contains(show, "second question") {
		t.Errorf("zero sessions show of the original:\n%s", show)
	}
	if cps, _, _ := cliZero(t, env, "sessions", "checkpoints", fork); !regexp.MustCompile(`(?m)^1 +run 1 .*first question\n2 +run 2 .*in the fork$`).MatchString(cps) {
		t.Errorf("the fork's checkpoints:\n%s", cps)
	}
	js, _, code := cliZero(t, env, "sessions", "fork", "--json", id)
	var info server.Info
	if err := json.Unmarshal([]byte(js), &info); err != nil || code != 0 || info.ID == "" || info.ID == id || info.Runs != 2 {
		t.Errorf("fork --json: exit %d, %v\n%s", code, err, js)
	}
	if _, errs, code := cliZero(t, env, "sessions", "fork", id, "--at", "9"); code != 1 || !strings.Contains(errs, "no such run to fork at") {
		t.Errorf("fork --at 9: exit %d\n%s", code, errs)
	}
}

// zero sessions compact summarises the conversation with the focus given,
// says how many tokens it took before and after, and undo takes it back.
func TestUndoSessionsCompact(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		llmtest.Reply{Match: "first question", Content: chatAnswer(strings.Repeat("long answer ", 60))},
		llmtest.Reply{Match: "next question", Content: chatAnswer("ok")},
		llmtest.Reply{Match: "question again", Content: chatAnswer("ok again")},
	)
	ws := t.TempDir()
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL(), "XDG_DATA_HOME=" + t.TempDir()}
	if out, errs, code := cliZero(t, env, "run", "--workspace", ws, "first question"); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	id := onlySession(t, env, ws)
	out, errs, code := cliZero(t, env, "sessions", "compact", id, "keep", "the", "parser")
	m := regexp.MustCompile(`^compacted session ` + id + `: (\d+) → (\d+) tokens \(zero sessions undo ` + id + ` takes it back\)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || len(m[1]) < len(m[2]) || m[1] == m[2] {
		t.Fatalf("zero sessions compact: exit %d\n%s\n%s", code, out, errs)
	}
	if cps, _, _ := cliZero(t, env, "sessions", "checkpoints", id); !regexp.MustCompile(`(?m)^2 +compacting +.* none +/compact keep the parser$`).MatchString(cps) {
		t.Errorf("the compaction's checkpoint:\n%s", cps)
	}
	if out, errs, code := cliZero(t, env, "run", "--workspace", ws, "--session", id, "next question"); code != 0 {
		t.Fatalf("next run: exit %d\n%s\n%s", code, out, errs)
	}
	if text := requestWith(t, srv, "next question"); !strings.Contains(text, "SUMMARY: they talked about the parser.") || strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after compacting:\n%s", text)
	}
	// Undo the run after it, then the compaction itself.
	if out, errs, code := cliZero(t, env, "sessions", "undo", id); code != 0 || !strings.HasPrefix(out, "rewound to checkpoint 3: ") {
		t.Fatalf("undo: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = cliZero(t, env, "sessions", "undo", "--json", id)
	var rep server.RewindReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.To != 2 || !rep.Conversation {
		t.Fatalf("undo --json of the compaction: exit %d, %v\n%s\n%s", code, err, out, errs)
	}
	if out, errs, code := cliZero(t, env, "run", "--workspace", ws, "--session", id, "question again"); code != 0 {
		t.Fatalf("the run after the undos: exit %d\n%s\n%s", code, out, errs)
	}
	if text := requestWith(t, srv, "question again"); strings.Contains(text, "SUMMARY") || !strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after undoing the compaction:\n%s", text)
	}
	if _, errs, code := cliZero(t, env, "sessions", "compact"); code != 2 || !strings.Contains(errs, "want a session id") {
		t.Errorf("compact without an id: exit %d\n%s", code, errs)
	}
	if _, errs, code := cliZero(t, env, "sessions", "ls", "--keep"); code != 2 || !strings.Contains(errs, "--keep is not one of its flags") {
		t.Errorf("ls --keep: exit %d\n%s", code, errs)
	}
}
