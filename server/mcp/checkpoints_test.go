package mcp

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

// undoReplies script a run that changes the workspace three ways: kept.txt
// written with text_editor, out/made.txt created and gone.txt deleted by a
// command. Were the undone run still in the request after the undo, the
// "LEAK" reply (the first unused one its text matches) would answer it.
func undoReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Match: "make the mess", Content: toolReply("edit", "text_editor:write", map[string]any{"path": "kept.txt", "content": "changed by the agent\n"})},
		{Match: "changed by the agent", Content: command("shell", "mkdir -p out && echo new > out/made.txt && rm gone.txt && echo done-shell")},
		{Match: "done-shell", Content: answer("mess made")},
		{Match: "done-shell", Content: answer("LEAK: the undone run is still in the request")},
		{Match: "after the undo", Content: answer("fresh")},
	}
}

func undoEnv(t *testing.T, store bool, replies ...llmtest.Reply) *servertest.Env {
	t.Helper()
	return servertest.New(t, servertest.Options{Store: store, Settings: map[string]string{"models.chat.tool_protocol": "json"}, Replies: replies})
}

func strs(v any) []string {
	var out []string
	if a, ok := v.([]any); ok {
		for _, x := range a {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}

// makeMess runs the undo script's run with zero_run in a new session on
// env's seeded workspace and returns the session and the listing before.
func makeMess(t *testing.T, r *stdioRig) (string, map[string]string) {
	t.Helper()
	servertest.SeedMess(t, r.env.Workspace)
	before := servertest.Listing(t, r.env.Workspace)
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "make the mess", "workspace": r.env.Workspace})
	mustOK(t, res)
	if out["response"] != "mess made" {
		t.Fatalf("zero_run = %v", out)
	}
	after := servertest.Listing(t, r.env.Workspace)
	if after["kept.txt"] != "changed by the agent\n" || after["out/made.txt"] != "new\n" || after["gone.txt"] != "" {
		t.Fatalf("the run did not change the workspace as scripted: %v", after)
	}
	return out["session"].(string), before
}

// The scenario: a run writes a file with text_editor, creates one
// and deletes another with a command; zero_undo leaves the workspace
// exactly as it was, says what it did, and the next request no longer
// holds the run. The checkpoint and the rewind are zero_status events
// with their payloads.
func TestUndoTakesBackARun(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "store"}[stored], func(t *testing.T) {
			env := undoEnv(t, stored, undoReplies()...)
			r := startStdio(t, env, clientOpts{})
			session, before := makeMess(t, r)

			out, res := call(t, r.c, "zero_undo", map[string]any{"session": session})
			mustOK(t, res)
			if got := servertest.Listing(t, env.Workspace); !maps.Equal(got, before) {
				t.Fatalf("after zero_undo the workspace is\n%v\nwant\n%v", got, before)
			}
			if !slices.Equal(strs(out["restored"]), []string{"gone.txt", "kept.txt"}) || !slices.Equal(strs(out["removed"]), []string{"out/", "out/made.txt"}) {
				t.Errorf("zero_undo = %v", out)
			}
			if out["checkpoint"] != 1.0 || out["run"] != 1.0 || out["files"] != true || out["conversation"] != true || out["messages_removed"].(float64) < 1 {
				t.Errorf("zero_undo = %v", out)
			}
			if txt := text(res); !strings.Contains(txt, "out/made.txt") || !strings.Contains(txt, "messages removed") {
				t.Errorf("zero_undo's text does not say what it did: %s", txt)
			}

			n := len(env.Model.Requests())
			out, res = call(t, r.c, "zero_run", map[string]any{"message": "after the undo", "session": session})
			mustOK(t, res)
			if out["response"] != "fresh" {
				t.Errorf("the run after the undo = %v", out)
			}
			if req := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(req, "make the mess") || strings.Contains(req, "changed by the agent") {
				t.Errorf("the request after the undo still holds the undone run:\n%s", req)
			}

			st, res := call(t, r.c, "zero_status", map[string]any{"session": session})
			mustOK(t, res)
			evs := toMaps(st["events"])
			cp := index(evs, func(e map[string]any) bool { return e["type"] == "checkpoint" })
			rw := index(evs, func(e map[string]any) bool { return e["type"] == "rewound" })
			if cp < 0 || rw < 0 {
				t.Fatalf("zero_status lacks checkpoint or rewound: %v", types(evs))
			}
			ref, _ := evs[cp]["checkpoint"].(map[string]any)
			if ref["id"] != 1.0 || ref["kind"] != "run" || ref["title"] != "make the mess" || ref["files"].(float64) < 2 || !slices.Contains(strs(ref["skipped"]), "build/: ignored by .gitignore") && len(strs(ref["skipped"])) == 0 {
				t.Errorf("the checkpoint event's payload: %v", evs[cp])
			}
			rep, _ := evs[rw]["rewind"].(map[string]any)
			if rep["to"] != 1.0 || !slices.Contains(strs(rep["deleted"]), "out/made.txt") {
				t.Errorf("the rewound event's payload: %v", evs[rw])
			}
		})
	}
}

// Without elicitation, a file the user changed after the run stops the
// undo: the error names it and says to call again with conflicts, and
// nothing changed; conflicts "keep" then keeps the user's edit and takes
// back the rest.
func TestUndoConflictWithoutElicitation(t *testing.T) {
	env := undoEnv(t, false, undoReplies()...)
	r := startStdio(t, env, clientOpts{})
	session, before := makeMess(t, r)
	servertest.Put(t, env.Workspace, "kept.txt", "the user fixed it by hand\n")
	mid := servertest.Listing(t, env.Workspace)

	_, res := call(t, r.c, "zero_undo", map[string]any{"session": session})
	if !res.IsError {
		t.Fatalf("zero_undo over the user's change = %s, want an error", text(res))
	}
	for _, want := range []string{"kept.txt", `conflicts "keep"`, `"overwrite"`, "Nothing was changed"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("the error does not say %q: %s", want, text(res))
		}
	}
	if got := servertest.Listing(t, env.Workspace); !maps.Equal(got, mid) {
		t.Fatalf("a refused undo changed the workspace: %v", got)
	}

	out, res := call(t, r.c, "zero_undo", map[string]any{"session": session, "conflicts": "keep"})
	mustOK(t, res)
	want := maps.Clone(before)
	want["kept.txt"] = "the user fixed it by hand\n"
	if got := servertest.Listing(t, env.Workspace); !maps.Equal(got, want) {
		t.Errorf("after zero_undo keeping the user's change the workspace is\n%v\nwant\n%v", got, want)
	}
	if !slices.Equal(strs(out["kept"]), []string{"kept.txt"}) {
		t.Errorf("zero_undo = %v", out)
	}
}

// conflictElicitor answers the question about the user's changes with
// choice (accept), or declines when choice is "".
type conflictElicitor struct {
	choice string
	mu     sync.Mutex
	asked  []string
}

func (e *conflictElicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	if e.choice == "" {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"choice": e.choice}}}, nil
}

func (e *conflictElicitor) questions() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asked)
}

// A client that can elicit is asked, naming the file: overwrite restores
// it too, keep keeps it, a refusal changes nothing. A 2026-07-28 client
// is asked through an input request and calls again with the answer.
func TestUndoConflictAsksTheUser(t *testing.T) {
	for _, tt := range []struct {
		name, choice string
		modern       bool
	}{
		{"overwrite", "overwrite", false},
		{"declined", "", false},
		{"modern keep", "keep", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := undoEnv(t, false, undoReplies()...)
			el := &conflictElicitor{choice: tt.choice}
			var c *client.Client
			if tt.modern {
				c = startModern(t, env, client.WithElicitationHandler(el))
			} else {
				c = startStdio(t, env, clientOpts{elicit: el}).c
			}
			r := &stdioRig{env: env, c: c}
			session, before := makeMess(t, r)
			servertest.Put(t, env.Workspace, "kept.txt", "the user fixed it by hand\n")
			mid := servertest.Listing(t, env.Workspace)

			out, res := call(t, c, "zero_undo", map[string]any{"session": session})
			if q := el.questions(); len(q) != 1 || !strings.Contains(q[0], "kept.txt") || !strings.Contains(q[0], "Overwrite") {
				t.Errorf("questions = %q", q)
			}
			want := maps.Clone(before)
			switch tt.choice {
			case "":
				want = mid
				if !res.IsError || !strings.Contains(text(res), "nothing was changed") {
					t.Errorf("a declined undo = %s", text(res))
				}
			case "keep":
				mustOK(t, res)
				want["kept.txt"] = "the user fixed it by hand\n"
				if !slices.Equal(strs(out["kept"]), []string{"kept.txt"}) {
					t.Errorf("zero_undo = %v", out)
				}
			default:
				mustOK(t, res)
			}
			if got := servertest.Listing(t, env.Workspace); !maps.Equal(got, want) {
				t.Errorf("after zero_undo the workspace is\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// zero_rewind without to lists the checkpoints (changing nothing), with
// what they cover; with to it goes back there, here the conversation only.
func TestRewindListsAndRewinds(t *testing.T) {
	env := undoEnv(t, false,
		llmtest.Reply{Match: "write one", Content: toolReply("w", "text_editor:write", map[string]any{"path": "one.txt", "content": "1\n"})},
		llmtest.Reply{Match: "write two", Content: toolReply("w", "text_editor:write", map[string]any{"path": "two.txt", "content": "2\n"})},
		llmtest.Reply{Match: "one.txt written", Content: answer("done one")},
		llmtest.Reply{Match: "two.txt written", Content: answer("done two")})
	r := startStdio(t, env, clientOpts{})
	servertest.SeedMess(t, env.Workspace)
	var session string
	for _, m := range []string{"write one", "write two"} {
		args := map[string]any{"message": m, "workspace": env.Workspace}
		if session != "" {
			args = map[string]any{"message": m, "session": session}
		}
		out, res := call(t, r.c, "zero_run", args)
		mustOK(t, res)
		session = out["session"].(string)
	}

	out, res := call(t, r.c, "zero_rewind", map[string]any{"session": session})
	mustOK(t, res)
	cps := toMaps(out["checkpoints"])
	if len(cps) != 2 || out["rewound"] != nil {
		t.Fatalf("zero_rewind's list = %v", out)
	}
	for i, c := range cps {
		if c["id"] != float64(i+1) || c["run"] != float64(i+1) || c["kind"] != "run" || c["created"] == "" || c["files"].(float64) < float64(3+i) {
			t.Errorf("checkpoint %d = %v", i+1, c)
		}
		if !slices.ContainsFunc(strs(c["skipped"]), func(s string) bool { return strings.HasPrefix(s, "build/") }) {
			t.Errorf("checkpoint %d does not say the ignored build folder is not covered: %v", i+1, c)
		}
	}
	if cps[1]["title"] != "write two" {
		t.Errorf("checkpoint 2's title = %v", cps[1]["title"])
	}
	if txt := text(res); !strings.Contains(txt, `2: before run 2 "write two"`) {
		t.Errorf("the list's text: %s", txt)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "two.txt")); err != nil {
		t.Fatalf("listing changed the workspace: %v", err)
	}

	out, res = call(t, r.c, "zero_rewind", map[string]any{"session": session, "to": 2, "conversation": true})
	mustOK(t, res)
	rw, _ := out["rewound"].(map[string]any)
	if rw["checkpoint"] != 2.0 || rw["files"] != false || rw["conversation"] != true || rw["messages_removed"].(float64) < 1 {
		t.Errorf("zero_rewind = %v", out)
	}
	if cps := toMaps(out["checkpoints"]); len(cps) != 1 || cps[0]["id"] != 1.0 {
		t.Errorf("the checkpoints after the rewind = %v", out["checkpoints"])
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "two.txt")); err != nil {
		t.Errorf("a conversation-only rewind removed the run's file: %v", err)
	}
	if !strings.Contains(text(res), "The files were left as they are") {
		t.Errorf("zero_rewind's text: %s", text(res))
	}
}

// zero_fork makes a session holding the conversation up to a run; it is
// continued with zero_reply like any session, and the original's history
// does not change.
func TestForkThenReply(t *testing.T) {
	env := undoEnv(t, true,
		llmtest.Reply{Match: "second question again", Content: answer("again")},
		llmtest.Reply{Match: "second question", Content: answer("answer two")},
		llmtest.Reply{Match: "in the fork", Content: answer("fork answer")},
		llmtest.Reply{Match: "first question", Content: answer("answer one")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "first question", "workspace": env.Workspace})
	mustOK(t, res)
	session := out["session"].(string)
	_, res = call(t, r.c, "zero_run", map[string]any{"message": "second question", "session": session})
	mustOK(t, res)

	out, res = call(t, r.c, "zero_fork", map[string]any{"session": session, "at_run": 1})
	mustOK(t, res)
	fork, _ := out["session"].(string)
	if fork == "" || fork == session || out["from"] != session || out["run"] != 1.0 || out["workspace"] != env.Workspace {
		t.Fatalf("zero_fork = %v", out)
	}
	if !strings.Contains(text(res), "zero_reply") {
		t.Errorf("zero_fork's text does not say how to continue: %s", text(res))
	}

	n := len(env.Model.Requests())
	rep, res := call(t, r.c, "zero_reply", map[string]any{"session": fork, "message": "in the fork"})
	mustOK(t, res)
	st, _ := poll(t, r.c, fork, rep["cursor"].(float64), finished)
	if st["result"].(map[string]any)["response"] != "fork answer" {
		t.Fatalf("the fork's run: %v", st)
	}
	if req := servertest.RequestText(env.Model.Requests()[n]); !strings.Contains(req, "first question") || strings.Contains(req, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", req)
	}
	all, _ := call(t, r.c, "zero_status", map[string]any{"session": fork})
	evs := toMaps(all["events"])
	if i := index(evs, func(e map[string]any) bool { return e["type"] == "forked" }); i < 0 {
		t.Errorf("the fork's events lack forked: %v", types(evs))
	} else if f, _ := evs[i]["fork"].(map[string]any); f["from"] != session || f["run"] != 1.0 {
		t.Errorf("the forked event's payload: %v", evs[i])
	}

	orig, _ := call(t, r.c, "zero_status", map[string]any{"session": session})
	if index(toMaps(orig["events"]), func(e map[string]any) bool { return e["type"] == "forked" || e["text"] == "in the fork" }) >= 0 {
		t.Errorf("the original's events hold the fork's: %v", types(toMaps(orig["events"])))
	}
	n = len(env.Model.Requests())
	_, res = call(t, r.c, "zero_run", map[string]any{"message": "second question again", "session": session})
	mustOK(t, res)
	if req := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(req, "in the fork") || !strings.Contains(req, "answer two") {
		t.Errorf("the original's request:\n%s\nwant its own history", req)
	}
}

// zero_compact summarises the history with the focus, says the tokens
// before and after, and zero_undo takes it back.
func TestCompactThenUndo(t *testing.T) {
	env := undoEnv(t, false,
		llmtest.Reply{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		llmtest.Reply{Match: "first question", Content: answer(strings.Repeat("long answer ", 60))},
		llmtest.Reply{Match: "next question", Content: answer("ok")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "first question", "workspace": env.Workspace})
	mustOK(t, res)
	session := out["session"].(string)

	out, res = call(t, r.c, "zero_compact", map[string]any{"session": session, "focus": "keep the parser"})
	mustOK(t, res)
	before, after := out["tokens_before"].(float64), out["tokens_after"].(float64)
	if after <= 0 || after >= before || out["checkpoint"] != 2.0 {
		t.Errorf("zero_compact = %v", out)
	}
	if !strings.Contains(text(res), "tokens") {
		t.Errorf("zero_compact's text: %s", text(res))
	}
	st, _ := call(t, r.c, "zero_status", map[string]any{"session": session})
	evs := toMaps(st["events"])
	if i := index(evs, func(e map[string]any) bool { return e["type"] == "history_compressed" }); i < 0 || evs[i]["tokens"] == nil {
		t.Errorf("zero_status lacks history_compressed with its tokens: %v", evs)
	}

	out, res = call(t, r.c, "zero_undo", map[string]any{"session": session})
	mustOK(t, res)
	if out["checkpoint"] != 2.0 {
		t.Errorf("zero_undo after zero_compact = %v", out)
	}
	n := len(env.Model.Requests())
	_, res = call(t, r.c, "zero_run", map[string]any{"message": "next question", "session": session})
	mustOK(t, res)
	if req := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(req, "SUMMARY") || !strings.Contains(req, "long answer long answer") {
		t.Errorf("the request after undoing the compaction:\n%s", req)
	}
}

// A rewind during a run cancels the run first and says so; zero_compact
// refuses to run then.
func TestUndoCancelsTheRunInProgress(t *testing.T) {
	env := undoEnv(t, false,
		llmtest.Reply{Match: "first", Content: answer("one")},
		llmtest.Reply{Match: "slow one", Content: answer("slow but done"), ChunkSize: 8, HoldAfter: 1})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "first", "workspace": env.Workspace})
	mustOK(t, res)
	session := out["session"].(string)
	_, res = call(t, r.c, "zero_start", map[string]any{"message": "slow one", "session": session})
	mustOK(t, res)
	<-env.Model.Held()
	defer env.Model.Release()

	_, res = call(t, r.c, "zero_compact", map[string]any{"session": session})
	if !res.IsError || !strings.Contains(text(res), "is running") {
		t.Errorf("zero_compact during a run = %s", text(res))
	}
	out, res = call(t, r.c, "zero_undo", map[string]any{"session": session})
	mustOK(t, res)
	if out["run_cancelled"] != true || out["run"] != 2.0 || !strings.Contains(text(res), "cancelled") {
		t.Errorf("zero_undo during a run = %v\n%s", out, text(res))
	}
	st, _ := call(t, r.c, "zero_status", map[string]any{"session": session})
	if st["running"] != false {
		t.Errorf("the run still goes on: %v", st)
	}
}

// Every bad input is an error result that says what is wrong.
func TestCheckpointToolsBadInputs(t *testing.T) {
	env := undoEnv(t, false, llmtest.Reply{Match: "first", Content: answer("one")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "first", "workspace": env.Workspace})
	mustOK(t, res)
	s := out["session"].(string)
	empty, res := call(t, r.c, "zero_start", map[string]any{"message": "unscripted: it fails", "workspace": env.Workspace})
	mustOK(t, res)
	poll(t, r.c, empty["session"].(string), 0, finished)
	idle, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"zero_undo", map[string]any{}, "session: required"},
		{"zero_undo", map[string]any{"session": 3}, "session: must be a string"},
		{"zero_undo", map[string]any{"session": "nope"}, `session: no session "nope"`},
		{"zero_undo", map[string]any{"session": s, "conflicts": "maybe"}, `conflicts: must be "keep" or "overwrite", not "maybe"`},
		{"zero_undo", map[string]any{"session": idle.ID()}, "nothing to undo"},
		{"zero_rewind", map[string]any{"session": "nope"}, `session: no session "nope"`},
		{"zero_rewind", map[string]any{"session": s, "to": "x"}, "to: must be a number"},
		{"zero_rewind", map[string]any{"session": s, "to": 0}, "to: must be a checkpoint id"},
		{"zero_rewind", map[string]any{"session": s, "to": 99}, "to: session " + s + " has no checkpoint 99; it has checkpoints 1"},
		{"zero_rewind", map[string]any{"session": s, "files": true}, "to: required with files"},
		{"zero_rewind", map[string]any{"session": s, "to": 1, "files": "yes"}, "files: must be a boolean"},
		{"zero_rewind", map[string]any{"session": s, "to": 1, "files": false, "conversation": false}, "both false"},
		{"zero_rewind", map[string]any{"session": s, "to": 1, "conflicts": "both"}, "conflicts: must be"},
		{"zero_fork", map[string]any{"session": "nope"}, `session: no session "nope"`},
		{"zero_fork", map[string]any{"session": s, "at_run": 0}, "at_run: must be a run number"},
		{"zero_fork", map[string]any{"session": s, "at_run": 9}, "at_run: fork session " + s + " at run 9"},
		{"zero_fork", map[string]any{"session": idle.ID()}, "session: fork session " + idle.ID() + ": invalid: no such run to fork at: no run has ended yet"},
		{"zero_compact", map[string]any{"session": "nope"}, `session: no session "nope"`},
		{"zero_compact", map[string]any{"session": s, "focus": 7}, "focus: must be a string"},
		{"zero_compact", map[string]any{"session": idle.ID()}, "nothing to compact"},
	} {
		_, res := call(t, r.c, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v = %q (error %v), want %q", tt.tool, tt.args, text(res), res.IsError, tt.want)
		}
	}
	// None of them changed the session: its checkpoint is still there.
	out, res = call(t, r.c, "zero_rewind", map[string]any{"session": s})
	mustOK(t, res)
	if len(toMaps(out["checkpoints"])) != 1 {
		t.Errorf("the checkpoints after the bad calls = %v", out)
	}
}

// undo and rewind are destructive (they put files back), fork and compact
// are not (a fork leaves the original, an undo takes a compaction back).
func TestCheckpointToolAnnotations(t *testing.T) {
	env := undoEnv(t, false)
	r := startStdio(t, env, clientOpts{})
	want := map[string]bool{"zero_undo": true, "zero_rewind": true, "zero_fork": false, "zero_compact": false}
	for _, tl := range listTools(t, r.c) {
		d := tl.Annotations.DestructiveHint != nil && *tl.Annotations.DestructiveHint
		if w, ok := want[tl.Name]; ok && d != w || !ok && d {
			t.Errorf("%s destructiveHint = %v", tl.Name, d)
		}
		delete(want, tl.Name)
	}
	if len(want) > 0 {
		t.Errorf("tools not offered: %v", want)
	}
}

// A process the run left running in the sandbox is named by the undo:
// Zero cannot take back what it does from now on.
func TestUndoNamesWhatStillRuns(t *testing.T) {
	env := undoEnv(t, false,
		llmtest.Reply{Match: "start a server", Content: command("background", `sleep 301 & p=$!; until [ "$(cat /proc/$p/comm)" = sleep ]; do :; done; echo started-bg`)},
		llmtest.Reply{Match: "started-bg", Content: answer("started")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "start a server", "workspace": env.Workspace})
	mustOK(t, res)
	if out["response"] != "started" {
		t.Fatalf("zero_run = %v", out)
	}
	out, res = call(t, r.c, "zero_undo", map[string]any{"session": out["session"].(string)})
	mustOK(t, res)
	running := strs(out["still_running"])
	if !slices.ContainsFunc(running, func(s string) bool { return strings.Contains(s, "sleep 301") }) {
		t.Errorf("zero_undo's still_running = %q", running)
	}
	if !strings.Contains(text(res), "Zero cannot undo") || !strings.Contains(text(res), "sleep 301") {
		t.Errorf("zero_undo's text does not name what still runs: %s", text(res))
	}
}
