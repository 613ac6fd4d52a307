package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/server"
)

const memoriesURI = "zero://memories"

// memoriesResource is zero://memories.
func (f *face) memoriesResource() mcpserver.ServerResource {
	return mcpserver.ServerResource{
		Resource: mcp.NewResource(memoriesURI, "Zero memories",
			mcp.WithResourceDescription("The newest memories of the agent for this workspace and the user's own (JSON: id, area, text, scope, timestamp, source)."),
			mcp.WithMIMEType("application/json")),
		Handler: f.readMemories,
	}
}

// readMemories serves zero://memories (the newest) and
// zero://memories/search/{query} (the most relevant to query).
func (f *face) readMemories(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	q := server.MemoryQuery{Limit: 50}
	if rest, ok := strings.CutPrefix(req.Params.URI, memoriesURI+"/search/"); ok {
		query, err := url.PathUnescape(rest)
		if err != nil || strings.TrimSpace(query) == "" {
			return nil, fmt.Errorf("%w: %s (the query must be URL-encoded text)", mcpserver.ErrResourceNotFound, req.Params.URI)
		}
		q.Query, q.Limit = query, 20
	} else if req.Params.URI != memoriesURI {
		return nil, fmt.Errorf("%w: %s", mcpserver.ErrResourceNotFound, req.Params.URI)
	}
	list, err := f.mgr.Memories(ctx, q)
	if errors.Is(err, server.ErrUnsupported) {
		return nil, fmt.Errorf("%w: %v", mcpserver.ErrResourceNotFound, err)
	} else if err != nil {
		return nil, err
	}
	if list == nil {
		list = []server.MemoryInfo{}
	}
	raw, err := json.MarshalIndent(map[string]any{"memories": list}, "", "  ")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(raw)}}, nil
}
