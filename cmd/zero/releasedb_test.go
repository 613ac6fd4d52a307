package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
	_ "github.com/zeroagent/zero/store" // the sqlite driver
)

// updateFixtures rewrites the fixtures under testdata from what this build
// does: go test ./cmd/zero -run TestReleaseDatabase -update. Do it when a
// release is made, never to make a failing test pass: the fixture is what
// users' stores hold.
var updateFixtures = flag.Bool("update", false, "rewrite testdata from what this build writes")

const (
	releaseDB         = "testdata/release.db"
	releaseTranscript = "testdata/release.transcript.md"
)

// releaseSession is the session of the fixture: a command with its output,
// a file written, and the answers, over two runs.
func releaseReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Content: `{"thoughts": ["look"], "headline": "Listing", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "echo release-fixture-output"}}`},
		{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "The command said release-fixture-output."}}`},
		{Content: `{"thoughts": ["write"], "headline": "Writing notes", "tool_name": "text_editor:write", "tool_args": {"path": "notes.txt", "content": "kept\n"}}`},
		{Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "notes.txt holds kept."}}`},
	}
}

// TestReleaseDatabase: a store written by an earlier Zero (testdata/release.db,
// made with -update by the Zero of December 2026, before the editor-facing
// event contract) opens in this one: the session is listed, its
// transcript replays as it was, and it continues, the model being given
// what the earlier runs said and did.
func TestReleaseDatabase(t *testing.T) {
	if *updateFixtures {
		writeReleaseFixture(t)
	}
	ws, data := t.TempDir(), t.TempDir()
	dbPath := filepath.Join(data, "zero.db")
	b, err := os.ReadFile(releaseDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dbPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The session's workspace was a folder of the machine that made it:
	// it is this test's now.
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var id, oldWS string
	if err := db.QueryRow(`SELECT id, workspace FROM sessions`).Scan(&id, &oldWS); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE sessions SET workspace = ?, roots = char(0) || ?`, ws, ws); err != nil {
		t.Fatal(err)
	}
	db.Close()

	srv := llmtest.NewServer(t, llmtest.Reply{Content: `{"thoughts": ["recall"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "continued"}}`})
	env := []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "ZERO_STORE=" + dbPath}

	out, err := zeroCmd(t, env, "sessions", "--workspace", ws).CombinedOutput()
	if err != nil || !strings.Contains(string(out), id[:8]) {
		t.Fatalf("zero sessions does not list the stored session %s: %v\n%s", id, err, out)
	}
	out, err = zeroCmd(t, env, "sessions", "show", id).Output()
	if err != nil {
		t.Fatalf("zero sessions show: %v\n%s", err, out)
	}
	want, err := os.ReadFile(releaseTranscript)
	if err != nil {
		t.Fatal(err)
	}
	// Paths stand as the workspace was: the one of its events (the machine
	// that made it) and the one it has now.
	// (Its usage, which that Zero stored as events without a role, is
	// the chat model's: the header says it.)
	got := strings.NewReplacer(oldWS, "WORKSPACE", ws, "WORKSPACE").Replace(string(out))
	if got != string(want) {
		t.Errorf("the stored session replays otherwise than it was (-want +got):\n%s\n---\n%s", want, got)
	}

	out, err = zeroCmd(t, env, "run", "--json", "--approval", "auto", "--workspace", ws, "--session", id, "what did you find?").Output()
	if err != nil {
		t.Fatalf("zero run --session: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte(`"continued"`)) {
		t.Errorf("the continued run did not answer:\n%s", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	var history strings.Builder
	for _, m := range reqs[0].Messages {
		history.WriteString(m.Content + "\n")
	}
	for _, said := range []string{"release fixture: run the command", "release-fixture-output", "The command said release-fixture-output.",
		"release fixture: write the notes", "notes.txt holds kept.", "what did you find?"} {
		if !strings.Contains(history.String(), said) {
			t.Errorf("the continued session's history lacks %q:\n%s", said, history.String())
		}
	}
	out, err = zeroCmd(t, env, "sessions", "show", id).Output()
	if err != nil || !strings.Contains(string(out), "Runs: 3") || !strings.Contains(string(out), "continued") {
		t.Errorf("after the run the session says: %v\n%s", err, out)
	}
}

// writeReleaseFixture makes testdata/release.db and its transcript with
// this build.
func writeReleaseFixture(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	dbPath := filepath.Join(data, "zero.db")
	srv := llmtest.NewServer(t, releaseReplies()...)
	env := []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "ZERO_STORE=" + dbPath}
	out, err := zeroCmd(t, env, "run", "--json", "--approval", "auto", "--workspace", ws, "release fixture: run the command").Output()
	if err != nil {
		t.Fatalf("zero run: %v\n%s", err, out)
	}
	var first struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal(out[:bytes.IndexByte(out, '\n')], &first); err != nil || first.Session == "" {
		t.Fatalf("no session in %q: %v", out, err)
	}
	if out, err := zeroCmd(t, env, "run", "--json", "--approval", "auto", "--workspace", ws, "--session", first.Session, "release fixture: write the notes").Output(); err != nil {
		t.Fatalf("zero run --session: %v\n%s", err, out)
	}
	out, err = zeroCmd(t, env, "sessions", "show", first.Session).Output()
	if err != nil {
		t.Fatalf("zero sessions show: %v\n%s", err, out)
	}
	if err := os.WriteFile(releaseTranscript, bytes.ReplaceAll(out, []byte(ws), []byte("WORKSPACE")), 0o644); err != nil {
		t.Fatal(err)
	}
	// One file: the store checkpointed its log when the last run closed it.
	if _, err := os.Stat(dbPath + "-wal"); err == nil {
		if fi, _ := os.Stat(dbPath + "-wal"); fi.Size() > 0 {
			t.Fatalf("the store left a write-ahead log of %d bytes", fi.Size())
		}
	}
	b, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(releaseDB, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
