package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/tools"
)

// askPolicy asks before everything that acts: a tool is asked about unless
// it is one of Zero's own that only reads or changes nothing but the
// agent's memory. A tool Zero does not know (an MCP server's, a user's
// executable, one added later) is asked about.
var askPolicy = server.Policy{Default: server.Ask, Rules: []server.Rule{
	{Tool: "*.*", Decision: server.Ask}, // an MCP server's tool (server.tool), whatever its name
	{Tool: "response", Decision: server.Auto},
	{Tool: "text_editor:read", Decision: server.Auto},
	{Tool: "call_subordinate", Decision: server.Auto}, // the subordinate's own calls are asked about
	{Tool: "memory_load", Decision: server.Auto},
	{Tool: "memory_save", Decision: server.Auto},
	{Tool: "memory_delete", Decision: server.Auto},
	{Tool: "memory_forget", Decision: server.Auto},
	{Tool: "behaviour_adjustment", Decision: server.Auto},
	{Tool: "skills_tool", Decision: server.Auto},
	{Tool: "search_engine", Decision: server.Auto},
	{Tool: "document_query", Decision: server.Auto},
	{Tool: "mcp_resources", Decision: server.Auto},
}}

// termGate asks the person at the terminal before a call the policy wants
// asked about: y runs it, a runs it and every later call of that tool, n
// or anything else refuses it. Without a terminal nobody can answer, so
// such calls are refused with a message that says how to allow them.
type termGate struct {
	policy      server.Policy
	in          *bufio.Reader // nil: no terminal
	out         io.Writer
	interactive bool

	mu     sync.Mutex
	always map[string]bool
}

func newTermGate(p server.Policy, in io.Reader, out io.Writer, interactive bool) *termGate {
	g := &termGate{policy: p, out: out, interactive: interactive, always: map[string]bool{}}
	if interactive {
		g.in = bufio.NewReader(in)
	}
	return g
}

// Gate implements loop.Gate.
func (g *termGate) Gate(ctx context.Context, p *loop.ToolBeforePayload) error {
	subject := server.Subject(p.Args)
	if g.policy.Decide(p.ToolName, p.Method, subject) != server.Ask {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.always[p.ToolName] {
		return nil
	}
	name := p.ToolName
	if p.Method != "" {
		name += ":" + p.Method
	}
	if !g.interactive {
		p.Block = "Refused: this call needs the user's approval and zero run has no terminal to ask on."
		fmt.Fprintf(g.out, "zero: refused %s: it needs approval and there is no terminal to ask on (use --approval auto, or run it in the Docker sandbox)\n", name)
		return nil
	}
	fmt.Fprintf(g.out, "\nzero: the agent wants to run %s:\n  %s\n", reviewable(name), strings.ReplaceAll(reviewable(loop.Clip(subject, 2000)), "\n", "\n  "))
	var roots []string
	if p.Agent != nil && p.Agent.Session() != nil && p.Agent.Session().Workspace() != "" {
		roots = []string{p.Agent.Session().Workspace()}
	}
	for _, l := range changePreview(roots, p.ToolName, p.Method, p.Args, nil, previewLines) {
		fmt.Fprintln(g.out, "  "+l)
	}
	fmt.Fprintf(g.out, "allow? [y]es, [a]lways for %s, [N]o: ", reviewable(name))
	answer := make(chan string, 1)
	go func() { // ends with the next line typed, or when stdin closes
		line, _ := g.in.ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case a := <-answer:
		switch a {
		case "y", "yes":
			return nil
		case "a", "always":
			g.always[p.ToolName] = true
			return nil
		}
		p.Block = "The user refused this call."
		return nil
	}
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
	d, msg, ok := tools.PreviewChange(roots, method, args)
	if !ok {
		return []string{style("(what it would change cannot be shown: "+visible(loop.Clip(msg, 300))+")", dim)}
	}
	name := d.Path
	for _, r := range roots {
		if rel, err := filepath.Rel(r, d.Path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			name = rel
			break
		}
	}
	name = reviewable(name)
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
		l = reviewable(loop.Clip(l, 500))
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
