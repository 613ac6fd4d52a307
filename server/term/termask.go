package term

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/termsafe"
	"github.com/zeroagent/zero/tools/texteditor"
)

// termAsker puts a session's approval requests (the broker's, as every
// face gets them) to the person at the terminal: y runs the call, a runs
// it and every later call the same rule asks about, n or anything else
// refuses it. Without a terminal nobody can answer, so such calls are
// refused with a message that says how to allow them.
type termAsker struct {
	approvals server.Approvals
	roots     []string // the session's workspace, which a change's preview is read in
	out       io.Writer
	in        io.Reader // nil: no terminal
	ended     <-chan struct{}

	once  sync.Once
	lines chan string // the lines typed, read by one goroutine

	// questions are the session's questions (a server's, see
	// questions.go); noQuestions says why none can be asked ("" when
	// they can be, on a terminal).
	questions   server.Questions
	noQuestions string
}

// newTermAsker asks on in and out; ended is closed when the run ended, so
// that nothing waits for an answer any more.
func newTermAsker(a server.Approvals, roots []string, in io.Reader, out io.Writer, interactive bool, ended <-chan struct{}) *termAsker {
	t := &termAsker{approvals: a, roots: roots, out: out, ended: ended}
	if interactive {
		t.in = in
	}
	return t
}

// ask answers the request that e, an approval_requested event, announces,
// unless it was answered already; a question_requested event's question
// is asked by askQuestion.
func (t *termAsker) ask(ctx context.Context, e server.Event) {
	if e.Type == server.EventQuestionRequested {
		t.askQuestion(ctx, e)
		return
	}
	if t.approvals == nil || e.Type != server.EventApprovalRequested {
		return
	}
	i := slices.IndexFunc(t.approvals.Pending(e.Session), func(r server.Request) bool { return r.ID == e.Text })
	if i < 0 {
		return
	}
	req := t.approvals.Pending(e.Session)[i]
	name := req.Tool
	if req.Method != "" {
		name += ":" + req.Method
	}
	if t.in == nil {
		fmt.Fprintf(t.out, "zero: refused %s: it needs approval and there is no terminal to ask on (use --approval auto, or run it in the Docker sandbox)\n", termsafe.Reviewable(name))
		_ = t.approvals.Deny(req.ID, "it needs the user's approval, and zero run has no terminal to ask on")
		return
	}
	fmt.Fprintf(t.out, "\nzero: the agent wants to run %s:\n  %s\n", termsafe.Reviewable(name), strings.ReplaceAll(termsafe.Reviewable(cut.Clip(req.Subject, 2000)), "\n", "\n  "))
	for _, l := range changePreview(t.roots, req.Tool, req.Method, req.Args, nil, previewLines) {
		fmt.Fprintln(t.out, "  "+l)
	}
	fmt.Fprintf(t.out, "allow? [y]es, [a]lways for %s, [N]o: ", termsafe.Reviewable(name))
	var err error
	select {
	case <-ctx.Done():
		return
	case <-t.ended: // the run ended: the broker cancelled the request
		return
	case a, ok := <-t.typed():
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case ok && (a == "y" || a == "yes"):
			err = t.approvals.Approve(req.ID, false)
		case ok && (a == "a" || a == "always"):
			err = t.approvals.Approve(req.ID, true)
		default: // no, anything else, or stdin closed
			err = t.approvals.Deny(req.ID, "the user said no")
		}
	}
	if err != nil { // the run ended meanwhile
		fmt.Fprintln(t.out, "zero: (the request was no longer waiting)")
	}
}

// typed are the lines typed on the terminal (an approval's answer, a
// question's), read by one goroutine that ends when stdin closes: the
// process owns stdin. It is closed at the end of stdin.
func (t *termAsker) typed() <-chan string {
	t.once.Do(func() {
		t.lines = make(chan string)
		go func() {
			r := bufio.NewReader(t.in)
			for {
				line, err := r.ReadString('\n')
				if line != "" || err == nil {
					t.lines <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					close(t.lines)
					return
				}
			}
		}()
	})
	return t.lines
}

// previewLines is how many lines of a change an approval question shows.
const previewLines = 40

// changePreview is what a text_editor:write or :patch call would change,
// for the person asked to approve it: a unified diff against the file as
// it is now, or the content of a file it would create, cut after max
// lines, saying how much was cut; nil for any other call. style colors
// the lines ("-" red, "+" green, "@@" cyan); nil leaves them plain. The
// texts are the model's: their control and format characters (a
// bidirectional override that makes code read other than it runs) show.
func changePreview(roots []string, tool, method string, args map[string]any, style func(string, ...string) string, max int) []string {
	if tool != "text_editor" || (method != "write" && method != "patch") {
		return nil
	}
	if style == nil {
		style = func(s string, _ ...string) string { return s }
	}
	d, msg, ok := texteditor.PreviewChange(roots, method, args)
	if !ok {
		return []string{style("(what it would change cannot be shown: "+termsafe.Visible(cut.Clip(msg, 300))+")", dim)}
	}
	name := d.Path
	for _, r := range roots {
		if rel, err := filepath.Rel(r, d.Path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			name = rel
			break
		}
	}
	name = termsafe.Reviewable(name)
	var head, body []string
	switch {
	case d.OldText == nil:
		body = strings.SplitAfter(d.NewText, "\n")
		if body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
		head = []string{style(fmt.Sprintf("new file %s, %s:", name, linesCount(len(body))), bold)}
		for i, l := range body {
			body[i] = "+" + l
		}
	case *d.OldText == d.NewText:
		return []string{style(fmt.Sprintf("(no change: %s has this content already)", name), dim)}
	default:
		diff := udiff.Unified(name, name, *d.OldText, d.NewText)
		body = strings.SplitAfter(diff, "\n")
		if body[len(body)-1] == "" {
			body = body[:len(body)-1]
		}
	}
	out := head
	shown := body
	if len(body) > max {
		shown = body[:max]
	}
	for _, l := range shown {
		l = strings.TrimSuffix(l, "\n")
		l = termsafe.Reviewable(cut.Clip(l, 500))
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			l = style(l, bold)
		case strings.HasPrefix(l, "@@"):
			l = style(l, cyan)
		case strings.HasPrefix(l, "+"):
			l = style(l, green)
		case strings.HasPrefix(l, "-"):
			l = style(l, red)
		}
		out = append(out, l)
	}
	if n := len(body) - len(shown); n > 0 {
		out = append(out, style(fmt.Sprintf("… %s more not shown (%d of %d shown)", linesCount(n), len(shown), len(body)), dim))
	}
	return out
}

// linesCount says how many lines, for people.
func linesCount(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}
