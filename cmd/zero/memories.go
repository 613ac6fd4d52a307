package main

import (
	"context"
	"fmt"

	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/server"
)

// hostMemory lists and searches the memory of a workspace for the faces.
type hostMemory struct{ h *host }

func (m hostMemory) Memories(ctx context.Context, q server.MemoryQuery) ([]server.MemoryInfo, error) {
	a, err := m.h.app([]string{q.Workspace})
	if err != nil {
		return nil, err
	}
	if a.mem == nil {
		return nil, fmt.Errorf("memory: %w", server.ErrUnsupported)
	}
	return workspaceMemories(ctx, a.mem, a.ws, q.Query, q.Area, q.Limit)
}

// workspaceMemories lists the newest memories of ws and the user's, or
// with a query those most relevant to it (no threshold: the best first).
func workspaceMemories(ctx context.Context, svc *memory.Service, ws, query, area string, limit int) ([]server.MemoryInfo, error) {
	scopes := []string{ws, ""}
	var hits []memory.Hit
	if query == "" {
		ms, err := svc.List(scopes, area, limit)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			hits = append(hits, memory.Hit{Memory: m})
		}
	} else {
		filter := ""
		if area != "" {
			filter = fmt.Sprintf("area == %q", area)
		}
		var err error
		if hits, err = svc.Search(ctx, memory.Query{Text: query, Scopes: scopes, Limit: limit, Threshold: -1, Filter: filter}); err != nil {
			return nil, err
		}
	}
	out := make([]server.MemoryInfo, len(hits))
	for i, h := range hits {
		scope := "workspace"
		if h.Scope == "" {
			scope = "user"
		}
		out[i] = server.MemoryInfo{ID: h.ID, Area: h.Area, Text: h.Text, Scope: scope,
			Timestamp: h.Created.Local().Format(memory.TimeFormat), Source: h.Source, Relevance: h.Relevance, Meta: h.Meta}
	}
	return out, nil
}
