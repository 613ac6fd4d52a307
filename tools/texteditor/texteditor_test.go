package texteditor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools/texteditor"
)

// teIdleModel is a model the text editor tests never call: they drive the
// tool directly and only need an agent for its Data.
type teIdleModel struct{}

func (teIdleModel) Stream(context.Context, llm.Request, llm.StreamFunc) (llm.Result, error) {
	return llm.Result{}, errors.New("teIdleModel: not for calling")
}

// teAgent returns a fresh agent of a session whose workspace is ws.
func teAgent(t *testing.T, ws string) *loop.Agent {
	t.Helper()
	s := loop.NewSession("te", loop.Config{
		Setup:     loop.Setup{Model: teIdleModel{}, Prompts: profiles.New()},
		Workspace: ws,
	}, nil)
	return s.Agent0()
}

// teCall runs one text_editor call; args is JSON.
func teCall(t *testing.T, te *texteditor.Tool, a *loop.Agent, method, args string) loop.ToolResult {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatalf("bad test args %s: %v", args, err)
	}
	res, err := te.Execute(context.Background(), &loop.ToolCall{ID: "1", Name: "text_editor", Method: method, Args: m, Agent: a})
	if err != nil {
		t.Fatalf("text_editor:%s %s: Go error %v", method, args, err)
	}
	return res
}

func teWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func teReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// teLines is a file of n lines "line 1" … "line n".
func teLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestTextEditorRead(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1500) // 3,000 bytes on one line
	tests := []struct {
		name    string
		content string
		args    string
		want    []string // substrings of the result
		notWant []string
		isError bool
	}{
		{
			name: "numbered lines with a default window of 200", content: teLines(250), args: `{"path": "f.txt"}`,
			want:    []string{"f.txt: 250 lines, showing 1-200\n", "    1 | line 1\n", "  200 | line 200\n", "[lines 201-250 not shown; read them with line_from 201]"},
			notWant: []string{"line 201\n"},
		},
		{
			name: "a range", content: teLines(30), args: `{"path": "f.txt", "line_from": 12, "line_to": 14}`,
			want:    []string{"30 lines, showing 12-14\n   12 | line 12\n   13 | line 13\n   14 | line 14\n[lines 15-30 not shown"},
			notWant: []string{"line 11\n", "line 15\n"},
		},
		{
			name: "line_to past the end stops at the end", content: teLines(5), args: `{"path": "f.txt", "line_from": 4, "line_to": 99}`,
			want: []string{"5 lines, showing 4-5\n    4 | line 4\n    5 | line 5"}, notWant: []string{"not shown"},
		},
		{
			name: "wide numbers keep alignment", content: teLines(100500), args: `{"path": "f.txt", "line_from": 100499}`,
			want: []string{"100499 | line 100499\n100500 | line 100500"},
		},
		{
			name: "no trailing newline and CRLF", content: "a\r\nb\r\nlast", args: `{"path": "f.txt"}`,
			want: []string{"3 lines, showing 1-3\n    1 | a\n    2 | b\n    3 | last"}, notWant: []string{"\r"},
		},
		{name: "empty file", content: "", args: `{"path": "f.txt"}`, want: []string{"empty file (0 lines)"}},
		{
			name: "a long line is cut at a rune boundary", content: "short\n" + long + "\nafter\n", args: `{"path": "f.txt"}`,
			want: []string{"    2 | " + strings.Repeat("é", 1000) + " [... line cut: 2000 of 3000 bytes shown]\n", "    3 | after", "[long lines cut: 2;"},
		},
		{
			name: "the total is capped", content: strings.Repeat(strings.Repeat("x", 1000)+"\n", 100), args: `{"path": "f.txt", "line_to": 100}`,
			want: []string{"showing 1-23\n", "[output stops at line 23 (size limit); read on with line_from 24]"}, notWant: []string{"   24 | "},
		},
		{name: "from past the end", content: teLines(3), args: `{"path": "f.txt", "line_from": 9}`, want: []string{"the file has 3 lines"}, isError: true},
		{name: "to before from", content: teLines(3), args: `{"path": "f.txt", "line_from": 3, "line_to": 2}`, want: []string{"line_to 2 is before line_from 3"}, isError: true},
		{name: "NUL bytes are binary", content: "PK\x03\x04\x00\x00data", args: `{"path": "f.txt"}`, want: []string{"binary"}, isError: true},
		{name: "invalid UTF-8 is refused", content: "ok\ncaf\xe9\n", args: `{"path": "f.txt"}`, want: []string{"not UTF-8 text (invalid bytes on line 2)"}, isError: true},
		{name: "missing file", args: `{"path": "nope.txt"}`, want: []string{"cannot read", "no such file"}, isError: true},
		{name: "a directory", args: `{"path": "."}`, want: []string{"directory"}, isError: true},
		{name: "no path", args: `{}`, want: []string{"needs tool_args.path"}, isError: true},
		{name: "wrong type", args: `{"path": "f.txt", "line_from": "3"}`, want: []string{"tool_args.line_from of text_editor must be an integer, not string"}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			if tt.content != "" || strings.Contains(tt.name, "empty") {
				teWriteFile(t, filepath.Join(ws, "f.txt"), tt.content)
			}
			res := teCall(t, texteditor.New(ws), teAgent(t, ws), "read", tt.args)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Text)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("result lacks %q:\n%.3000s", w, res.Text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.Text, w) {
					t.Errorf("result has %q:\n%.3000s", w, res.Text)
				}
			}
			if !tt.isError && len(res.Text) > 26000 {
				t.Errorf("result is %d bytes, over the cap", len(res.Text))
			}
		})
	}
}

func TestTextEditorWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		args    string
		before  string // existing content, or "" for none
		want    string // the file afterwards
		result  string
		isError bool
	}{
		{name: "creates folders", path: "a/b/c.go", args: `{"path": "a/b/c.go", "content": "package c\n\nfunc F() {}\n"}`,
			want: "package c\n\nfunc F() {}\n", result: "a/b/c.go written: 3 lines\n    1 | package c\n    2 | \n    3 | func F() {}"},
		{name: "replaces a file", path: "x.txt", before: "old\nold\nold\n", args: `{"path": "x.txt", "content": "new"}`, want: "new", result: "written: 1 lines\n    1 | new"},
		{name: "empty content", path: "e.txt", args: `{"path": "e.txt", "content": ""}`, want: "", result: "e.txt written: 0 lines"},
		{name: "absolute path inside", path: "abs.txt", args: `{"path": "WS/abs.txt", "content": "x\n"}`, want: "x\n", result: "written: 1 lines"},
		{name: "content is required", path: "none.txt", args: `{"path": "none.txt"}`, result: "needs tool_args.content", isError: true},
		{name: "content must be a string", path: "none.txt", args: `{"path": "none.txt", "content": 5}`, result: "tool_args.content of text_editor must be a string", isError: true},
		{name: "not over a directory", path: "d", before: "DIR", args: `{"path": "d", "content": "x"}`, result: "it is a directory", isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			target := filepath.Join(ws, tt.path)
			switch tt.before {
			case "":
			case "DIR":
				if err := os.Mkdir(target, 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				teWriteFile(t, target, tt.before)
			}
			res := teCall(t, texteditor.New(ws), teAgent(t, ws), "write", strings.ReplaceAll(tt.args, "WS", ws))
			if res.IsError != tt.isError || !strings.Contains(res.Text, tt.result) {
				t.Errorf("result (IsError %v) = %q, want IsError %v containing %q", res.IsError, res.Text, tt.isError, tt.result)
			}
			if tt.isError {
				if _, err := os.Stat(target); tt.before == "" && err == nil {
					t.Errorf("a refused write created %s", target)
				}
				return
			}
			if got := teReadFile(t, target); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(target), ".*zero-*")); len(matches) > 0 {
				t.Errorf("temporary files left: %v", matches)
			}
		})
	}
}

func TestTextEditorWriteKeepsMode(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	script := filepath.Join(ws, "run.sh")
	teWriteFile(t, script, "#!/bin/sh\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	te, a := texteditor.New(ws), teAgent(t, ws)
	if res := teCall(t, te, a, "write", `{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}`); res.IsError {
		t.Fatal(res.Text)
	}
	if res := teCall(t, te, a, "patch", `{"path": "run.sh", "edits": [{"from": 2, "to": 2, "content": "echo bye\n"}]}`); res.IsError {
		t.Fatalf("a patch right after a write should work: %s", res.Text)
	}
	fi, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755 kept", fi.Mode().Perm())
	}
	if got := teReadFile(t, script); got != "#!/bin/sh\necho bye\n" {
		t.Errorf("file = %q", got)
	}
}

func TestTextEditorPatch(t *testing.T) {
	t.Parallel()
	five := "one\ntwo\nthree\nfour\nfive\n"
	tests := []struct {
		name    string
		before  string
		edits   string
		want    string   // the file afterwards (unchanged when isError)
		result  []string // substrings of the result
		shifts  bool     // line numbers moved: the next patch needs a read
		isError bool
	}{
		{name: "replace one line", before: five, edits: `[{"from": 2, "to": 2, "content": "TWO\n"}]`,
			want:   "one\nTWO\nthree\nfour\nfive\n",
			result: []string{"1 edits applied, 5 lines now\n    1 | one\n    2 | TWO\n    3 | three\n    4 | four"}},
		{name: "content without final newline", before: five, edits: `[{"from": 5, "to": 5, "content": "FIVE"}]`, want: "one\ntwo\nthree\nfour\nFIVE\n"},
		{name: "replace a range with more lines", shifts: true, before: five, edits: `[{"from": 2, "to": 3, "content": "a\nb\nc\n"}]`,
			want:   "one\na\nb\nc\nfour\nfive\n",
			result: []string{"6 lines now\n    1 | one\n    2 | a\n    3 | b\n    4 | c\n    5 | four\n    6 | five\n", "read the file again before the next patch"}},
		{name: "insert before a line", shifts: true, before: five, edits: `[{"from": 1, "content": "zero\n"}]`,
			want: "zero\none\ntwo\nthree\nfour\nfive\n", result: []string{"    1 | zero\n    2 | one\n"}},
		{name: "insert with to below from", shifts: true, before: five, edits: `[{"from": 3, "to": 2, "content": "2.5\n"}]`, want: "one\ntwo\n2.5\nthree\nfour\nfive\n"},
		{name: "append after the last line", shifts: true, before: five, edits: `[{"from": 6, "content": "six\n"}]`, want: five + "six\n"},
		{name: "delete lines", shifts: true, before: five, edits: `[{"from": 2, "to": 3}]`,
			want: "one\nfour\nfive\n", result: []string{"3 lines now\n    1 | one\n    2 | four\n    3 | five"}},
		{name: "delete with empty content", shifts: true, before: five, edits: `[{"from": 5, "to": 5, "content": ""}]`, want: "one\ntwo\nthree\nfour\n"},
		{name: "several edits use the numbers of the read", shifts: true, before: five,
			edits: `[{"from": 5, "to": 5, "content": "5\n"}, {"from": 1, "content": "0\n"}, {"from": 2, "to": 3}, {"from": 4, "content": "3.5\n"}]`,
			want:  "0\none\n3.5\nfour\n5\n"},
		{name: "two inserts at one line keep their order", shifts: true, before: five, edits: `[{"from": 2, "content": "a\n"}, {"from": 2, "content": "b\n"}, {"from": 2, "to": 2, "content": "c\n"}]`,
			want: "one\na\nb\nc\nthree\nfour\nfive\n"},
		{name: "no trailing newline stays so", shifts: true, before: "a\nb", edits: `[{"from": 2, "to": 2, "content": "B\n"}, {"from": 3, "content": "c\n"}]`, want: "a\nB\nc"},
		{name: "CRLF stays CRLF", shifts: true, before: "a\r\nb\r\n", edits: `[{"from": 2, "to": 2, "content": "B\nC\n"}]`, want: "a\r\nB\r\nC\r\n"},
		{name: "in place edits keep the stamp", before: five, edits: `[{"from": 1, "to": 2, "content": "1\n2\n"}]`,
			want: "1\n2\nthree\nfour\nfive\n", result: []string{"5 lines now"}},
		{name: "overlapping ranges", before: five, edits: `[{"from": 1, "to": 3, "content": "x\n"}, {"from": 3, "to": 4, "content": "y\n"}]`,
			want: five, result: []string{"edits 1 (lines 1-3) and 2 (lines 3-4) overlap"}, isError: true},
		{name: "an insert inside a replaced range", before: five, edits: `[{"from": 2, "to": 4}, {"from": 3, "content": "x\n"}]`,
			want: five, result: []string{"overlap"}, isError: true},
		{name: "range past the end", before: five, edits: `[{"from": 4, "to": 9, "content": "x\n"}]`, want: five, result: []string{"the file has 5 lines"}, isError: true},
		{name: "insert past the end", before: five, edits: `[{"from": 8, "content": "x\n"}]`, want: five, result: []string{"use from 6 to append"}, isError: true},
		{name: "from below 1", before: five, edits: `[{"from": 0, "to": 1, "content": "x\n"}]`, want: five, result: []string{"line numbers start at 1"}, isError: true},
		{name: "from missing", before: five, edits: `[{"to": 1, "content": "x\n"}]`, want: five, result: []string{`edit 1 has no "from"`}, isError: true},
		{name: "empty insert", before: five, edits: `[{"from": 2}]`, want: five, result: []string{"inserts nothing"}, isError: true},
		{name: "no edits", before: five, edits: `[]`, want: five, result: []string{"tool_args.edits is empty"}, isError: true},
		{name: "wrong edit type", before: five, edits: `[{"from": "2", "to": 2}]`, want: five, result: []string{"must be an integer, not string"}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			path := filepath.Join(ws, "f.txt")
			teWriteFile(t, path, tt.before)
			te, a := texteditor.New(ws), teAgent(t, ws)
			if res := teCall(t, te, a, "read", `{"path": "f.txt"}`); res.IsError {
				t.Fatal(res.Text)
			}
			res := teCall(t, te, a, "patch", `{"path": "f.txt", "edits": `+tt.edits+`}`)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Text)
			}
			for _, w := range tt.result {
				if !strings.Contains(res.Text, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Text)
				}
			}
			if diff := cmp.Diff(tt.want, teReadFile(t, path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if tt.isError {
				return
			}
			// A second patch works only when the first kept every line in place.
			if got := strings.Contains(res.Text, "read the file again"); got != tt.shifts {
				t.Errorf("result says to read again = %v, want %v", got, tt.shifts)
			}
			again := teCall(t, te, a, "patch", `{"path": "f.txt", "edits": [{"from": 1, "to": 1, "content": "again\n"}]}`)
			if again.IsError != tt.shifts {
				t.Errorf("second patch IsError = %v, want %v: %s", again.IsError, tt.shifts, again.Text)
			}
		})
	}
}

// TestTextEditorPatchNeedsFreshRead walks the read-before-patch rule.
func TestTextEditorPatchNeedsFreshRead(t *testing.T) {
	t.Parallel()
	type step struct {
		method, args string
		external     func(t *testing.T, path string) // a change outside the tool, before the call
		isError      bool
		want         string
	}
	patch1 := `{"path": "f.txt", "edits": [{"from": 1, "to": 1, "content": "X\n"}]}`
	touch := func(t *testing.T, path string) {
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "never read", steps: []step{
			{method: "patch", args: patch1, isError: true, want: "read it first with text_editor:read"},
			{method: "read", args: `{"path": "f.txt", "line_from": 3, "line_to": 3}`, want: "    3 | c"},
			{method: "patch", args: patch1, want: "    1 | X"}, // any read of the file counts
		}},
		{name: "stale after an external change of mtime", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, external: touch, isError: true, want: "changed since you last read it"},
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, want: "1 edits applied"},
		}},
		{name: "stale after an external change of size", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, external: func(t *testing.T, path string) {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				teWriteFile(t, path, "a\nb\nc\nd\n")
				if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil { // same mtime, other size
					t.Fatal(err)
				}
			}, isError: true, want: "changed since you last read it"},
		}},
		{name: "stale after a change that keeps mtime and size", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, external: func(t *testing.T, path string) {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				teWriteFile(t, path, "A\nB\nC\n")
				if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
					t.Fatal(err)
				}
			}, isError: true, want: "changed since you last read it"},
		}},
		{name: "a line count change forces a re-read", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: `{"path": "f.txt", "edits": [{"from": 2, "to": 2}]}`, want: "read the file again before the next patch"},
			{method: "patch", args: patch1, isError: true, want: "previous patch changed its line count"},
			{method: "read", args: `{"path": "f.txt"}`, want: "2 lines"},
			{method: "patch", args: patch1, want: "    1 | X\n    2 | c"},
		}},
		{name: "in-place patches chain", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1},
			{method: "patch", args: `{"path": "f.txt", "edits": [{"from": 3, "to": 3, "content": "Z\n"}]}`, want: "    1 | X\n    2 | b\n    3 | Z"},
		}},
		{name: "a write counts as a read", steps: []step{
			{method: "write", args: `{"path": "f.txt", "content": "p\nq\n"}`},
			{method: "patch", args: patch1, want: "    1 | X\n    2 | q"},
		}},
		{name: "reads through a symlink count for the target", steps: []step{
			{method: "read", args: `{"path": "link.txt"}`},
			{method: "patch", args: patch1, want: "1 edits applied"},
		}},
		{name: "a deleted file", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, external: func(t *testing.T, path string) { os.Remove(path) }, isError: true, want: "no such file"},
			{method: "patch", args: `{"path": "new.txt", "edits": [{"from": 1, "content": "x\n"}]}`, isError: true, want: "create it with text_editor:write"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			path := filepath.Join(ws, "f.txt")
			teWriteFile(t, path, "a\nb\nc\n")
			if err := os.Symlink("f.txt", filepath.Join(ws, "link.txt")); err != nil {
				t.Fatal(err)
			}
			te, a := texteditor.New(), teAgent(t, ws) // the session's workspace
			for i, s := range tt.steps {
				if s.external != nil {
					s.external(t, path)
				}
				res := teCall(t, te, a, s.method, s.args)
				if res.IsError != s.isError || !strings.Contains(res.Text, s.want) {
					t.Fatalf("step %d %s: IsError %v, want %v containing %q:\n%s", i, s.method, res.IsError, s.isError, s.want, res.Text)
				}
			}
		})
	}
}

func TestTextEditorStampsArePerAgent(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	teWriteFile(t, filepath.Join(ws, "f.txt"), "a\n")
	te := texteditor.New(ws)
	reader, other := teAgent(t, ws), teAgent(t, ws)
	teCall(t, te, reader, "read", `{"path": "f.txt"}`)
	if res := teCall(t, te, other, "patch", `{"path": "f.txt", "edits": [{"from": 1, "to": 1, "content": "b\n"}]}`); !res.IsError {
		t.Errorf("another agent's read should not count: %s", res.Text)
	}
	st, ok := reader.Data[texteditor.ReadsKey].(map[string]texteditor.FileStamp)
	if !ok || len(st) != 1 {
		t.Errorf("Data[%q] = %#v, want one stamp", texteditor.ReadsKey, reader.Data[texteditor.ReadsKey])
	}
}

func TestTextEditorPaths(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	second := filepath.Join(base, "second")
	outside := filepath.Join(base, "outside")
	teWriteFile(t, filepath.Join(ws, "sub", "in.txt"), "inside\n")
	teWriteFile(t, filepath.Join(second, "s.txt"), "second root\n")
	teWriteFile(t, filepath.Join(outside, "secret.txt"), "secret\n")
	for link, target := range map[string]string{
		"out":        outside,                                  // a folder outside
		"out.txt":    filepath.Join(outside, "secret.txt"),     // a file outside
		"inlink":     filepath.Join(ws, "sub"),                 // stays inside
		"rel.txt":    "sub/in.txt",                             // relative, inside
		"tosecond":   second,                                   // into the other root
		"dangling":   filepath.Join(outside, "missing", "new"), // a target that does not exist
		"dotdot.txt": "../outside/secret.txt",                  // relative, outside
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	te := texteditor.New(ws, second)
	tests := []struct {
		name, method, args string
		want               string
		isError            bool
	}{
		{"relative", "read", `{"path": "sub/in.txt"}`, "1 | inside", false},
		{"absolute inside", "read", `{"path": "WS/sub/in.txt"}`, "1 | inside", false},
		{"dot dot that stays inside", "read", `{"path": "sub/../sub/in.txt"}`, "1 | inside", false},
		{"second root", "read", `{"path": "SECOND/s.txt"}`, "1 | second root", false},
		{"symlink inside", "read", `{"path": "inlink/in.txt"}`, "1 | inside", false},
		{"relative symlink inside", "read", `{"path": "rel.txt"}`, "1 | inside", false},
		{"symlink into the other root", "read", `{"path": "tosecond/s.txt"}`, "1 | second root", false},
		{"dot dot escape", "read", `{"path": "../outside/secret.txt"}`, "is outside the workspace: text_editor works only inside WS, SECOND", true},
		{"deep dot dot escape", "write", `{"path": "sub/../../x.txt", "content": "x"}`, "is outside the workspace", true},
		{"absolute elsewhere", "read", `{"path": "/etc/passwd"}`, "is outside the workspace", true},
		{"absolute write elsewhere", "write", `{"path": "OUTSIDE/new.txt", "content": "x"}`, "is outside the workspace", true},
		{"symlinked folder outside", "read", `{"path": "out/secret.txt"}`, "leads outside the workspace through a symlink", true},
		{"symlinked file outside", "read", `{"path": "out.txt"}`, "leads outside the workspace through a symlink", true},
		{"relative symlink outside", "patch", `{"path": "dotdot.txt", "edits": [{"from": 1, "to": 1}]}`, "through a symlink", true},
		{"write through a symlinked folder", "write", `{"path": "out/new/file.txt", "content": "x"}`, "through a symlink", true},
		{"write into a symlinked folder outside", "write", `{"path": "out/secret.txt", "content": "x"}`, "through a symlink", true},
		{"write over a symlinked file outside", "write", `{"path": "out.txt", "content": "x"}`, "through a symlink", true},
		{"write over a relative symlink outside", "write", `{"path": "dotdot.txt", "content": "x"}`, "through a symlink", true},
		{"patch through a symlinked folder", "patch", `{"path": "out/secret.txt", "edits": [{"from": 1, "to": 1}]}`, "through a symlink", true},
		{"patch of a symlinked file outside", "patch", `{"path": "out.txt", "edits": [{"from": 1, "to": 1}]}`, "through a symlink", true},
		{"read of a relative symlink outside", "read", `{"path": "dotdot.txt"}`, "through a symlink", true},
		{"write through a symlink inside", "write", `{"path": "inlink/w.txt", "content": "w\n"}`, "WS/inlink/w.txt written: 1 lines", false},
		{"write through a symlink into the other root", "write", `{"path": "tosecond/w.txt", "content": "w\n"}`, "WS/tosecond/w.txt written: 1 lines", false},
		{"dangling symlink", "write", `{"path": "dangling", "content": "x"}`, "symlink to a missing target", true},
		{"unknown method", "delete", `{"path": "sub/in.txt"}`, `unknown method "delete": use text_editor:read, text_editor:write or text_editor:patch`, true},
		{"no method", "", `{"path": "sub/in.txt"}`, "text_editor needs a method", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := strings.NewReplacer("WS", ws, "SECOND", second, "OUTSIDE", outside).Replace(tt.args)
			want := strings.NewReplacer("WS", ws, "SECOND", second).Replace(tt.want)
			res := teCall(t, te, teAgent(t, ws), tt.method, args)
			if res.IsError != tt.isError || !strings.Contains(res.Text, want) {
				t.Errorf("IsError %v, want %v containing %q:\n%s", res.IsError, tt.isError, want, res.Text)
			}
		})
	}
	// Nothing was created or changed outside. The subtests are parallel:
	// they run after this function returns, before its cleanups.
	t.Cleanup(func() { teCheckPathsOutside(t, ws, second, outside) })
}

func teCheckPathsOutside(t *testing.T, ws, second, outside string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(outside, "missing")); err == nil {
		t.Error("a write through the dangling symlink created its target")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a write through the symlinked folder created a file outside")
	}
	if got := teReadFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if got := teDirNames(t, outside); !slices.Equal(got, []string{"secret.txt"}) {
		t.Errorf("outside holds %v, want only secret.txt", got)
	}
	for _, f := range []string{filepath.Join(ws, "sub", "w.txt"), filepath.Join(second, "w.txt")} {
		if got := teReadFile(t, f); got != "w\n" {
			t.Errorf("%s = %q, want the write through the symlink inside", f, got)
		}
	}
}

func TestTextEditorNoWorkspace(t *testing.T) {
	t.Parallel()
	res, err := texteditor.New().Execute(context.Background(), &loop.ToolCall{
		Name: "text_editor", Method: "read", Args: map[string]any{"path": "x"}, Agent: teAgent(t, ""),
	})
	if !errors.Is(err, texteditor.ErrNoWorkspace) {
		t.Errorf("Execute = %+v, %v; want ErrNoWorkspace", res, err)
	}
}

func TestTextEditorIdentity(t *testing.T) {
	t.Parallel()
	te := texteditor.New()
	if diff := cmp.Diff([]string{"text_editor", "read", "edit", "edit"}, []string{te.Name(), te.Kind("read"), te.Kind("write"), te.Kind("patch")}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// BenchmarkTextEditor measures a read of 200 lines and an in-place patch of
// a 10,000-line file, the common edit cycle.
func BenchmarkTextEditor(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(teLines(10000)), 0o644); err != nil {
		b.Fatal(err)
	}
	s := loop.NewSession("bench", loop.Config{Setup: loop.Setup{Model: teIdleModel{}, Prompts: profiles.New()}, Workspace: ws}, nil)
	te, a := texteditor.New(ws), s.Agent0()
	run := func(method string, args map[string]any) {
		res, err := te.Execute(context.Background(), &loop.ToolCall{Name: "text_editor", Method: method, Args: args, Agent: a})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %s", method, err, res.Text)
		}
	}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			run("read", map[string]any{"path": "big.txt", "line_from": 5000})
		}
	})
	b.Run("patch", func(b *testing.B) {
		run("read", map[string]any{"path": "big.txt"})
		edits := []any{map[string]any{"from": 5000, "to": 5000, "content": "changed\n"}}
		for b.Loop() {
			run("patch", map[string]any{"path": "big.txt", "edits": edits})
		}
	})
}

// teFiles is an editor's view of files for the tests: buffers in a map,
// every call recorded.
type teFiles struct {
	mu       sync.Mutex
	bufs     map[string]string
	readErr  error // returned by every read when set
	writeErr error // returned by every write when set
	calls    []string
	ctxSeen  []any // the value of teCtxKey in each call's context
}

type teCtxKey struct{}

var _ texteditor.Files = (*teFiles)(nil)

func newTeFiles(bufs map[string]string) *teFiles {
	if bufs == nil {
		bufs = map[string]string{}
	}
	return &teFiles{bufs: bufs}
}

func (f *teFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "read "+path)
	f.ctxSeen = append(f.ctxSeen, ctx.Value(teCtxKey{}))
	if f.readErr != nil {
		return "", f.readErr
	}
	s, ok := f.bufs[path]
	if !ok {
		return "", errors.New("resource not found") // as an ACP client answers, no fs error
	}
	return s, nil
}

func (f *teFiles) WriteTextFile(ctx context.Context, path, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "write "+path)
	f.ctxSeen = append(f.ctxSeen, ctx.Value(teCtxKey{}))
	if f.writeErr != nil {
		return f.writeErr
	}
	f.bufs[path] = content
	return nil
}

func (f *teFiles) set(path, content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bufs[path] = content
}

func (f *teFiles) get(path string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.bufs[path]
	return s, ok
}

func (f *teFiles) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// teRealDir is dir with its symlinks resolved: the paths the editor's
// Files and the diffs get.
func teRealDir(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTextEditorFiles walks the text editor through the editor's buffers:
// the disk holds other content, which must stay as it is.
func TestTextEditorFiles(t *testing.T) {
	t.Parallel()
	type step struct {
		method, args string
		before       func(f *teFiles, dir string) // a change in the editor, before the call
		isError      bool
		want         string
	}
	patch1 := `{"path": "f.txt", "edits": [{"from": 1, "to": 1, "content": "X\n"}]}`
	tests := []struct {
		name    string
		steps   []step
		want    map[string]string // the buffers afterwards, by name in the workspace
		noCalls bool              // the editor's files were never asked
	}{
		{name: "read sees the unsaved buffer", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`, want: "f.txt: 3 lines, showing 1-3\n    1 | buf a\n    2 | buf b\n    3 | buf c"},
		}},
		{name: "write goes to the editor", steps: []step{
			{method: "write", args: `{"path": "new/dir/n.txt", "content": "n1\nn2\n"}`, want: "n.txt written: 2 lines\n    1 | n1"},
			{method: "read", args: `{"path": "new/dir/n.txt"}`, want: "    2 | n2"},
		}, want: map[string]string{"f.txt": "buf a\nbuf b\nbuf c\n", "new/dir/n.txt": "n1\nn2\n"}},
		{name: "patch after a read", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, want: "    1 | X\n    2 | buf b"},
			{method: "patch", args: `{"path": "f.txt", "edits": [{"from": 3, "to": 3, "content": "Z\n"}]}`, want: "    3 | Z"},
		}, want: map[string]string{"f.txt": "X\nbuf b\nZ\n"}},
		{name: "patch after a write", steps: []step{
			{method: "write", args: `{"path": "f.txt", "content": "p\nq\n"}`},
			{method: "patch", args: patch1, want: "    1 | X\n    2 | q"},
		}, want: map[string]string{"f.txt": "X\nq\n"}},
		{name: "patch without a read", steps: []step{
			{method: "patch", args: patch1, isError: true, want: "read it first with text_editor:read"},
		}, want: map[string]string{"f.txt": "buf a\nbuf b\nbuf c\n"}},
		{name: "patch of a file the editor lacks", steps: []step{
			{method: "patch", args: `{"path": "none.txt", "edits": [{"from": 1, "content": "x\n"}]}`, isError: true,
				want: "cannot patch " + "WS/none.txt: the editor could not read it: resource not found; to create a file, use text_editor:write"},
		}},
		{name: "a buffer changed in the editor is stale", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, before: func(f *teFiles, dir string) {
				f.set(filepath.Join(dir, "f.txt"), "BUF A\nbuf b\nbuf c\n") // same size: only the hash tells
			}, isError: true, want: "changed since you last read it"},
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, want: "1 edits applied"},
		}, want: map[string]string{"f.txt": "X\nbuf b\nbuf c\n"}},
		{name: "a line count change forces a re-read", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: `{"path": "f.txt", "edits": [{"from": 2, "to": 2}]}`, want: "read the file again"},
			{method: "patch", args: patch1, isError: true, want: "previous patch changed its line count"},
		}, want: map[string]string{"f.txt": "buf a\nbuf c\n"}},
		{name: "a read error is a result", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`, before: func(f *teFiles, _ string) { f.readErr = errors.New("editor gone") },
				isError: true, want: "cannot read WS/f.txt: the editor could not read it: editor gone"},
		}},
		{name: "a missing file as an fs error", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`, before: func(f *teFiles, _ string) { f.readErr = fmt.Errorf("open: %w", fs.ErrNotExist) },
				isError: true, want: "cannot read WS/f.txt: no such file"},
		}},
		{name: "a write error is a result", steps: []step{
			{method: "write", args: `{"path": "w.txt", "content": "x"}`, before: func(f *teFiles, _ string) { f.writeErr = errors.New("read-only buffer") },
				isError: true, want: "cannot write WS/w.txt: the editor could not write it: read-only buffer"},
		}, want: map[string]string{"f.txt": "buf a\nbuf b\nbuf c\n"}},
		{name: "a patch write error is a result", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`},
			{method: "patch", args: patch1, before: func(f *teFiles, _ string) { f.writeErr = errors.New("read-only buffer") },
				isError: true, want: "cannot patch WS/f.txt: the editor could not write it: read-only buffer"},
		}, want: map[string]string{"f.txt": "buf a\nbuf b\nbuf c\n"}},
		{name: "binary content from the editor", steps: []step{
			{method: "read", args: `{"path": "f.txt"}`, before: func(f *teFiles, dir string) { f.set(filepath.Join(dir, "f.txt"), "a\x00b") },
				isError: true, want: "looks binary"},
		}},
		{name: "escapes are refused before the editor is asked", noCalls: true, steps: []step{
			{method: "read", args: `{"path": "../outside.txt"}`, isError: true, want: "is outside the workspace"},
			{method: "write", args: `{"path": "/etc/zero-test.txt", "content": "x"}`, isError: true, want: "is outside the workspace"},
			{method: "patch", args: `{"path": "out/secret.txt", "edits": [{"from": 1, "to": 1}]}`, isError: true, want: "through a symlink"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := teRealDir(t, t.TempDir())
			ws := filepath.Join(base, "ws")
			teWriteFile(t, filepath.Join(ws, "f.txt"), "disk\n")
			teWriteFile(t, filepath.Join(base, "outside", "secret.txt"), "secret\n")
			if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(ws, "out")); err != nil {
				t.Fatal(err)
			}
			f := newTeFiles(map[string]string{filepath.Join(ws, "f.txt"): "buf a\nbuf b\nbuf c\n"})
			te, a := texteditor.New(ws).WithFiles(f), teAgent(t, ws)
			for i, s := range tt.steps {
				if s.before != nil {
					s.before(f, ws)
				}
				res := teCall(t, te, a, s.method, s.args)
				want := strings.ReplaceAll(s.want, "WS", ws)
				if res.IsError != s.isError || !strings.Contains(res.Text, want) {
					t.Fatalf("step %d %s: IsError %v, want %v containing %q:\n%s", i, s.method, res.IsError, s.isError, want, res.Text)
				}
			}
			if tt.want != nil {
				for name, content := range tt.want {
					if got, _ := f.get(filepath.Join(ws, name)); got != content {
						t.Errorf("buffer %s = %q, want %q", name, got, content)
					}
				}
			}
			if calls := f.callLog(); tt.noCalls && len(calls) > 0 {
				t.Errorf("the editor was asked %v", calls)
			}
			// The disk is the editor's business: nothing of it changed.
			if got := teReadFile(t, filepath.Join(ws, "f.txt")); got != "disk\n" {
				t.Errorf("disk file = %q, want it untouched", got)
			}
			if _, err := os.Stat(filepath.Join(ws, "new")); err == nil {
				t.Error("a write through the editor made folders on disk")
			}
			if got := teReadFile(t, filepath.Join(base, "outside", "secret.txt")); got != "secret\n" {
				t.Errorf("outside file changed: %q", got)
			}
		})
	}
}

// TestTextEditorFilesContext checks that the calls to the editor carry the
// context of Execute, so a cancelled turn cancels them.
func TestTextEditorFilesContext(t *testing.T) {
	t.Parallel()
	ws := teRealDir(t, t.TempDir())
	f := newTeFiles(map[string]string{filepath.Join(ws, "f.txt"): "a\n"})
	te, a := texteditor.New(ws).WithFiles(f), teAgent(t, ws)
	ctx := context.WithValue(context.Background(), teCtxKey{}, "turn")
	for _, c := range []struct {
		method string
		args   map[string]any
	}{
		{"read", map[string]any{"path": "f.txt"}},
		{"patch", map[string]any{"path": "f.txt", "edits": []any{map[string]any{"from": 1, "to": 1, "content": "b\n"}}}},
		{"write", map[string]any{"path": "g.txt", "content": "g\n"}},
	} {
		res, err := te.Execute(ctx, &loop.ToolCall{Name: "text_editor", Method: c.method, Args: c.args, Agent: a})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", c.method, err, res.Text)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ctxSeen) == 0 {
		t.Fatal("the editor was never called")
	}
	for i, v := range f.ctxSeen {
		if v != "turn" {
			t.Errorf("call %d (%s) had context value %v, want Execute's context", i, f.calls[i], v)
		}
	}
}

// TestTextEditorWithFilesNil checks that WithFiles(nil) is the disk and
// leaves the original editor as it was.
func TestTextEditorWithFilesNil(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	teWriteFile(t, filepath.Join(ws, "f.txt"), "disk\n")
	orig := texteditor.New(ws)
	f := newTeFiles(map[string]string{filepath.Join(teRealDir(t, ws), "f.txt"): "buffer\n"})
	viaFiles := orig.WithFiles(f)
	for _, c := range []struct {
		name string
		te   *texteditor.Tool
		want string
	}{
		{"original", orig, "1 | disk"},
		{"with files", viaFiles, "1 | buffer"},
		{"with nil files", viaFiles.WithFiles(nil), "1 | disk"},
	} {
		if res := teCall(t, c.te, teAgent(t, ws), "read", `{"path": "f.txt"}`); res.IsError || !strings.Contains(res.Text, c.want) {
			t.Errorf("%s: read = %q, want %q", c.name, res.Text, c.want)
		}
	}
}

// TestTextEditorDiffs checks the diffs results carry, on the disk and
// through the editor's files alike.
func TestTextEditorDiffs(t *testing.T) {
	t.Parallel()
	ptr := func(s string) *string { return &s }
	big := strings.Repeat("x", 1<<20) + "\n" // one byte over the cap
	type step struct{ method, args string }
	tests := []struct {
		name   string
		before string // f.txt's content; "" for none
		steps  []step // run before the call whose diffs are checked
		call   step
		want   []loop.FileDiff // Path is a name in the workspace
		errors bool            // the checked call fails
	}{
		{name: "write of a new file", call: step{"write", `{"path": "sub/new.txt", "content": "n\n"}`},
			want: []loop.FileDiff{{Path: "sub/new.txt", OldText: nil, NewText: "n\n"}}},
		{name: "overwrite", before: "old\n", call: step{"write", `{"path": "f.txt", "content": "new\n"}`},
			want: []loop.FileDiff{{Path: "f.txt", OldText: ptr("old\n"), NewText: "new\n"}}},
		{name: "overwrite of an empty file", before: "EMPTY", call: step{"write", `{"path": "f.txt", "content": "x"}`},
			want: []loop.FileDiff{{Path: "f.txt", OldText: ptr(""), NewText: "x"}}},
		{name: "patch gives the whole texts", before: "a\nb\nc\n", steps: []step{{"read", `{"path": "f.txt"}`}},
			call: step{"patch", `{"path": "f.txt", "edits": [{"from": 2, "to": 2, "content": "B\n"}]}`},
			want: []loop.FileDiff{{Path: "f.txt", OldText: ptr("a\nb\nc\n"), NewText: "a\nB\nc\n"}}},
		{name: "none for a read", before: "a\n", call: step{"read", `{"path": "f.txt"}`}},
		{name: "none for a failed write", call: step{"write", `{"path": "f.txt"}`}, errors: true},
		{name: "none for a failed patch", before: "a\n", call: step{"patch", `{"path": "f.txt", "edits": [{"from": 1, "to": 1}]}`}, errors: true},
		{name: "none for a new file over 1 MiB", call: step{"write", `{"path": "f.txt", "content": "` + big[:len(big)-1] + `x"}`}},
		{name: "none when the old text is over 1 MiB", before: big, call: step{"write", `{"path": "f.txt", "content": "small\n"}`}},
	}
	for _, mode := range []string{"disk", "files"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ws := teRealDir(t, t.TempDir())
				te := texteditor.New(ws)
				content := strings.ReplaceAll(tt.before, "EMPTY", "")
				if mode == "disk" {
					if tt.before != "" {
						teWriteFile(t, filepath.Join(ws, "f.txt"), content)
					}
				} else {
					f := newTeFiles(nil)
					if tt.before != "" {
						f.set(filepath.Join(ws, "f.txt"), content)
					}
					te = te.WithFiles(f)
				}
				a := teAgent(t, ws)
				for _, s := range tt.steps {
					if res := teCall(t, te, a, s.method, s.args); res.IsError || len(res.Diffs) > 0 {
						t.Fatalf("%s: %s (diffs %v)", s.method, res.Text, res.Diffs)
					}
				}
				res := teCall(t, te, a, tt.call.method, tt.call.args)
				if res.IsError != tt.errors {
					t.Fatalf("IsError = %v, want %v: %.300s", res.IsError, tt.errors, res.Text)
				}
				var want []loop.FileDiff
				for _, d := range tt.want {
					d.Path = filepath.Join(ws, d.Path)
					want = append(want, d)
				}
				if diff := cmp.Diff(want, res.Diffs); diff != "" {
					t.Errorf("Diffs (-want +got):\n%.2000s", diff)
				}
			})
		}
	}
}

// TestTextEditorDiffsOfBinary checks that a write over a binary file on
// disk reports no diff, as its old side cannot be shown as text.
func TestTextEditorDiffsOfBinary(t *testing.T) {
	t.Parallel()
	ws := teRealDir(t, t.TempDir())
	teWriteFile(t, filepath.Join(ws, "b.bin"), "\x00\x01\x02")
	res := teCall(t, texteditor.New(ws), teAgent(t, ws), "write", `{"path": "b.bin", "content": "text\n"}`)
	if res.IsError || len(res.Diffs) != 0 {
		t.Errorf("write = %+v, want success without diffs", res)
	}
}

// teSwapToSymlink moves the folder dir aside and puts a symlink to target
// in its place, as a process racing in the workspace could.
func teSwapToSymlink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// teDirNames lists the names in dir, sorted.
func teDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestTextEditorSymlinkSwapAfterCheck swaps a folder of the workspace for a
// symlink to a folder outside after the editor checked the path and before
// it uses it: the window a process racing in the workspace (the agent's
// own shell) could hit. Every method must refuse, and nothing outside may
// be read or changed.
func TestTextEditorSymlinkSwapAfterCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, args string
		readFirst          bool // read dir/f.txt before the swap, so a patch is allowed
	}{
		{name: "read", method: "read", args: `{"path": "dir/f.txt"}`},
		{name: "write over a file", method: "write", args: `{"path": "dir/f.txt", "content": "pwned\n"}`},
		{name: "write of a new file", method: "write", args: `{"path": "dir/n.txt", "content": "pwned\n"}`},
		{name: "write that makes folders", method: "write", args: `{"path": "dir/new/deep/n.txt", "content": "pwned\n"}`},
		{name: "patch", method: "patch", args: `{"path": "dir/f.txt", "edits": [{"from": 1, "to": 1, "content": "pwned\n"}]}`, readFirst: true},
	}
	for _, link := range []string{"absolute", "relative"} {
		for _, tt := range tests {
			t.Run(link+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				base := teRealDir(t, t.TempDir())
				ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
				inside := filepath.Join(ws, "dir", "f.txt")
				teWriteFile(t, inside, "same\n")
				// The outside file looks like the inside one, stamp and all,
				// so only the confinement can keep a patch off it.
				teWriteFile(t, filepath.Join(outside, "f.txt"), "same\n")
				fi, err := os.Stat(inside)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(filepath.Join(outside, "f.txt"), fi.ModTime(), fi.ModTime()); err != nil {
					t.Fatal(err)
				}
				target := outside
				if link == "relative" {
					target = filepath.Join("..", "outside")
				}
				te, a := texteditor.New(ws), teAgent(t, ws)
				if tt.readFirst {
					if res := teCall(t, te, a, "read", `{"path": "dir/f.txt"}`); res.IsError {
						t.Fatal(res.Text)
					}
				}
				swaps := 0
				te.SetAfterResolve(func(string) {
					swaps++
					teSwapToSymlink(t, filepath.Join(ws, "dir"), target)
				})
				res := teCall(t, te, a, tt.method, tt.args)
				if swaps != 1 {
					t.Fatalf("the hook ran %d times, want 1", swaps)
				}
				want := fmt.Sprintf("leads outside the workspace through a symlink: text_editor works only inside %s", ws)
				if !res.IsError || !strings.Contains(res.Text, want) {
					t.Errorf("%s after the swap: IsError %v, want a refusal containing %q:\n%s", tt.method, res.IsError, want, res.Text)
				}
				if got := teReadFile(t, filepath.Join(outside, "f.txt")); got != "same\n" {
					t.Errorf("the file outside was changed to %q", got)
				}
				if got := teDirNames(t, outside); !slices.Equal(got, []string{"f.txt"}) {
					t.Errorf("outside holds %v, want only f.txt", got)
				}
				if got := teReadFile(t, filepath.Join(ws, "dir.aside", "f.txt")); got != "same\n" {
					t.Errorf("the file moved aside was changed to %q", got)
				}
			})
		}
	}
}

// TestTextEditorSymlinkSwapRace writes dir/file again and again while
// another goroutine flips dir between a real folder and a symlink (absolute
// or relative) to a folder outside the workspace, in a tight loop. Writes
// may succeed or be refused, but nothing may ever land outside: a check of
// the path followed by an open by name would, now and then, follow the
// symlink that appeared in between.
func TestTextEditorSymlinkSwapRace(t *testing.T) {
	base := teRealDir(t, t.TempDir())
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	dir, aside := filepath.Join(ws, "dir"), filepath.Join(ws, "aside")
	for _, d := range []string{dir, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	targets := []string{outside, filepath.Join("..", "outside")}

	stop := make(chan struct{})
	var flips sync.WaitGroup
	flips.Go(func() {
		// Errors are expected (the editor may have made dir again, or
		// filled it) and ignored: the loop only keeps dir changing.
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(aside)
			os.Rename(dir, aside)
			os.Symlink(targets[i%2], dir)
			os.Remove(dir) // the symlink, or an empty folder the editor made
			os.Mkdir(dir, 0o755)
		}
	})

	// Writers in parallel, each an agent of its own (an agent's stamps are
	// not for concurrent use), widen the chance of hitting the window.
	te := texteditor.New(ws)
	const writers = 4
	var written, refused atomic.Int64
	var escaped atomic.Bool
	var wg sync.WaitGroup
	deadline := time.Now().Add(5 * time.Second)
	for w := range writers {
		a := teAgent(t, ws)
		wg.Go(func() {
			for i := 0; i < 1000 && time.Now().Before(deadline) && !escaped.Load(); i++ {
				res, err := te.Execute(context.Background(), &loop.ToolCall{Name: "text_editor", Method: "write", Agent: a,
					Args: map[string]any{"path": "dir/file", "content": fmt.Sprintf("writer %d, write %d\n", w, i)}})
				switch {
				case err != nil:
					t.Errorf("write: Go error %v", err)
					return
				case res.IsError:
					refused.Add(1)
				default:
					written.Add(1)
				}
				if entries, _ := os.ReadDir(outside); len(entries) > 0 {
					escaped.Store(true)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	flips.Wait()
	t.Logf("%d writes succeeded, %d were refused", written.Load(), refused.Load())
	if names := teDirNames(t, outside); len(names) > 0 {
		t.Errorf("after %d writes, the folder outside the workspace holds %v", written.Load()+refused.Load(), names)
	}
}

// TestTextEditorRootThroughSymlink checks that a workspace root named
// through a symlink works: the os.Root is opened on the resolved folder.
func TestTextEditorRootThroughSymlink(t *testing.T) {
	t.Parallel()
	base := teRealDir(t, t.TempDir())
	real := filepath.Join(base, "real")
	teWriteFile(t, filepath.Join(real, "f.txt"), "a\nb\n")
	ws := filepath.Join(base, "link")
	if err := os.Symlink(real, ws); err != nil {
		t.Fatal(err)
	}
	te, a := texteditor.New(ws), teAgent(t, ws)
	for _, s := range []struct{ method, args, want string }{
		{"read", `{"path": "f.txt"}`, ws + "/f.txt: 2 lines"},
		{"patch", `{"path": "f.txt", "edits": [{"from": 2, "to": 2, "content": "B\n"}]}`, "1 edits applied"},
		{"write", `{"path": "sub/g.txt", "content": "g\n"}`, ws + "/sub/g.txt written: 1 lines"},
	} {
		if res := teCall(t, te, a, s.method, s.args); res.IsError || !strings.Contains(res.Text, s.want) {
			t.Fatalf("%s: IsError %v, want %q:\n%s", s.method, res.IsError, s.want, res.Text)
		}
	}
	if got := teReadFile(t, filepath.Join(real, "f.txt")); got != "a\nB\n" {
		t.Errorf("f.txt = %q", got)
	}
	if got := teReadFile(t, filepath.Join(real, "sub", "g.txt")); got != "g\n" {
		t.Errorf("sub/g.txt = %q", got)
	}
}
