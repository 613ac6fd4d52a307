package mcp

import (
	"cmp"
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// promptArg is the one argument a saved command's prompt takes: the text
// after its name, as in /review main.go ($ARGUMENTS, split for $1…$9).
const promptArg = "arguments"

// syncPrompts offers the saved commands of the face's workspace as MCP
// prompts, which clients show as slash commands (Claude Code's
// /mcp__zero__review). The folders are read again on every prompts/list
// and prompts/get, so a command added shows at once.
func (f *face) syncPrompts() {
	var ps []mcpserver.ServerPrompt
	for _, c := range f.mgr.Commands(f.promptRoots()) {
		desc := cmp.Or(c.Description, c.Name) + " (" + c.Source + ")"
		ps = append(ps, mcpserver.ServerPrompt{
			Prompt: mcp.NewPrompt(c.Name, mcp.WithPromptDescription(desc),
				mcp.WithArgument(promptArg, mcp.ArgumentDescription(cmp.Or(c.Hint, "what follows the command")))),
			Handler: f.getPrompt,
		})
	}
	f.srv.SetPrompts(ps...)
}

// promptRoots is the workspace whose commands are offered: the one zero
// mcp serves (its working directory, as MCP clients start it).
func (f *face) promptRoots() []string {
	if f.opts.DefaultWorkspace == "" {
		return nil
	}
	return []string{f.opts.DefaultWorkspace}
}

// getPrompt is a saved command's text with its arguments in place, as
// the user's message. The client's own agent runs it: a !`…` in the file
// was not run, and the text asks that agent to run it under its own
// permissions.
func (f *face) getPrompt(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	e, ok := f.mgr.ExpandCommand(f.promptRoots(), req.Params.Name, req.Params.Arguments[promptArg])
	if !ok {
		return nil, fmt.Errorf("%w: no command %q", mcpserver.ErrPromptNotFound, req.Params.Name)
	}
	return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(e.Text))}), nil
}
