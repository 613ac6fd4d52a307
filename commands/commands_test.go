package commands_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/zeroagent/zero/commands"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(cmds []commands.Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

func TestLoadClaudeCodeCommands(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".claude/commands/review.md"), "---\ndescription: Review a file\nargument-hint: [file] [focus]\nallowed-tools: Read, Bash(git diff:*)\n---\nReview $1 with a focus on $2.\n")
	write(t, filepath.Join(ws, ".claude/commands/git/commit.md"), "# Write a commit message\nfor $ARGUMENTS\n")
	write(t, filepath.Join(ws, ".claude/commands/notes.txt"), "not a command")
	write(t, filepath.Join(ws, ".zero/commands/review.md"), "Zero's own review: $ARGUMENTS")
	write(t, filepath.Join(ws, ".zero/commands/reset.md"), "would shadow /reset")
	cmds, warns := commands.Load([]string{"reset"},
		commands.Dir{Base: ws, Sub: ".zero/commands", Label: ".zero/commands"},
		commands.Dir{Base: ws, Sub: ".claude/commands", Label: ".claude/commands"},
		commands.Dir{Base: ws, Sub: ".gemini/none", Label: "absent"})
	if got, want := names(cmds), []string{"git:commit", "review"}; !slices.Equal(got, want) {
		t.Fatalf("commands = %v, want %v (warnings %v)", got, want, warns)
	}
	if len(warns) != 2 || !strings.Contains(warns[0].String(), "Zero's own") || !strings.Contains(warns[1].String(), "already .zero/commands/review.md") {
		t.Errorf("warnings = %v, want the shadowed /reset and the second review", warns)
	}
	commit, _ := commands.Find(cmds, "git:commit")
	if commit.Description != "Write a commit message" || commit.Source != ".claude/commands/git/commit.md" {
		t.Errorf("git:commit = %+v", commit)
	}
	review, _ := commands.Find(cmds, "review")
	if review.Body != "Zero's own review: $ARGUMENTS" {
		t.Errorf("the first folder should win: %+v", review)
	}

	cmds, _ = commands.Load(nil, commands.Dir{Base: ws, Sub: ".claude/commands", Label: ".claude/commands"})
	review, _ = commands.Find(cmds, "review")
	if review.Description != "Review a file" || review.ArgumentHint != "[file] [focus]" {
		t.Errorf("front matter = %+v", review)
	}
	if got := review.Expand(`main.go "error handling"`); got != "Review main.go with a focus on error handling." {
		t.Errorf("Expand = %q", got)
	}
	if got := review.Tools(); !slices.Equal(got, []string{"response", "text_editor", "code_execution_tool"}) {
		t.Errorf("Tools = %v", got)
	}
}

func TestExpand(t *testing.T) {
	c := commands.Command{Body: "Fix the bug."}
	if got := c.Expand("in parser.go"); got != "Fix the bug.\n\nARGUMENTS: in parser.go" {
		t.Errorf("arguments a body does not name follow it: %q", got)
	}
	if got := c.Expand(""); got != "Fix the bug." {
		t.Errorf("no arguments: %q", got)
	}
	c = commands.Command{Body: "All: $ARGUMENTS; first: $1; ninth: $9."}
	if got := c.Expand("a b"); got != "All: a b; first: a; ninth: ." {
		t.Errorf("Expand = %q", got)
	}
}

// A command cannot run anything on the host: Claude Code's !`cmd` becomes
// a request to the agent, which runs it (or not) in its sandbox under the
// approval policy.
func TestExpandRunsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	c := commands.Command{Body: "Status: !`touch " + marker + "`\nGo on."}
	got := c.Expand("")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command's !`…` ran on the host")
	}
	if strings.Contains(got, "!`") || !strings.Contains(got, "(the output of `touch "+marker+"`)") || !strings.Contains(got, "Zero does not run them") {
		t.Errorf("Expand = %q", got)
	}
}

// allowed-tools only narrows: an unknown name adds nothing, an empty list
// leaves only the answer, and no field means no narrowing.
func TestToolsOnlyNarrow(t *testing.T) {
	for _, tc := range []struct {
		fm   string
		want []string
	}{
		{"", nil},
		{"allowed-tools:\n", nil},
		{"allowed-tools: []\n", []string{"response"}},
		{"allowed-tools: Everything, sudo, *, Bash(rm -rf /)\n", []string{"response", "sudo", "code_execution_tool"}}, // sudo: no tool of Zero's, so it matches none
		{"allowed-tools: [\"*\", \"All\"]\n", []string{"response"}},
		{"allowed-tools: [mcp__github__create_issue, text_editor]\n", []string{"response", "github.create_issue", "text_editor"}},
	} {
		c, err := commands.Parse([]byte("---\n" + tc.fm + "---\nDo it.\n"))
		if err != nil {
			t.Fatalf("%q: %v", tc.fm, err)
		}
		if got := c.Tools(); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%q: Tools = %#v, want %#v", tc.fm, got, tc.want)
		}
	}
}

func TestParseProblems(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"---\ndescription: x\n", "no closing ---"},
		{"---\ndescription: [a\n  nested: x\n---\nbody", "malformed front matter"},
		{"---\ndescription: {a: b}\n---\nbody", "must be a single value"},
		{"---\ndescription: x\n---\n", "no prompt"},
	} {
		if _, err := commands.Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

// A cloned repository's commands folder: a link out (file and folder), a
// FIFO, a huge file, and a great many files are named or bounded, never
// followed, waited on or read whole.
func TestHostileFolder(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.md"), "the user's secret")
	ws := t.TempDir()
	dir := filepath.Join(ws, ".claude/commands")
	write(t, filepath.Join(dir, "ok.md"), "fine")
	write(t, filepath.Join(dir, "huge.md"), strings.Repeat("x", commands.MaxFile+1))
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(dir, "a/b/c/d.md")
	write(t, deep, "too deep")
	cmds, warns := commands.Load(nil, commands.Dir{Base: ws, Sub: ".claude/commands", Label: ".claude/commands"})
	if got := names(cmds); !slices.Equal(got, []string{"ok"}) {
		t.Errorf("commands = %v, want only ok", got)
	}
	all := ""
	for _, w := range warns {
		all += w.String() + "\n"
	}
	for _, want := range []string{"fifo.md: it is not a regular file", "huge.md: it is larger than 64 KiB", "leak.md: it is a link that leads out"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	for _, c := range cmds {
		if strings.Contains(c.Body, "secret") {
			t.Error("a link out was read")
		}
	}

	// The commands folder itself a link out of the workspace.
	ws2 := t.TempDir()
	os.MkdirAll(filepath.Join(ws2, ".claude"), 0o755)
	if err := os.Symlink(outside, filepath.Join(ws2, ".claude/commands")); err != nil {
		t.Fatal(err)
	}
	cmds, warns = commands.Load(nil, commands.Dir{Base: ws2, Sub: ".claude/commands", Label: ".claude/commands"})
	if len(cmds) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Reason, "leads out") {
		t.Errorf("a folder linked out: %v %v", names(cmds), warns)
	}

	// Many files: bounded.
	ws3 := t.TempDir()
	for i := range commands.MaxCommands + 5 {
		write(t, filepath.Join(ws3, "c", strings.Repeat("n", 1)+string(rune('a'+i%26))+strings.Repeat("x", i/26)+".md"), "p")
	}
	cmds, warns = commands.Load(nil, commands.Dir{Base: ws3, Sub: "c", Label: "c"})
	if len(cmds) != commands.MaxCommands || len(warns) == 0 || !strings.Contains(warns[len(warns)-1].Reason, "only its first") {
		t.Errorf("%d commands, warnings %v", len(cmds), warns)
	}
}

func TestHugeArguments(t *testing.T) {
	c := commands.Command{Body: "$ARGUMENTS"}
	if got := c.Expand(strings.Repeat("a ", commands.MaxArgs)); len(got) > commands.MaxArgs {
		t.Errorf("expanded %d bytes", len(got))
	}
}

// Gemini CLI's commands: .toml with description and prompt, {{args}},
// and !{command}, which is not run.
func TestGeminiCommands(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	write(t, filepath.Join(ws, ".gemini/commands/git/commit.toml"), "description = \"Write a commit message\"\nprompt = \"\"\"\nThe staged diff: !{touch "+marker+"}\nWrite a message for {{args}}.\n\"\"\"\n")
	write(t, filepath.Join(ws, ".gemini/commands/plain.toml"), "prompt = \"Explain the code.\"\n")
	write(t, filepath.Join(ws, ".gemini/commands/bad.toml"), "prompt = [\n")
	cmds, warns := commands.Load(nil, commands.Dir{Base: ws, Sub: ".gemini/commands", Label: ".gemini/commands"})
	if got := names(cmds); !slices.Equal(got, []string{"git:commit", "plain"}) {
		t.Fatalf("commands = %v (%v)", got, warns)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "bad.toml: malformed TOML") {
		t.Errorf("warnings = %v", warns)
	}
	commit, _ := commands.Find(cmds, "git:commit")
	got := commit.Expand("the parser fix")
	if commit.Description != "Write a commit message" || !strings.HasPrefix(got, "The staged diff: (the output of `touch "+marker+"`)\nWrite a message for the parser fix.") {
		t.Errorf("git:commit = %+v\nexpanded: %q", commit, got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command's !{…} ran")
	}
	plain, _ := commands.Find(cmds, "plain")
	if got := plain.Expand("main.go"); got != "Explain the code.\n\nmain.go" {
		t.Errorf("plain = %q", got)
	}
}

// A folder of a great many entries that are no commands is looked through
// only so far, and says so; arguments are cut on a character boundary.
func TestHugeFolderAndArguments(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, "c")
	write(t, filepath.Join(dir, "a.md"), "first")
	for i := range commands.MaxEntries + 10 {
		write(t, filepath.Join(dir, "junk", "x"+strings.Repeat("y", i%7)+string(rune('a'+i%26))+"-"+strings.Repeat("z", i/182)+".txt"), "")
	}
	cmds, warns := commands.Load(nil, commands.Dir{Base: ws, Sub: "c", Label: "c"})
	if got := names(cmds); !slices.Equal(got, []string{"a"}) {
		t.Errorf("commands = %v", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Reason, "entries are looked at") {
		t.Errorf("warnings = %v", warns)
	}
	c := commands.Command{Body: "$ARGUMENTS"}
	got := c.Expand(strings.Repeat("é", commands.MaxArgs))
	if len(got) > commands.MaxArgs || !utf8.ValidString(got) {
		t.Errorf("expanded %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
