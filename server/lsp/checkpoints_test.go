package lsp

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// jsonTools has the model answer with Agent Zero's JSON tool requests, as
// the replies below are written.
var jsonTools = map[string]string{"models.chat.tool_protocol": "json"}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func seed(t *testing.T, ws string) {
	t.Helper()
	servertest.SeedMess(t, ws)
	servertest.Put(t, ws, "src/main.go", "package main\n")
}

// messEnv is a workspace seeded with files, a connected client and a
// session that ran "make the mess".
func messEnv(t *testing.T, store bool, more ...llmtest.Reply) (env *servertest.Env, c *client, id string, before map[string]string) {
	t.Helper()
	env = servertest.New(t, servertest.Options{Store: store, Settings: jsonTools, Replies: append(servertest.UndoReplies(), more...)})
	seed(t, env.Workspace)
	before = servertest.Listing(t, env.Workspace)
	c = start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id = c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "make the mess"}, &res)
	if res.StopReason != "response" || res.Response != "mess made" {
		t.Fatalf("the run: %+v", res)
	}
	after := servertest.Listing(t, env.Workspace)
	if after["kept.txt"] != "changed by the agent\n" || after["out/made.txt"] != "new\n" || after["gone.txt"] != "" {
		t.Fatalf("the run did not change the workspace as scripted: %v", after)
	}
	return env, c, id, before
}

// The scenario through the face: a run writes a file with
// text_editor, creates one and deletes another with a command; zero/undo
// leaves the workspace exactly as it was (every file, with its content),
// says what it did, the rewound event arrives before its answer, and the
// next request no longer holds the run.
func TestUndo(t *testing.T) {
	t.Parallel()
	for _, store := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "store"}[store], func(t *testing.T) {
			t.Parallel()
			env, c, id, before := messEnv(t, store)
			// The checkpoint was taken before the run and said so.
			evs := events(c.snapshot(), id)
			cpAt := index(evs, ofType(server.EventCheckpoint))
			startedAt := index(evs, ofType(loop.EventRunStarted))
			if cpAt < 0 || startedAt < cpAt {
				t.Fatalf("checkpoint at %d, run_started at %d: %s", cpAt, startedAt, summary(c.snapshot()))
			}
			ref := evs[cpAt].Checkpoint
			if ref == nil || ref.ID != 1 || ref.Run != 1 || ref.Kind != server.CheckpointRun || ref.Title != "make the mess" || ref.Files < 3 || ref.Error != "" {
				t.Errorf("checkpoint event's checkpoint = %+v", ref)
			}
			if ref != nil && !slices.ContainsFunc(ref.Skipped, func(s string) bool { return strings.HasPrefix(s, "build/") }) {
				t.Errorf("the checkpoint does not name the ignored build/ as skipped: %q", ref.Skipped)
			}
			var list checkpointsResult
			c.call("zero/checkpoints", map[string]any{"sessionId": id}, &list)
			if len(list.Checkpoints) != 1 {
				t.Fatalf("zero/checkpoints = %+v, want one", list)
			}
			got := list.Checkpoints[0]
			if got.ID != 1 || got.Run != 1 || got.Kind != "run" || got.Title != "make the mess" || got.Files != ref.Files || got.Bytes == 0 || got.Created.IsZero() {
				t.Errorf("zero/checkpoints' checkpoint = %+v", got)
			}

			var rep server.RewindReport
			c.call("zero/undo", map[string]any{"sessionId": id}, &rep)
			if diff := cmp.Diff(before, servertest.Listing(t, env.Workspace)); diff != "" {
				t.Fatalf("the workspace after zero/undo (-before +now):\n%s", diff)
			}
			slices.Sort(rep.Restored)
			if rep.To != 1 || rep.Run != 1 || rep.Cancelled || !rep.Files || !rep.Conversation || rep.Messages == 0 ||
				!slices.Equal(rep.Restored, []string{"gone.txt", "kept.txt"}) || !slices.Equal(rep.Deleted, []string{"out/", "out/made.txt"}) {
				t.Errorf("zero/undo = %+v", rep)
			}
			// Its event came before its answer.
			evs = events(c.snapshot(), id)
			rw := index(evs, ofType(server.EventRewound))
			if rw < 0 || evs[rw].Rewind == nil || evs[rw].Rewind.To != 1 || !strings.Contains(evs[rw].Text, "rewound to checkpoint 1") {
				t.Fatalf("no rewound event before zero/undo's answer: %s", summary(c.snapshot()))
			}
			c.call("zero/checkpoints", map[string]any{"sessionId": id}, &list)
			if len(list.Checkpoints) != 0 {
				t.Errorf("after the undo zero/checkpoints = %+v, want none (the run's went with it)", list)
			}

			n := len(env.Model.Requests())
			var res PromptResult
			c.call("zero/prompt", map[string]any{"sessionId": id, "message": "after the undo"}, &res)
			if res.Response != "fresh" {
				t.Fatalf("next run: %+v", res)
			}
			if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "make the mess") || strings.Contains(text, "changed by the agent") || strings.Contains(text, "done-shell") {
				t.Errorf("the request after the undo still holds the undone run:\n%s", text)
			}
		})
	}
}

// A change the user made after the run is a conflict: zero/undo fails
// with codeConflict naming the files, having changed nothing; sent again
// keeping them, it restores the rest.
func TestUndoConflict(t *testing.T) {
	t.Parallel()
	env, c, id, before := messEnv(t, false)
	writeFile(t, filepath.Join(env.Workspace, "kept.txt"), "the user fixed it by hand\n")
	writeFile(t, filepath.Join(env.Workspace, "mine.txt"), "the user's new file\n")
	edited := servertest.Listing(t, env.Workspace)

	e := c.rpcErr("zero/undo", map[string]any{"sessionId": id})
	if e.Code != codeConflict || e.Data == nil {
		t.Fatalf("zero/undo over the user's changes: %d %q, want code %d with data", e.Code, e.Message, codeConflict)
	}
	var data conflictData
	if err := json.Unmarshal(*e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(conflictData{Conflicts: []string{"kept.txt", "mine.txt"}, To: 1}, data); diff != "" {
		t.Errorf("conflict data (-want +got):\n%s", diff)
	}
	if !strings.Contains(e.Message, "kept.txt") || !strings.Contains(e.Message, "nothing was changed") {
		t.Errorf("conflict message %q", e.Message)
	}
	if diff := cmp.Diff(edited, servertest.Listing(t, env.Workspace)); diff != "" {
		t.Fatalf("a refused undo changed the workspace (-before +now):\n%s", diff)
	}
	if slices.ContainsFunc(events(c.snapshot(), id), ofType(server.EventRewound)) {
		t.Errorf("a refused undo was an event")
	}
	if e := c.rpcErr("zero/undo", map[string]any{"sessionId": id, "conflicts": "mine"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "conflicts") {
		t.Errorf("conflicts \"mine\": %d %q", e.Code, e.Message)
	}

	var rep server.RewindReport
	c.call("zero/undo", map[string]any{"sessionId": id, "conflicts": "keep"}, &rep)
	want := maps.Clone(before)
	want["kept.txt"] = "the user fixed it by hand\n"
	want["mine.txt"] = "the user's new file\n"
	if diff := cmp.Diff(want, servertest.Listing(t, env.Workspace)); diff != "" {
		t.Errorf("after the undo keeping the user's changes (-want +got):\n%s", diff)
	}
	if !slices.Equal(rep.Kept, []string{"kept.txt", "mine.txt"}) || !slices.Equal(rep.Deleted, []string{"out/", "out/made.txt"}) {
		t.Errorf("report = %+v", rep)
	}
}

// zero/rewind chooses what goes back: the conversation alone leaves the
// files as the run made them. Bad params and a session with no
// checkpoint get clear errors.
func TestRewind(t *testing.T) {
	t.Parallel()
	env, c, id, _ := messEnv(t, false)
	mess := servertest.Listing(t, env.Workspace)
	if e := c.rpcErr("zero/rewind", map[string]any{"sessionId": id, "to": 9}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "to: ") || !strings.Contains(e.Message, "checkpoints 1") {
		t.Errorf("rewind to 9: %d %q", e.Code, e.Message)
	}
	if e := c.rpcErr("zero/rewind", map[string]any{"sessionId": id, "to": -1}); e.Code != jsonrpc2.CodeInvalidParams {
		t.Errorf("rewind to -1: %d %q", e.Code, e.Message)
	}
	if e := c.rpcErr("zero/rewind", map[string]any{"sessionId": id, "files": "yes"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "files: must be a boolean") {
		t.Errorf("files \"yes\": %d %q", e.Code, e.Message)
	}
	var rep server.RewindReport
	c.call("zero/rewind", map[string]any{"sessionId": id, "to": 1, "conversation": true}, &rep)
	if rep.Files || !rep.Conversation || rep.Messages == 0 || len(rep.Restored)+len(rep.Deleted) != 0 {
		t.Errorf("conversation only: %+v", rep)
	}
	if diff := cmp.Diff(mess, servertest.Listing(t, env.Workspace)); diff != "" {
		t.Errorf("a rewind of the conversation only changed the files (-before +now):\n%s", diff)
	}
	n := len(env.Model.Requests())
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "after the undo"}, &res)
	if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "make the mess") {
		t.Errorf("the request after the rewind still holds the run:\n%s", text)
	}

	other := c.newSession()
	if e := c.rpcErr("zero/undo", map[string]any{"sessionId": other}); e.Code != codeRequestFailed || !strings.Contains(e.Message, "no checkpoint") {
		t.Errorf("undo with no checkpoint: %d %q", e.Code, e.Message)
	}
	for _, m := range []string{"zero/undo", "zero/rewind", "zero/checkpoints", "zero/fork", "zero/compact"} {
		if e := c.rpcErr(m, map[string]any{}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "sessionId: required") {
			t.Errorf("%s without sessionId: %d %q", m, e.Code, e.Message)
		}
		if e := c.rpcErr(m, map[string]any{"sessionId": "nope"}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "unknown session") {
			t.Errorf("%s of an unknown session: %d %q", m, e.Code, e.Message)
		}
	}
}

// zero/fork makes a new session holding the conversation up to a run; it
// loads and goes on on its own, its replay ends with the forked event, and
// the original does not change.
func TestFork(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Settings: jsonTools, Replies: []llmtest.Reply{
		{Match: "second question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "answer two"}}`},
		{Match: "in the fork", Content: `{"thoughts": ["c"], "headline": "C", "tool_name": "response", "tool_args": {"text": "fork answer"}}`},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "answer one"}}`},
	}})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	for _, m := range []string{"first question", "second question"} {
		var res PromptResult
		c.call("zero/prompt", map[string]any{"sessionId": id, "message": m}, &res)
	}
	if e := c.rpcErr("zero/fork", map[string]any{"sessionId": id, "atRun": 9}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "atRun") {
		t.Errorf("fork at run 9: %d %q", e.Code, e.Message)
	}
	var fr newSessionResult
	c.call("zero/fork", map[string]any{"sessionId": id, "atRun": 1}, &fr)
	if fr.SessionID == "" || fr.SessionID == id {
		t.Fatalf("zero/fork = %+v", fr)
	}
	var loaded loadSessionResult
	c.call("zero/loadSession", map[string]any{"sessionId": fr.SessionID}, &loaded)
	evs := events(c.snapshot(), fr.SessionID)
	if len(evs) == 0 || evs[len(evs)-1].Type != server.EventForked || evs[len(evs)-1].Fork == nil ||
		*evs[len(evs)-1].Fork != (server.ForkRef{From: id, Run: 1}) {
		t.Fatalf("the fork's replay does not end with forked from %s run 1: %s", id, summary(c.snapshot()))
	}
	if slices.ContainsFunc(evs, func(e server.Event) bool { return e.Text == "second question" }) {
		t.Errorf("the fork's replay holds the second run")
	}

	n := len(env.Model.Requests())
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": fr.SessionID, "message": "in the fork"}, &res)
	if res.Response != "fork answer" || res.Run != 2 {
		t.Fatalf("the fork's run: %+v", res)
	}
	if text := servertest.RequestText(env.Model.Requests()[n]); !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", text)
	}
	n = len(env.Model.Requests())
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "second question again"}, &res)
	if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "in the fork") || !strings.Contains(text, "answer two") {
		t.Errorf("the original's request:\n%s\nwant its own history", text)
	}
}

// zero/compact summarises the history now, the focus in the utility
// model's request, answers the tokens before and after, after its events;
// zero/undo takes it back.
func TestCompact(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonTools, Replies: []llmtest.Reply{
		{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "` + strings.Repeat("long answer ", 60) + `"}}`},
		{Match: "next question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "ok"}}`},
		{Match: "next question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "ok again"}}`},
	}})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	if e := c.rpcErr("zero/compact", map[string]any{"sessionId": id}); e.Code != codeRequestFailed || !strings.Contains(e.Message, "nothing to compact") {
		t.Errorf("compact of an empty session: %d %q", e.Code, e.Message)
	}
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "first question"}, &res)
	var ch server.TokenChange
	c.call("zero/compact", map[string]any{"sessionId": id, "focus": "keep the parser"}, &ch)
	if ch.Before == 0 || ch.After >= ch.Before {
		t.Errorf("zero/compact = %+v", ch)
	}
	evs := events(c.snapshot(), id)
	hc := index(evs, ofType(loop.EventHistoryCompressed))
	cp := slices.IndexFunc(evs, func(e server.Event) bool {
		return e.Type == server.EventCheckpoint && e.Checkpoint != nil && e.Checkpoint.Kind == server.CheckpointCompact
	})
	if hc < 0 || cp < hc || evs[hc].Tokens == nil || evs[hc].Tokens.After != ch.After {
		t.Fatalf("history_compressed at %d, compact checkpoint at %d, before the answer: %s", hc, cp, summary(c.snapshot()))
	}
	n := len(env.Model.Requests())
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "next question"}, &res)
	if text := servertest.RequestText(env.Model.Requests()[n]); !strings.Contains(text, "SUMMARY: they talked about the parser.") || strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after compacting:\n%s", text)
	}
	// Undo twice: the run after it, then the compaction.
	var rep server.RewindReport
	c.call("zero/undo", map[string]any{"sessionId": id}, &rep)
	c.call("zero/undo", map[string]any{"sessionId": id}, &rep)
	if rep.To != evs[cp].Checkpoint.ID {
		t.Errorf("the second undo went to checkpoint %d, want the compaction's %d", rep.To, evs[cp].Checkpoint.ID)
	}
	n = len(env.Model.Requests())
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "next question"}, &res)
	if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "SUMMARY") || !strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after undoing the compaction:\n%s", text)
	}
}
