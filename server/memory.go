package server

import (
	"context"
	"fmt"
)

// MemoryInfo is a memory as the faces show it.
type MemoryInfo struct {
	ID        string         `json:"id"`
	Area      string         `json:"area"`
	Text      string         `json:"text"`
	Scope     string         `json:"scope"` // "workspace" or "user"
	Timestamp string         `json:"timestamp"`
	Source    string         `json:"source,omitempty"` // the knowledge file of a chunk
	Relevance float64        `json:"relevance,omitempty"`
	Meta      map[string]any `json:"meta,omitempty"`
}

// MemoryQuery selects memories: the newest of a workspace's and the user's
// memory, or with Query, those most relevant to it.
type MemoryQuery struct {
	Workspace string // "" is the manager's workspace
	Query     string
	Area      string
	Limit     int // 0: 20
}

// Memory lists and searches the agent's memory (Options.Memory). Every
// face serves what it returns as it is (MCP zero://memories, LSP
// zero/memories, ACP /memory), so an implementation returns the texts,
// sources and metadata masked with the workspace's secrets: the memory
// tools store aliases, but a value can reach the store other ways (a
// knowledge file, a memory the user saved, one saved by an older Zero).
type Memory interface {
	Memories(ctx context.Context, q MemoryQuery) ([]MemoryInfo, error)
}

// Memories lists or searches the memory of q.Workspace (the manager's by
// default); ErrUnsupported when there is no memory (no store).
func (m *Manager) Memories(ctx context.Context, q MemoryQuery) ([]MemoryInfo, error) {
	if m.opts.Memory == nil {
		return nil, fmt.Errorf("memory: %w (sessions are not stored: ZERO_STORE=off or no store)", ErrUnsupported)
	}
	if q.Workspace == "" {
		q.Workspace = m.opts.Workspace
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	q.Limit = min(q.Limit, 200)
	return m.opts.Memory.Memories(ctx, q)
}
