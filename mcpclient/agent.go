package mcpclient

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/loop"
)

// Source is a Pool as the agents' loop.ToolSource: the servers' tools,
// filtered by a profile's allow and deny lists (Allow, may be nil).
type Source struct {
	Pool  *Pool
	Allow func(name string) bool
	// OnError, when set, is told why a server's tools are missing.
	OnError func(error)
}

// Tools lists the servers' tools for the monologue to come (starting the
// servers the first time).
func (s Source) Tools(ctx context.Context) []loop.Tool {
	list, errs := s.Pool.List(ctx)
	if s.OnError != nil {
		for _, err := range errs {
			s.OnError(err)
		}
	}
	out := make([]loop.Tool, 0, len(list)+1)
	for _, t := range list {
		if s.Allow == nil || s.Allow(t.FullName()) {
			out = append(out, agentTool{pool: s.Pool, t: t})
		}
	}
	if len(s.Pool.servers) > 0 && (s.Allow == nil || s.Allow("mcp_resources")) {
		out = append(out, resourceTool{pool: s.Pool})
	}
	return out
}

// maxErrorText is the most of a failed call's error the model is shown.
const maxErrorText = 16 << 10

// agentTool is one server tool as a tool of the agent.
type agentTool struct {
	pool *Pool
	t    Tool
}

func (a agentTool) Name() string { return a.t.FullName() }

// Kind is "other": what a server's tool does is the server's business.
func (agentTool) Kind(string) string { return "other" }

// ClaimsReadOnly is the server's readOnlyHint: plan mode takes it at its
// word (the user chose the server); approval policies go by the kind.
func (a agentTool) ClaimsReadOnly() bool { return a.t.ReadOnly }

// Specs: the server's input schema (checked when listed: a schema that
// cannot be offered is any object) and its description.
func (a agentTool) Specs() []loop.ToolSpec {
	return []loop.ToolSpec{{Description: a.t.Description, Parameters: a.t.InputSchema}}
}

func (a agentTool) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	res, err := a.pool.CallWith(ctx, a.t.Server, a.t.Name, call.Args, func(line string) {
		call.Progress(ctx, line+"\n") // the server's progress, as the tool's live output
	})
	if err != nil {
		if ctx.Err() != nil {
			return loop.ToolResult{}, ctx.Err()
		}
		// The server failing is something the model can work around. Its
		// error may quote what it sent (a body, a message) at length.
		return loop.ToolResult{IsError: true, Text: cut.Clip(fmt.Sprintf("the MCP tool %s failed: %v", a.t.FullName(), err), maxErrorText)}, nil
	}
	return loop.ToolResult{Text: res.Text, IsError: res.IsError, Images: res.Images}, nil
}

// Register adds _12_mcp_prompt (system_prompt): the MCP tools the agent
// has, with their descriptions and input schemas, in Agent Zero's format,
// rendered with agent.system.mcp_tools.md.
func Register(r *hooks.Registry) {
	r.Register(hooks.SystemPrompt, "_12_mcp_prompt", mcpPrompt)
}

func mcpPrompt(_ context.Context, p hooks.Payload) error {
	sp, ok := p.(*loop.SystemPromptPayload)
	if !ok || sp.Agent == nil || sp.Agent.NativeCalls() {
		return nil // with native calls the request offers them as functions
	}
	var b strings.Builder
	server := ""
	for _, t := range sp.Agent.FoundTools() {
		at, ok := t.(agentTool)
		if !ok {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## \"Remote (MCP Server) Agent Tools\" available:\n\n")
		}
		if at.t.Server != server {
			server = at.t.Server
			fmt.Fprintf(&b, "### %s\n", server)
		}
		fmt.Fprintf(&b, "\n### %s:\n%s\n\n#### Input schema for tool_args:\n%s\n\n", at.t.FullName(), strings.TrimSpace(at.t.Description), at.t.InputSchema)
	}
	if b.Len() == 0 {
		return nil
	}
	text := sp.Agent.Prompt("agent.system.mcp_tools.md", map[string]any{"tools": strings.TrimSpace(b.String())})
	*sp.System = append(*sp.System, text)
	return nil
}
