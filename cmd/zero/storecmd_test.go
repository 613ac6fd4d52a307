package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/store"
)

// storeRun runs zero with the store at path and returns what it printed
// (stdout and stderr together) and its exit status.
func storeRun(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	out, err := zeroCmd(t, env, args...).CombinedOutput()
	code := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("zero %s: %v", strings.Join(args, " "), err)
	}
	return string(out), code
}

// A store whose header is garbage: every command says it is damaged and
// names zero store recover; zero run goes on without it; zero store
// recover keeps the damaged file and starts a new store that works.
func TestStoreDamagedHeaderCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "zero.db")
	ws := t.TempDir()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(store.Session{ID: "before", Workspace: ws, Title: "before the damage"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveMemories([]store.Memory{{Scope: ws, Area: "main", Text: "the build uses make"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte("garbage!"), 16), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	damaged, _ := os.ReadFile(path)

	srv := llmtest.NewServer(t,
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done while damaged"}}`},
		llmtest.Reply{Content: `{"thoughts": ["ok"], "tool_name": "response", "tool_args": {"text": "done after recovery"}}`},
	)
	env := []string{"ZERO_STORE=" + path, "ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL()}
	clear := "the session store " + path + " is damaged (file is not a database)"
	for _, args := range [][]string{
		{"sessions", "--workspace", ws},
		{"sessions", "show", "before"},
		{"memory", "ls", "--workspace", ws},
		{"memory", "save", "--workspace", ws, "more"},
		{"store"},
		{"store", "check"},
	} {
		out, code := storeRun(t, env, args...)
		if code != 1 || !strings.Contains(out, clear) || !strings.Contains(out, "zero store recover moves it aside") {
			t.Errorf("zero %s: exit %d; want 1 and the clear message:\n%s", strings.Join(args, " "), code, out)
		}
	}
	out, code := storeRun(t, env, "doctor", "--workspace", ws)
	if code != 1 || !strings.Contains(out, "✗ sessions: "+clear) || !strings.Contains(out, "fix: zero store recover (it renames the damaged file to zero.db.damaged-") {
		t.Errorf("zero doctor: exit %d\n%s", code, out)
	}
	out, code = storeRun(t, env, "run", "--workspace", ws, "work")
	if code != 0 || !strings.Contains(out, clear) || !strings.Contains(out, "until then sessions will not outlive this process") || !strings.Contains(out, "done while damaged") {
		t.Errorf("zero run goes on without the store, saying why: exit %d\n%s", code, out)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, damaged) {
		t.Fatal("a command changed the damaged file")
	}

	out, code = storeRun(t, env, "store", "recover")
	kept, _ := filepath.Glob(path + ".damaged-*")
	if code != 0 || len(kept) != 1 || !strings.Contains(out, "kept as  "+kept[0]) || !strings.Contains(out, "nothing could be read from the damaged file (file is not a database)") {
		t.Fatalf("zero store recover: exit %d, kept %v\n%s", code, kept, out)
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, damaged) {
		t.Error("the damaged file should be kept as it was")
	}
	out, code = storeRun(t, env, "run", "--workspace", ws, "work again")
	if code != 0 || strings.Contains(out, "damaged") {
		t.Errorf("zero run after recovery: exit %d\n%s", code, out)
	}
	out, code = storeRun(t, env, "sessions", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "work again") || strings.Count(out, "\n") != 2 {
		t.Errorf("zero sessions after recovery should list the new run only: exit %d\n%s", code, out)
	}
	out, code = storeRun(t, env, "store", "check")
	if code != 0 || !strings.Contains(out, path+" is sound: 1 session, no memories") {
		t.Errorf("zero store check after recovery: exit %d\n%s", code, out)
	}
}

// A sound store is left as it is; the command's usage errors.
func TestStoreCommandSound(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zero.db")
	env := []string{"ZERO_STORE=" + path}
	if out, code := storeRun(t, env, "store"); code != 0 || !strings.Contains(out, "there is no store at "+path+" yet") {
		t.Errorf("zero store without a store: exit %d\n%s", code, out)
	}
	if out, code := storeRun(t, env, "store", "recover"); code != 0 || !strings.Contains(out, "nothing to recover") {
		t.Errorf("zero store recover without a store: exit %d\n%s", code, out)
	}
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if out, code := storeRun(t, env, "store", "check"); code != 0 || !strings.Contains(out, path+" is sound: no sessions, no memories") {
		t.Errorf("zero store check: exit %d\n%s", code, out)
	}
	if out, code := storeRun(t, env, "store", "recover"); code != 0 || !strings.Contains(out, "is not damaged") {
		t.Errorf("zero store recover of a sound store: exit %d\n%s", code, out)
	}
	if kept, _ := filepath.Glob(path + ".damaged-*"); len(kept) != 0 {
		t.Errorf("a sound store was moved aside: %v", kept)
	}
	for _, args := range [][]string{{"store", "fix"}, {"store", "check", "--empty"}, {"store", "recover", "extra"}} {
		if out, code := storeRun(t, env, args...); code != 2 {
			t.Errorf("zero %s: exit %d, want 2\n%s", strings.Join(args, " "), code, out)
		}
	}
	if out, code := storeRun(t, []string{"ZERO_STORE=off"}, "store"); code != 1 || !strings.Contains(out, "ZERO_STORE=off") {
		t.Errorf("zero store with ZERO_STORE=off: exit %d\n%s", code, out)
	}
	out, code := storeRun(t, nil, "store", "--help")
	if code != 0 || !strings.Contains(out, "zero store recover [--empty]") || !strings.Contains(out, "zero.db.damaged-<UTC time>") {
		t.Errorf("zero store --help: exit %d\n%s", code, out)
	}
	if out, _ := storeRun(t, nil, "--help"); !strings.Contains(out, "  zero store [check|recover] ") {
		t.Errorf("zero --help does not list zero store:\n%s", out)
	}
}

// A store one of whose sessions another process holds is not moved.
func TestStoreRecoverRefusesWhileInUse(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zero.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		id := fmt.Sprintf("s%02d", i)
		if err := st.CreateSession(store.Session{ID: id, Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
		for j := range 30 {
			st.AppendEvent(id, store.Event{Seq: int64(j + 1), Type: "x", Data: bytes.Repeat([]byte("event "), 40)})
		}
	}
	st.Close() // all in the main file
	st, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Claim("s00", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	// Garbage over a page in the middle of the events, which only the
	// integrity check reads.
	db, err := sql.Open("sqlite", "file://"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var page int64
	err = db.QueryRow(`SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY path LIMIT 1 OFFSET 20`).Scan(&page)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 4096), (page-1)*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	env := []string{"ZERO_STORE=" + path}
	if out, code := storeRun(t, env, "store", "check"); code != 1 || !strings.Contains(out, "is damaged") {
		t.Fatalf("zero store check: exit %d\n%s", code, out)
	}
	out, code := storeRun(t, env, "store", "recover")
	if code != 1 || !strings.Contains(out, path+" is in use: a session of it is open in another zero process") || !strings.Contains(out, "nothing was changed") {
		t.Errorf("zero store recover while a session is held: exit %d\n%s", code, out)
	}
	if kept, _ := filepath.Glob(path + ".damaged-*"); len(kept) != 0 {
		t.Errorf("the store was moved while in use: %v", kept)
	}
}
