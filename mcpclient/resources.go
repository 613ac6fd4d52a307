package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	mcpc "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

// client returns a started server's client, starting it if needed.
func (p *Pool) client(ctx context.Context, server string) (*mcpc.Client, error) {
	p.mu.Lock()
	c := p.conns[server]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if c == nil {
		var names []string
		for _, s := range p.servers {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("no MCP server %q; the servers are: %s", server, strings.Join(names, ", "))
	}
	cl, err := p.ensureRetry(ctx, c, true)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// Catalog lists a server's resources and prompts, as text for the model.
func (p *Pool) Catalog(ctx context.Context, server string) (string, error) {
	cl, err := p.client(ctx, server)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	var b strings.Builder
	if res, err := cl.ListResources(ctx, mcp.ListResourcesRequest{}); err == nil {
		fmt.Fprintf(&b, "## resources of %s\n", server)
		for _, r := range res.Resources {
			fmt.Fprintf(&b, "- %s: %s %s\n", r.URI, r.Name, strings.TrimSpace(r.Description))
		}
	}
	if res, err := cl.ListPrompts(ctx, mcp.ListPromptsRequest{}); err == nil {
		fmt.Fprintf(&b, "## prompts of %s\n", server)
		for _, pr := range res.Prompts {
			var args []string
			for _, a := range pr.Arguments {
				args = append(args, a.Name)
			}
			fmt.Fprintf(&b, "- %s(%s): %s\n", pr.Name, strings.Join(args, ", "), strings.TrimSpace(pr.Description))
		}
	}
	if b.Len() == 0 {
		return fmt.Sprintf("%s offers no resources and no prompts", server), nil
	}
	return cut.Clip(b.String(), MaxResult), nil
}

// ReadResource reads a resource of a server: its text, and its pictures
// (blobs of an image type) loaded as Images, as a tool result's (see
// resultOf).
func (p *Pool) ReadResource(ctx context.Context, server, uri string) (Result, error) {
	cl, err := p.client(ctx, server)
	if err != nil {
		return Result{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := cl.ReadResource(cctx, req)
	if err != nil {
		return Result{}, err
	}
	pics := &pictures{ctx: ctx, source: cut.Clip(uri, 256)}
	var parts []string
	for _, c := range res.Contents {
		if line := resourceText(pics, c); line != "" {
			parts = append(parts, line)
		}
	}
	if line := pics.tail(); line != "" {
		parts = append(parts, line)
	}
	return Result{Text: cut.Clip(strings.Join(parts, "\n"), MaxResult), Images: pics.images}, nil
}

// GetPrompt fills a prompt of a server with arguments, as text.
func (p *Pool) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	cl, err := p.client(ctx, server)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := cl.GetPrompt(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range res.Messages {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, promptText(m.Content))
	}
	return clipResult(b.String()), nil
}

// promptText is a prompt message's content as text: a text as it is, an
// embedded text resource's text, anything else named by its kind (a
// prompt's text carries no picture).
func promptText(c mcp.Content) string {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text
	case mcp.EmbeddedResource:
		switch r := v.Resource.(type) {
		case mcp.TextResourceContents:
			return fmt.Sprintf("[resource %s]\n%s", cut.Clip(r.URI, 256), r.Text)
		case mcp.BlobResourceContents:
			return fmt.Sprintf("[resource %s: %s, %d bytes of base64, not shown]", cut.Clip(r.URI, 256), clean(r.MIMEType), len(r.Blob))
		}
	case mcp.ImageContent:
		return fmt.Sprintf("[image, %s, not shown]", clean(v.MIMEType))
	case mcp.AudioContent:
		return fmt.Sprintf("[audio, %s, not shown]", clean(v.MIMEType))
	case mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s]", cut.Clip(v.URI, 256))
	}
	return "[content of an unknown kind]"
}

// resourceTool is mcp_resources: the servers' resources and prompts.
type resourceTool struct{ pool *Pool }

func (resourceTool) Name() string       { return "mcp_resources" }
func (resourceTool) Kind(string) string { return "read" }
func (resourceTool) PromptFile() string { return "agent.system.tool.mcp_resources.md" }

// The arguments of mcp_resources' methods.
type (
	resourcesListArgs struct {
		Server string `json:"server" jsonschema:"the MCP server"`
	}
	resourcesReadArgs struct {
		Server string `json:"server" jsonschema:"the MCP server"`
		URI    string `json:"uri" jsonschema:"the resource, as mcp_resources:list names it"`
	}
	resourcesPromptArgs struct {
		Server    string         `json:"server" jsonschema:"the MCP server"`
		Name      string         `json:"name" jsonschema:"the prompt, as mcp_resources:list names it"`
		Arguments map[string]any `json:"arguments,omitempty" jsonschema:"the prompt's arguments by name"`
	}
)

var resourceSpecs = sync.OnceValue(func() []loop.ToolSpec {
	return []loop.ToolSpec{
		{Method: "list", Parameters: argsSchema[resourcesListArgs]()},
		{Method: "read", Parameters: argsSchema[resourcesReadArgs]()},
		{Method: "prompt", Parameters: argsSchema[resourcesPromptArgs]()},
	}
})

// Specs are the schemas of list, read and prompt.
func (resourceTool) Specs() []loop.ToolSpec { return resourceSpecs() }

// argsSchema is the schema jsonschema-go generates for arguments of type
// T (a field without omitempty is required), allowing other properties:
// the tool ignores them. A type it cannot describe is a programmer error.
func argsSchema[T any]() json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	s.AdditionalProperties = nil
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

func (t resourceTool) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	str := func(k string) string { s, _ := call.Args[k].(string); return s }
	server := str("server")
	var text string
	var images []llm.Image
	var err error
	switch call.Method {
	case "", "list":
		if server == "" {
			var names []string
			for _, s := range t.pool.servers {
				names = append(names, s.Name)
			}
			return loop.ToolResult{IsError: true, Text: "mcp_resources:list needs tool_args.server, one of: " + strings.Join(names, ", ")}, nil
		}
		text, err = t.pool.Catalog(ctx, server)
	case "read":
		if server == "" || str("uri") == "" {
			return loop.ToolResult{IsError: true, Text: "mcp_resources:read needs tool_args.server and tool_args.uri"}, nil
		}
		var res Result
		res, err = t.pool.ReadResource(ctx, server, str("uri"))
		text, images = res.Text, res.Images
	case "prompt":
		args := map[string]string{}
		if m, ok := call.Args["arguments"].(map[string]any); ok {
			for k, v := range m {
				args[k] = fmt.Sprint(v)
			}
		}
		if server == "" || str("name") == "" {
			return loop.ToolResult{IsError: true, Text: "mcp_resources:prompt needs tool_args.server and tool_args.name (and arguments)"}, nil
		}
		text, err = t.pool.GetPrompt(ctx, server, str("name"), args)
	default:
		return loop.ToolResult{IsError: true, Text: "mcp_resources has the methods list, read and prompt"}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return loop.ToolResult{}, ctx.Err()
		}
		return loop.ToolResult{IsError: true, Text: fmt.Sprintf("mcp_resources: %v", err)}, nil
	}
	return loop.ToolResult{Text: text, Images: images}, nil
}
