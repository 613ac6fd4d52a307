package term

import (
	"strings"
	"testing"

	"github.com/zeroagent/zero/server"
)

// oneRequest is a broker holding one request.
type oneRequest struct {
	req    server.Request
	answer string // "", "yes", "always" or "no: reason"
}

func (o *oneRequest) Pending(string) []server.Request {
	if o.answer != "" {
		return nil
	}
	return []server.Request{o.req}
}

func (o *oneRequest) Approve(id string, always bool) error {
	if o.answer != "" || id != o.req.ID {
		return server.ErrNotFound
	}
	o.answer = map[bool]string{false: "yes", true: "always"}[always]
	return nil
}

func (o *oneRequest) Deny(id, reason string) error {
	if o.answer != "" || id != o.req.ID {
		return server.ErrNotFound
	}
	o.answer = "no: " + reason
	return nil
}

// askOnTerminal puts req to a terminal that types typed (nil: no
// terminal) and returns what the terminal showed and what was answered.
func askOnTerminal(t *testing.T, req server.Request, typed string, interactive ...bool) (shown, answer string) {
	t.Helper()
	req.ID, req.Session = "s/tool-1", "s"
	b := &oneRequest{req: req}
	var out strings.Builder
	a := newTermAsker(b, nil, strings.NewReader(typed), &out, len(interactive) == 0 || interactive[0], make(chan struct{}))
	a.ask(t.Context(), server.Event{Type: server.EventApprovalRequested, Session: "s", Text: req.ID})
	return out.String(), b.answer
}

// The terminal's answers: y approves, a approves for always, anything
// else (or nothing, stdin closed) refuses; without a terminal the call is
// refused and the person is told how to allow it.
func TestTermAskerAnswers(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string]string{"y\n": "yes", "YES\n": "yes", "a\n": "always", "n\n": "no: the user said no",
		"\n": "no: the user said no", "sure\n": "no: the user said no", "": "no: the user said no"} {
		shown, got := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "make"}, typed)
		if got != want || !strings.Contains(shown, "allow? [y]es, [a]lways for code_execution_tool, [N]o: ") {
			t.Errorf("typed %q: answer %q, want %q; shown %q", typed, got, want, shown)
		}
	}
	shown, got := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "make"}, "y\n", false)
	if !strings.HasPrefix(got, "no: ") || !strings.Contains(shown, "refused code_execution_tool: it needs approval and there is no terminal to ask on") {
		t.Errorf("no terminal: answer %q, shown %q", got, shown)
	}
}

// An approval question shows a command's bidirectional override as such:
// the command that runs is the one the person reads. The diff of a write
// does too.
func TestApprovalShowsFormatCharacters(t *testing.T) {
	t.Parallel()
	out, _ := askOnTerminal(t, server.Request{Tool: "code_execution_tool", Subject: "echo hi #\u202e ~ fr- mr"}, "n\n")
	if strings.ContainsRune(out, '\u202e') || !strings.Contains(out, `echo hi #\u202e ~ fr- mr`) {
		t.Errorf("the question hides the override: %q", out)
	}
	q := question(server.Request{Tool: "code_execution_tool", Subject: "echo hi #\u2067 x \u2069"})
	if strings.ContainsAny(q, "\u2067\u2069") || !strings.Contains(q, `\u2067`) {
		t.Errorf("the chat's question hides the isolate: %q", q)
	}
	ws := t.TempDir()
	preview := strings.Join(changePreview([]string{ws}, "text_editor", "write",
		map[string]any{"path": "a.sh", "content": "ok\nrm -rf ~ #\u202e hidden\n"}, nil, previewLines), "\n")
	if strings.ContainsRune(preview, '\u202e') || !strings.Contains(preview, `\u202e`) {
		t.Errorf("the change's preview hides the override: %q", preview)
	}
}

func TestChatLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		output bool // written as a command's output
		writes []string
		width  int
		lines  []string
		view   string
	}{
		{name: "split", writes: []string{"one\ntw", "o\nthr"}, lines: []string{"one", "two"}, view: "thr"},
		{name: "crlf across writes", output: true, writes: []string{"a\r", "\nb"}, width: 80, lines: []string{"a"}, view: "b"},
		{name: "progress", output: true, writes: []string{"10%\r50%\r100%\n"}, lines: []string{"100%"}},
		// Only a command's output rewrites its line: in the rest a carriage
		// return cannot hide what came before it.
		{name: "carriage return shown", writes: []string{"rm -rf x #\rls -la\n"}, lines: []string{"rm -rf x #␍ls -la"}},
		{name: "carriage return shown in the line in progress", writes: []string{"rm -rf x #\rls"}, width: 80, view: "rm -rf x #␍ls"},
		{name: "controls shown", writes: []string{"a\x08b\x00c\n"}, lines: []string{`a\x08b\x00c`}},
		{name: "style carried", writes: []string{dim + "x\ny" + reset + "\n"}, lines: []string{dim + "x" + reset, dim + "y" + reset}},
		{name: "cursor moves dropped", output: true, writes: []string{"a\x1b[2Kb\x1b]0;title\x07c\tz\n"}, lines: []string{"abc    z"}},
		{name: "wrapped", writes: []string{"aaa bbb ccc ddd"}, width: 8, lines: []string{"aaa bbb"}, view: "ccc ddd"},
		{name: "finished line wrapped", writes: []string{"aaa bbb ccc\n"}, width: 8, lines: []string{"aaa bbb", "ccc"}},
		{name: "escape cut between writes", writes: []string{"x\x1b[3", "1mred"}, width: 80, view: "x\x1b[31mred" + reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := chatLines{output: tc.output}
			var got []string
			for _, w := range tc.writes {
				l.Write([]byte(w))
				got = append(got, l.take(tc.width)...)
			}
			if strings.Join(got, "|") != strings.Join(tc.lines, "|") || l.view() != tc.view {
				t.Errorf("lines %q view %q, want %q and %q", got, l.view(), tc.lines, tc.view)
			}
		})
	}
}

// A resize ends the line in progress, cut at the new width, but for the
// word being written; its style goes on in the next line.
func TestChatLinesFinish(t *testing.T) {
	t.Parallel()
	var l chatLines
	l.Write([]byte(dim + "aaa bbb ccc dd"))
	if got := l.take(80); len(got) != 0 {
		t.Fatalf("lines %q before the resize", got)
	}
	got := l.finish(8)
	want := []string{dim + "aaa bbb" + reset, dim + "ccc" + reset}
	if strings.Join(got, "|") != strings.Join(want, "|") || l.view() != dim+"dd"+reset {
		t.Errorf("finish: lines %q view %q, want %q and %q", got, l.view(), want, dim+"dd"+reset)
	}
	l.Write([]byte("d eee\n"))
	if got := l.take(8); len(got) != 1 || got[0] != dim+"ddd eee"+reset {
		t.Errorf("the next line %q, want %q", got, dim+"ddd eee"+reset)
	}
	// A command's progress line ends whole.
	l = chatLines{output: true}
	l.Write([]byte("10%\r50% done"))
	if got := l.finish(80); len(got) != 1 || got[0] != "50% done" || l.view() != "" {
		t.Errorf("finish of output: lines %q view %q", got, l.view())
	}
	if got := l.finish(40); len(got) != 0 {
		t.Errorf("finish with no line in progress: lines %q", got)
	}
}
