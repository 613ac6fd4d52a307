package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/memory"
)

// MaxMemoryBytes bounds the text of one saved memory: memories go back into
// prompts when they are recalled.
const MaxMemoryBytes = 32 << 10

// Memory holds Agent Zero's memory tools over a memory service: memory_save
// writes the workspace's memory; memory_load searches it and the user's;
// memory_delete and memory_forget change only the workspace's (the user's
// own memory is the user's to change, with `zero memory`).
type Memory struct {
	svc       *memory.Service
	workspace string   // the scope saves go to
	scopes    []string // searched, the workspace's first
}

// NewMemory returns the memory tools for a workspace.
func NewMemory(svc *memory.Service, workspace string) *Memory {
	return &Memory{svc: svc, workspace: workspace, scopes: []string{workspace, ""}}
}

// Tools returns memory_save, memory_load, memory_delete and memory_forget.
func (m *Memory) Tools() []loop.Tool {
	return []loop.Tool{memorySave{m}, memoryLoad{m}, memoryDelete{m}, memoryForget{m}}
}

type (
	memorySave   struct{ *Memory }
	memoryLoad   struct{ *Memory }
	memoryDelete struct{ *Memory }
	memoryForget struct{ *Memory }
)

func (memorySave) Name() string   { return "memory_save" }
func (memoryLoad) Name() string   { return "memory_load" }
func (memoryDelete) Name() string { return "memory_delete" }
func (memoryForget) Name() string { return "memory_forget" }

func (memorySave) Kind(string) string   { return "edit" }
func (memoryLoad) Kind(string) string   { return "search" }
func (memoryDelete) Kind(string) string { return "delete" }
func (memoryForget) Kind(string) string { return "delete" }

// All four keep the secrets' aliases (loop.AliasKeeper): a memory saved
// with §§secret(NAME) holds the alias, not the value, so the store and
// every face that lists memories never hold it; memory_load, memory_forget
// and memory_delete search and match what is stored, the aliases.
func (memorySave) KeepsAliases() bool   { return true }
func (memoryLoad) KeepsAliases() bool   { return true }
func (memoryDelete) KeepsAliases() bool { return true }
func (memoryForget) KeepsAliases() bool { return true }

// All four are described by Agent Zero's one memory prompt.
func (memorySave) PromptFile() string   { return "agent.system.tool.memory.md" }
func (memoryLoad) PromptFile() string   { return "agent.system.tool.memory.md" }
func (memoryDelete) PromptFile() string { return "agent.system.tool.memory.md" }
func (memoryForget) PromptFile() string { return "agent.system.tool.memory.md" }

// The memory tools' arguments, as their Execute read them from call.Args.
type (
	memorySaveArgs struct {
		Text string `json:"text" jsonschema:"what to remember"`
		Area string `json:"area,omitempty" jsonschema:"the memory area: main (the default), fragments, solutions or another short name"`
		// Further arguments are kept as the memory's metadata.
	}
	memoryLoadArgs struct {
		Query     string         `json:"query" jsonschema:"what to look for"`
		Threshold numberOrString `json:"threshold,omitempty" jsonschema:"the least similarity, from 0 to 1"`
		Limit     numberOrString `json:"limit,omitempty" jsonschema:"the most memories returned"`
		Filter    string         `json:"filter,omitempty" jsonschema:"a python expression over metadata, such as area=='solutions'"`
	}
	memoryDeleteArgs struct {
		IDs stringOrList `json:"ids" jsonschema:"the ids to delete, separated by commas, or a list of them"`
	}
	memoryForgetArgs struct {
		Query     string         `json:"query" jsonschema:"what the memories to forget are about"`
		Threshold numberOrString `json:"threshold,omitempty" jsonschema:"the least similarity, from 0 to 1"`
		Filter    string         `json:"filter,omitempty" jsonschema:"a python expression over metadata, such as area=='solutions'"`
	}
)

var (
	memorySaveSpecs   = specOf[memorySaveArgs](nil)
	memoryLoadSpecs   = specOf[memoryLoadArgs](nil)
	memoryDeleteSpecs = specOf[memoryDeleteArgs](nil)
	memoryForgetSpecs = specOf[memoryForgetArgs](nil)
)

func (memorySave) Specs() []loop.ToolSpec   { return memorySaveSpecs() }
func (memoryLoad) Specs() []loop.ToolSpec   { return memoryLoadSpecs() }
func (memoryDelete) Specs() []loop.ToolSpec { return memoryDeleteSpecs() }
func (memoryForget) Specs() []loop.ToolSpec { return memoryForgetSpecs() }

func failed(format string, a ...any) (loop.ToolResult, error) {
	return loop.ToolResult{IsError: true, Text: fmt.Sprintf(format, a...)}, nil
}

// reserved are metadata keys Zero sets itself.
var reserved = map[string]bool{"id": true, "area": true, "timestamp": true, "text": true, "source": true, "session": true, "agent": true, "workspace": true}

func (t memorySave) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	text, ok := call.Args["text"].(string)
	if !ok || strings.TrimSpace(text) == "" {
		return failed("memory_save needs the text to remember in tool_args.text (a string)")
	}
	if len(text) > MaxMemoryBytes {
		return failed("memory_save: the text is %d bytes; a memory holds at most %d. Save the essentials, or a file path where the rest is", len(text), MaxMemoryBytes)
	}
	area := memory.AreaMain
	if a, ok := call.Args["area"]; ok && a != nil && a != "" {
		s, ok := a.(string)
		if !ok || !validArea(s) {
			return failed("memory_save: tool_args.area must be a short name such as main, fragments or solutions")
		}
		area = s
	}
	// Further arguments are metadata, as in Agent Zero (kwargs).
	meta := map[string]any{}
	for k, v := range call.Args {
		if k == "text" || k == "area" || reserved[k] {
			continue
		}
		meta[k] = v
	}
	if raw, _ := json.Marshal(meta); len(raw) > 8<<10 {
		return failed("memory_save: the metadata is too large (%d bytes, at most 8192)", len(raw))
	}
	meta["source"] = "memory_save"
	meta["session"] = call.Agent.Session().ID()
	meta["agent"] = call.Agent.Number
	saved, err := t.svc.Save(ctx, memory.Memory{Scope: t.workspace, Area: area, Text: text, Meta: meta})
	if err != nil {
		return loop.ToolResult{}, fmt.Errorf("memory_save: %w", err)
	}
	return loop.ToolResult{Text: call.Agent.Prompt("fw.memory_saved.md", map[string]any{"memory_id": saved[0].ID})}, nil
}

func validArea(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// number reads a numeric argument the model may send as a number or a
// string; def when absent.
func number(args map[string]any, key string, def float64) (float64, error) {
	v, ok := args[key]
	if !ok || v == nil || v == "" {
		return def, nil
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("tool_args.%s must be a number", key)
}

// query reads the arguments memory_load and memory_forget share.
func (t *Memory) query(tool string, args map[string]any, withLimit bool) (memory.Query, error) {
	q, _ := args["query"].(string)
	if strings.TrimSpace(q) == "" {
		return memory.Query{}, fmt.Errorf("%s needs tool_args.query (a string: what to look for)", tool)
	}
	th, err := number(args, "threshold", memory.DefaultThreshold)
	if err != nil {
		return memory.Query{}, fmt.Errorf("%s: %w", tool, err)
	}
	if th < 0 || th > 1 {
		return memory.Query{}, fmt.Errorf("%s: tool_args.threshold is a similarity from 0 to 1, not %v", tool, th)
	}
	if th == 0 {
		th = -1 // 0 asks for everything
	}
	mq := memory.Query{Text: q, Scopes: t.scopes, Threshold: th}
	if withLimit {
		l, err := number(args, "limit", memory.DefaultLimit)
		if err != nil {
			return memory.Query{}, fmt.Errorf("%s: %w", tool, err)
		}
		mq.Limit = min(max(int(l), 1), 100)
	}
	if f, ok := args["filter"]; ok && f != nil {
		s, ok := f.(string)
		if !ok {
			return memory.Query{}, fmt.Errorf("%s: tool_args.filter must be a string, a condition such as area=='solutions'", tool)
		}
		mq.Filter = s
	}
	return mq, nil
}

func (t memoryLoad) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	q, err := t.query("memory_load", call.Args, true)
	if err != nil {
		return failed("%v", err)
	}
	hits, err := t.svc.Search(ctx, q)
	if err != nil {
		return failed("memory_load: %v", err)
	}
	if len(hits) == 0 {
		return loop.ToolResult{Text: call.Agent.Prompt("fw.memories_not_found.md", map[string]any{"query": q.Text})}, nil
	}
	ms := make([]memory.Memory, len(hits))
	for i, h := range hits {
		ms[i] = h.Memory
	}
	return loop.ToolResult{Text: memory.Format(ms)}, nil
}

func (t memoryDelete) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	var ids []string
	switch v := call.Args["ids"].(type) {
	case string:
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				ids = append(ids, strings.TrimSpace(s))
			}
		}
	}
	if len(ids) == 0 {
		return failed("memory_delete needs tool_args.ids: the ids to delete, separated by commas")
	}
	ids, others, err := t.own(ids)
	if err != nil {
		return loop.ToolResult{}, fmt.Errorf("memory_delete: %w", err)
	}
	gone, err := t.svc.Delete(ids)
	if err != nil {
		return loop.ToolResult{}, fmt.Errorf("memory_delete: %w", err)
	}
	text := call.Agent.Prompt("fw.memories_deleted.md", map[string]any{"memory_count": len(gone)})
	if others > 0 {
		text += fmt.Sprintf("\n%d of the ids are the user's own memories, which only the user changes (zero memory rm).", others)
	}
	return loop.ToolResult{Text: text}, nil
}

// own keeps the ids of the workspace's memories and counts the others.
func (t *Memory) own(ids []string) ([]string, int, error) {
	ms, err := t.svc.Get(ids)
	if err != nil {
		return nil, 0, err
	}
	var out []string
	others := 0
	for _, m := range ms {
		if m.Scope == t.workspace {
			out = append(out, m.ID)
		} else {
			others++
		}
	}
	return out, others, nil
}

func (t memoryForget) Execute(ctx context.Context, call *loop.ToolCall) (loop.ToolResult, error) {
	q, err := t.query("memory_forget", call.Args, false)
	if err != nil {
		return failed("%v", err)
	}
	q.Scopes, q.Strict = []string{t.workspace}, true
	gone, err := t.svc.Forget(ctx, q)
	if err != nil {
		return failed("memory_forget: %v", err)
	}
	return loop.ToolResult{Text: call.Agent.Prompt("fw.memories_deleted.md", map[string]any{"memory_count": len(gone)})}, nil
}
