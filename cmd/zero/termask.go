package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
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
	fmt.Fprintf(g.out, "\nzero: the agent wants to run %s:\n  %s\nallow? [y]es, [a]lways for %s, [N]o: ", visible(name), strings.ReplaceAll(visible(loop.Clip(subject, 2000)), "\n", "\n  "), visible(name))
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
