package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/zeroagent/zero/memory"
	"github.com/zeroagent/zero/secrets"
	"github.com/zeroagent/zero/server"
)

// hostMemory lists and searches the memory of a workspace for the faces,
// masked with the secrets of the workspace's app (see workspaceMemories).
type hostMemory struct{ h *Host }

func (m hostMemory) Memories(ctx context.Context, q server.MemoryQuery) ([]server.MemoryInfo, error) {
	if m.h.Store == nil {
		return nil, fmt.Errorf("memory: %w", server.ErrUnsupported)
	}
	// A workspace an editor works in has its app, with its embedding model;
	// any other is read by keywords, without building one (a trust scan and
	// a knowledge import just to read), and masked with the default
	// workspace's secrets (the user's secrets.env and Zero's own keys).
	m.h.mu.Lock()
	a := m.h.apps[q.Workspace]
	def := m.h.apps[m.h.Workspace]
	m.h.mu.Unlock()
	svc := memory.New(memory.Options{Store: m.h.Store})
	if a != nil && a.Memory != nil {
		svc = a.Memory
	}
	var set *secrets.Set
	if a != nil {
		set = a.Secrets()
	} else if def != nil {
		set = def.Secrets()
	}
	return WorkspaceMemories(ctx, svc, set, q.Workspace, q.Query, q.Area, q.Limit)
}

// WorkspaceMemories lists the newest memories of ws and the user's, or
// with a query those most relevant to it (no threshold: the best first).
// Their texts, sources and metadata are masked with set: a memory saved
// with §§secret(NAME) keeps the alias (the memory tools get aliases, see
// loop.AliasKeeper), but a value can still reach the store another way (a
// knowledge file, `zero memory save`, a memory saved by an older Zero),
// and no face shows it.
func WorkspaceMemories(ctx context.Context, svc *memory.Service, set *secrets.Set, ws, query, area string, limit int) ([]server.MemoryInfo, error) {
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
		m := MaskMemory(set, h.Memory)
		out[i] = server.MemoryInfo{ID: m.ID, Area: m.Area, Text: m.Text, Scope: scope,
			Timestamp: m.Created.Local().Format(memory.TimeFormat), Source: m.Source, Relevance: h.Relevance, Meta: m.Meta}
	}
	return out, nil
}

// MaskMemory returns m with every secret value in its text, source and
// metadata replaced by its alias.
func MaskMemory(set *secrets.Set, m memory.Memory) memory.Memory {
	if set == nil {
		return m
	}
	m.Text, m.Source = set.Mask(m.Text), set.Mask(m.Source)
	if len(m.Meta) > 0 {
		if meta, ok := set.MaskValue(m.Meta).(map[string]any); ok {
			m.Meta = meta
		}
	}
	return m
}

// MemorySecrets are the secrets `zero memory` masks what it prints with:
// those of the workspace's app (the user's secrets.env, the trusted
// workspace's, Zero's own keys); the user's file and the model key alone
// when the configuration does not load.
func MemorySecrets(ws string) *secrets.Set {
	a, err := NewAppAt(ws, nil, nil, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		set, _ := secrets.Load(filepath.Join(UserConfigDir(), "secrets.env"))
		for _, name := range []string{"OPENAI_API_KEY", "ZERO_MCP_TOKEN"} {
			set = set.With(name, os.Getenv(name))
		}
		return set
	}
	defer a.Close()
	return a.Secrets()
}
