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
	if m.h.store == nil {
		return nil, fmt.Errorf("memory: %w", server.ErrUnsupported)
	}
	// A workspace an editor works in has its app, with its embedding model;
	// any other is read by keywords, without building one (a trust scan and
	// a knowledge import just to read).
	m.h.mu.Lock()
	a := m.h.apps[q.Workspace]
	m.h.mu.Unlock()
	svc := memory.New(memory.Options{Store: m.h.store})
	if a != nil && a.mem != nil {
		svc = a.mem
	}
	return workspaceMemories(ctx, svc, q.Workspace, q.Query, q.Area, q.Limit)
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
