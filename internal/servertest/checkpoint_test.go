package servertest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

// tree is every file under dir (but .git) with its content's hash.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if rel != "." {
				out[rel+"/"] = "dir"
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An undo takes back what a run did to the files, by a tool and by
// commands alike, and its part of the conversation: the next request no
// longer holds it. The user's .git and the ignored build output are left
// alone, and the undo is an event.
func TestUndoRestoresFilesAndConversation(t *testing.T) {
	t.Parallel()
	for _, stored := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "store"}[stored], func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, servertest.Options{Store: stored, Settings: jsonProtocol(nil), Replies: servertest.UndoReplies()})
			servertest.SeedMess(t, env.Workspace)
			before := tree(t, env.Workspace)
			s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Prompt(t.Context(), "make the mess")
			if err != nil || res.Response != "mess made" {
				t.Fatalf("run = %+v, %v", res, err)
			}
			after := tree(t, env.Workspace)
			if after["kept.txt"] == before["kept.txt"] || after["out/made.txt"] == "" || after["gone.txt"] != "" {
				t.Fatalf("the run did not change the workspace as scripted: %v", after)
			}
			write(t, filepath.Join(env.Workspace, "build", "later.bin"), "more build output\n")
			rep, err := s.Undo(t.Context(), "")
			if err != nil {
				t.Fatalf("Undo: %v", err)
			}
			got := tree(t, env.Workspace)
			delete(got, "build/later.bin") // ignored: neither snapshotted nor removed
			if !mapsEqual(got, before) {
				t.Fatalf("after the undo the workspace is\n%v\nwant\n%v", got, before)
			}
			if _, err := os.Stat(filepath.Join(env.Workspace, "build", "later.bin")); err != nil {
				t.Errorf("the ignored build output was touched: %v", err)
			}
			if !slices.Contains(rep.Restored, "kept.txt") || !slices.Contains(rep.Restored, "gone.txt") || !slices.Contains(rep.Deleted, "out/made.txt") {
				t.Errorf("report = %+v", rep)
			}
			if rep.Messages == 0 {
				t.Errorf("report says no message left the conversation: %+v", rep)
			}
			evs, _ := s.Events(0)
			if !hasType(evs, server.EventCheckpoint) || !hasType(evs, server.EventRewound) {
				t.Errorf("events lack checkpoint or rewound: %v", types(evs))
			}
			n := len(env.Model.Requests())
			if res, err := s.Prompt(t.Context(), "after the undo"); err != nil || res.Response != "fresh" {
				t.Fatalf("next run = %+v, %v", res, err)
			}
			req := env.Model.Requests()[n]
			if text := servertest.RequestText(req); strings.Contains(text, "make the mess") || strings.Contains(text, "changed by the agent") {
				t.Errorf("the request after the undo still holds the undone run:\n%s", text)
			}
		})
	}
}

// A change the user made after the run is not lost by an undo: it is a
// conflict, named; keeping it restores the rest, overwriting restores all.
func TestUndoAsksAboutTheUsersChanges(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: jsonProtocol(nil), Replies: servertest.UndoReplies()})
	servertest.SeedMess(t, env.Workspace)
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "make the mess"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(env.Workspace, "kept.txt"), "the user fixed it by hand\n")
	write(t, filepath.Join(env.Workspace, "mine.txt"), "the user's new file\n")
	_, err = s.Undo(t.Context(), "")
	var ce *server.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, server.ErrConflict) {
		t.Fatalf("Undo with the user's changes = %v, want a conflict", err)
	}
	if !slices.Equal(ce.Paths, []string{"kept.txt", "mine.txt"}) {
		t.Errorf("conflicts = %q", ce.Paths)
	}
	if data, _ := os.ReadFile(filepath.Join(env.Workspace, "out", "made.txt")); string(data) != "new\n" {
		t.Fatalf("a refused undo changed the workspace")
	}
	rep, err := s.Undo(t.Context(), server.ConflictsKeep)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(env.Workspace, "kept.txt")); string(data) != "the user fixed it by hand\n" {
		t.Errorf("kept.txt = %q, the user's change was lost", data)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "mine.txt")); err != nil {
		t.Errorf("the user's new file was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "gone.txt")); err != nil {
		t.Errorf("the file the command deleted is not back: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "out", "made.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the file the command made is still there: %v", err)
	}
	if !slices.Equal(rep.Kept, []string{"kept.txt", "mine.txt"}) {
		t.Errorf("kept = %q", rep.Kept)
	}
}

// A fork holds the conversation up to a run under its own id and goes on
// on its own; the original's history does not change.
func TestForkLeavesTheOriginal(t *testing.T) {
	t.Parallel()
	replies := []llmtest.Reply{
		{Match: "second question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "answer two"}}`},
		{Match: "in the fork", Content: `{"thoughts": ["c"], "headline": "C", "tool_name": "response", "tool_args": {"text": "fork answer"}}`},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "answer one"}}`},
	}
	env := servertest.New(t, servertest.Options{Store: true, Settings: jsonProtocol(nil), Replies: replies})
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"first question", "second question"} {
		if _, err := s.Prompt(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	info, err := env.Manager.Fork(t.Context(), s.ID(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID == s.ID() || info.Runs != 1 {
		t.Fatalf("fork = %+v", info)
	}
	f, err := env.Manager.Get(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := len(env.Model.Requests())
	if res, err := f.Prompt(t.Context(), "in the fork"); err != nil || res.Response != "fork answer" {
		t.Fatalf("fork run = %+v, %v", res, err)
	}
	text := servertest.RequestText(env.Model.Requests()[n])
	if !strings.Contains(text, "first question") || strings.Contains(text, "second question") {
		t.Errorf("the fork's request:\n%s\nwant the first run only", text)
	}
	evs, _ := f.Events(0)
	if !hasType(evs, server.EventForked) {
		t.Errorf("the fork's events lack forked: %v", types(evs))
	}
	n = len(env.Model.Requests())
	if _, err := s.Prompt(t.Context(), "second question again"); err != nil {
		t.Fatal(err)
	}
	if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "in the fork") || !strings.Contains(text, "answer two") {
		t.Errorf("the original's request:\n%s\nwant its own history", text)
	}
	if _, err := env.Manager.Fork(t.Context(), s.ID(), 9); !errors.Is(err, server.ErrInvalid) {
		t.Errorf("fork at run 9 = %v, want ErrInvalid", err)
	}
	if _, err := s.Undo(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Manager.Fork(t.Context(), s.ID(), 3); !errors.Is(err, server.ErrInvalid) {
		t.Errorf("fork at the undone run 3 = %v, want ErrInvalid", err)
	}
}

// Compact summarises the history with the utility model, the focus in its
// request, and an undo takes the compaction back.
func TestCompactAndUndoIt(t *testing.T) {
	t.Parallel()
	replies := []llmtest.Reply{
		{Match: "keep the parser", Content: "SUMMARY: they talked about the parser."},
		{Match: "first question", Content: `{"thoughts": ["a"], "headline": "A", "tool_name": "response", "tool_args": {"text": "` + strings.Repeat("long answer ", 60) + `"}}`},
		{Match: "next question", Content: `{"thoughts": ["b"], "headline": "B", "tool_name": "response", "tool_args": {"text": "ok"}}`},
	}
	env := servertest.New(t, servertest.Options{Settings: jsonProtocol(nil), Replies: replies})
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "first question"); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Compact(t.Context(), "keep the parser")
	if err != nil {
		t.Fatal(err)
	}
	if ch.After >= ch.Before {
		t.Errorf("compact: %+v", ch)
	}
	n := len(env.Model.Requests())
	if _, err := s.Prompt(t.Context(), "next question"); err != nil {
		t.Fatal(err)
	}
	text := servertest.RequestText(env.Model.Requests()[n])
	if !strings.Contains(text, "SUMMARY: they talked about the parser.") || strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after compacting:\n%s", text)
	}
	// Undo twice: the run after, then the compaction.
	for range 2 {
		if _, err := s.Undo(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	n = len(env.Model.Requests())
	if _, err := s.Prompt(t.Context(), "next question"); err != nil {
		t.Fatal(err)
	}
	if text := servertest.RequestText(env.Model.Requests()[n]); strings.Contains(text, "SUMMARY") || !strings.Contains(text, "long answer long answer") {
		t.Errorf("the request after undoing the compaction:\n%s", text)
	}
	if _, err := s.Compact(context.WithoutCancel(t.Context()), ""); err != nil && !errors.Is(err, server.ErrInvalid) {
		t.Logf("compact again: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func hasType(evs []server.Event, typ loop.EventType) bool {
	return slices.ContainsFunc(evs, func(e server.Event) bool { return e.Type == typ })
}

func types(evs []server.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

// A rewind of the conversation only leaves the files as the undone runs
// made them: a later rewind does not take them for the user's changes,
// and checkpoint ids are never given twice.
func TestPartialRewindThenUndo(t *testing.T) {
	t.Parallel()
	replies := []llmtest.Reply{
		{Match: "write one", Content: `{"thoughts": ["w"], "headline": "W", "tool_name": "text_editor:write", "tool_args": {"path": "one.txt", "content": "1\n"}}`},
		{Match: "write two", Content: `{"thoughts": ["w"], "headline": "W", "tool_name": "text_editor:write", "tool_args": {"path": "two.txt", "content": "2\n"}}`},
		{Match: "one.txt", Content: `{"thoughts": ["d"], "headline": "D", "tool_name": "response", "tool_args": {"text": "done"}}`},
		{Match: "two.txt", Content: `{"thoughts": ["d"], "headline": "D", "tool_name": "response", "tool_args": {"text": "done"}}`},
		{Content: `{"thoughts": ["d"], "headline": "D", "tool_name": "response", "tool_args": {"text": "done"}}`},
	}
	env := servertest.New(t, servertest.Options{Store: true, Settings: jsonProtocol(nil), Replies: replies})
	write(t, filepath.Join(env.Workspace, "base.txt"), "base\n")
	before := tree(t, env.Workspace)
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"write one", "write two"} {
		if _, err := s.Prompt(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Rewind(t.Context(), server.RewindOptions{To: 2, Conversation: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "two.txt")); err != nil {
		t.Fatalf("a conversation-only rewind removed the run's file: %v", err)
	}
	if cps := s.Checkpoints(); len(cps) != 1 || cps[0].ID != 1 {
		t.Fatalf("checkpoints after the rewind = %+v", cps)
	}
	if _, err := s.Undo(t.Context(), ""); err != nil {
		t.Fatalf("undo after a conversation-only rewind: %v (the agent's own files are not the user's)", err)
	}
	if got := tree(t, env.Workspace); !mapsEqual(got, before) {
		t.Errorf("after the undo the workspace is %v, want %v", got, before)
	}
	if _, err := s.Prompt(t.Context(), "anything"); err != nil {
		t.Fatal(err)
	}
	if cps := s.Checkpoints(); len(cps) != 1 || cps[0].ID != 3 {
		t.Errorf("the next run's checkpoint = %+v, want id 3", cps)
	}
}

// A secret the user typed into a message reaches neither the checkpoint's
// title (an event, the store) nor the session's title: both hold its alias.
func TestCheckpointTitleMasksSecrets(t *testing.T) {
	t.Parallel()
	const value = "zq-5ecret-8f3a61c9d2"
	home := t.TempDir()
	write(t, filepath.Join(home, ".config", "zero", "secrets.env"), "API_TOKEN="+value+"\n")
	env := servertest.New(t, servertest.Options{Home: home, Store: true, Settings: jsonProtocol(nil), Replies: []llmtest.Reply{
		{Content: `{"thoughts": ["ok"], "headline": "OK", "tool_name": "response", "tool_args": {"text": "done"}}`},
	}})
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(t.Context(), "deploy with "+value); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events(0)
	for _, e := range evs {
		if e.Type == server.EventCheckpoint && (strings.Contains(e.Text, value) || strings.Contains(e.Checkpoint.Title, value)) {
			t.Errorf("the checkpoint event shows the secret: %+v", e.Checkpoint)
		}
	}
	for _, c := range s.Checkpoints() {
		if strings.Contains(c.Title, value) || !strings.Contains(c.Title, "API_TOKEN") {
			t.Errorf("checkpoint title = %q", c.Title)
		}
	}
	if strings.Contains(s.Info().Title, value) {
		t.Errorf("session title = %q", s.Info().Title)
	}
}
