package servertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm/llmtest"
)

// Listing is every file and folder under dir, .git included, by its
// slash-separated path: a file's content, or "/" for a folder (its path
// ending with "/"). Two listings are equal when the trees are, byte for
// byte (what an undo must leave).
func Listing(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			out[rel+"/"] = "/"
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "-> " + target
			return err
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// RequestText is a recorded request's messages as "role: content" lines.
func RequestText(r llmtest.Recorded) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(string(m.Role) + ": " + m.Content + "\n")
	}
	return b.String()
}

// UndoReplies script a run (its message "make the mess") that changes a
// SeedMess workspace three ways: kept.txt written with text_editor,
// out/made.txt created and gone.txt deleted by a command; it answers
// "mess made". A later "after the undo" is answered "fresh". The replies
// are Agent Zero's JSON tool requests (models.chat.tool_protocol json).
func UndoReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Match: "make the mess", Content: `{"thoughts": ["edit"], "headline": "Editing", "tool_name": "text_editor:write", "tool_args": {"path": "kept.txt", "content": "changed by the agent\n"}}`},
		{Match: "changed by the agent", Content: `{"thoughts": ["shell"], "headline": "Shell", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "mkdir -p out && echo new > out/made.txt && rm gone.txt && echo done-shell"}}`},
		{Match: "done-shell", Content: `{"thoughts": ["done"], "headline": "Done", "tool_name": "response", "tool_args": {"text": "mess made"}}`},
		{Match: "after the undo", Content: `{"thoughts": ["ok"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "fresh"}}`},
	}
}

// SeedMess fills a workspace for UndoReplies: the two files the run
// changes, an ignored build folder and the user's .git, which a rewind
// leaves alone.
func SeedMess(tb testing.TB, ws string) {
	tb.Helper()
	Put(tb, ws, "kept.txt", "the user's text\n")
	Put(tb, ws, "gone.txt", "deleted by a command\n")
	Put(tb, ws, ".gitignore", "build/\n")
	Put(tb, ws, "build/out.bin", "ignored build output\n")
	Put(tb, ws, ".git/HEAD", "ref: refs/heads/main\n")
}

// Put writes a file at the slash-separated rel under dir, making its
// folders.
func Put(tb testing.TB, dir, rel, content string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
