package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zeroagent/zero/llm"
)

// Native tool calls are the second way a model calls tools, beside Agent
// Zero's JSON object in the reply's text: the request offers the tools as
// functions with JSON Schemas, and the answer's tool_calls name them. The
// engine keeps one history for both: a native call is an AI message with
// its calls and a result message per call with the call's id, and each
// request renders the history for the protocol it speaks (forNative,
// forJSON), so a session can change protocol between runs and history
// compression may summarise across calls.

// modelToolSupport is implemented by a model that remembers whether its
// endpoint took native tool calls (*llm.Client).
type modelToolSupport interface {
	ToolsRefused() bool
	RefuseTools()
}

// nativeCalls reports whether the agent's next request offers native tool
// calls: always with ProtocolNative, never with ProtocolJSON, and with
// ProtocolAuto unless the endpoint refused them for this model before.
func (a *Agent) nativeCalls() bool {
	switch a.setup.ToolProtocol {
	case ProtocolNative:
		return true
	case ProtocolJSON:
		return false
	}
	if ts, ok := a.setup.Model.(modelToolSupport); ok && ts.ToolsRefused() {
		return false
	}
	return !a.toolsRefused.Load()
}

// Functions are the functions the agent's requests offer with native
// calls, as sent (none with the JSON protocol): with [Agent.SystemPrompt],
// what the model is told. Call it between runs.
func (a *Agent) Functions(ctx context.Context) []llm.ToolSpec {
	if a.loop == nil {
		a.native.Store(a.nativeCalls())
		a.refreshTools(ctx)
	}
	if !a.native.Load() {
		return nil
	}
	return slices.Clone(a.tools().specs)
}

// NativeCalls reports whether the agent's turn offers the model native
// tool calls; its tools are then described in the request's functions, not
// in the system prompt.
func (a *Agent) NativeCalls() bool { return a.native.Load() }

// protocol is the tool_protocol prompt var of the agent's turn.
func (a *Agent) protocol() string {
	if a.native.Load() {
		return ProtocolNative
	}
	return ProtocolJSON
}

// toolTable is what one monologue offers as native functions: the specs,
// and the function names both ways. Zero's names may hold characters the
// APIs refuse (text_editor:read, an MCP server's "server.tool"): each is
// mapped to a valid name, kept unique, and back.
type toolTable struct {
	specs []llm.ToolSpec
	toAPI map[string]string // "text_editor:read" -> "text_editor_read"
	byAPI map[string]string // and back
	// size is the bytes of the specs as sent, tokens their tokens (0
	// until counted).
	size, tokens int
	// names are the tools it was made of; fresh is set while it is known
	// to be the monologue's (see refreshTools).
	names []string
	fresh bool
	// planning: it was made for plan mode (only what changes nothing).
	planning bool
}

// tokenCount is the tokens the functions take in a request, counted once.
func (t *toolTable) tokenCount(count func(string) int) int {
	if t.tokens == 0 && len(t.specs) > 0 {
		var b strings.Builder
		for _, s := range t.specs {
			b.WriteString(s.Name + "\n" + s.Description + "\n")
			b.Write(s.Parameters)
		}
		t.tokens = count(b.String()) + len(t.specs)*messageOverhead
	}
	return t.tokens
}

// permissive is the schema of a tool that declares none.
var permissive = json.RawMessage(`{"type":"object","additionalProperties":true}`)

// tools builds the agent's table for the monologue, once; a monologue with
// the same tools as the last keeps its table.
func (a *Agent) tools() *toolTable {
	if a.table != nil && a.table.fresh {
		return a.table
	}
	names, planning := a.toolNames(), a.session.Planning()
	if a.table != nil && slices.Equal(a.table.names, names) && a.table.planning == planning {
		a.table.fresh = true
		return a.table
	}
	t := &toolTable{toAPI: map[string]string{}, byAPI: map[string]string{}, names: names, planning: planning, fresh: true}
	type entry struct {
		raw  string
		spec ToolSpec
		tool string
	}
	var entries []entry
	for _, name := range names {
		tool := a.tool(name)
		specs := []ToolSpec{{}}
		if sp, ok := tool.(Specified); ok {
			if s := sp.Specs(); len(s) > 0 {
				specs = s
			}
		}
		for _, s := range specs {
			raw := name
			if s.Method != "" {
				raw += ":" + s.Method
			}
			// In plan mode a method that changes something is not offered
			// (text_editor:write), but its name is still known, so that a
			// call of it is refused for what it is.
			t.add(raw)
			if !planning || ChangesNothing(tool, s.Method) {
				entries = append(entries, entry{raw: raw, spec: s, tool: name})
			}
		}
	}
	described := map[string]string{} // prompt file -> the API name of the function that has it whole
	for _, e := range entries {
		params := e.spec.Parameters
		if len(params) == 0 {
			params = permissive
		}
		desc := e.spec.Description
		if desc == "" {
			file := a.promptFile(e.tool)
			desc = a.toolDescription(e.tool, file)
			// A tool's methods share its prompt, as the memory tools share
			// theirs: the first of their functions carries it whole, the
			// others their own lines of it and where the rest is, so the
			// request does not carry it four times.
			if first, ok := described[file]; ok {
				desc = sharedDescription(desc, e.raw, first)
			} else {
				described[file] = t.toAPI[e.raw]
			}
		}
		spec := llm.ToolSpec{Name: t.toAPI[e.raw], Description: t.rename(desc), Parameters: params}
		t.specs = append(t.specs, spec)
		t.size += len(spec.Name) + len(spec.Description) + len(spec.Parameters) + messageOverhead
	}
	a.table = t
	return t
}

// add gives raw its API name: its characters outside [a-zA-Z0-9_-] become
// '_', it is cut to 64 bytes, and a name taken already gets a number.
func (t *toolTable) add(raw string) {
	if _, ok := t.toAPI[raw]; ok {
		return
	}
	base := apiName(raw)
	name := base
	for n := 2; ; n++ {
		if _, taken := t.byAPI[name]; !taken {
			break
		}
		suffix := "_" + strconv.Itoa(n)
		name = base[:min(len(base), 64-len(suffix))] + suffix
	}
	t.toAPI[raw], t.byAPI[name] = name, raw
}

func apiName(raw string) string {
	b := []byte(raw)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "tool"
	}
	return string(b)
}

// api is the API name of a tool as Zero names it; one the table does not
// have (a tool gone since the call was made) is made valid the same way.
func (t *toolTable) api(raw string) string {
	if n, ok := t.toAPI[raw]; ok {
		return n
	}
	return apiName(raw)
}

// rename writes the API names for Zero's in a description
// ("text_editor:read" becomes "text_editor_read"), longest first.
func (t *toolTable) rename(text string) string {
	var pairs []string
	raws := make([]string, 0, len(t.toAPI))
	for raw, api := range t.toAPI {
		if raw != api {
			raws = append(raws, raw)
		}
	}
	slices.SortFunc(raws, func(a, b string) int { return len(b) - len(a) })
	for _, raw := range raws {
		pairs = append(pairs, raw, t.toAPI[raw])
	}
	if len(pairs) == 0 {
		return text
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// fenced matches a fenced example (~~~json or ```json … and its end).
var fenced = regexp.MustCompile("(?ms)^[ \t]*(~~~|```)[a-z]*[ \t]*\n.*?^[ \t]*(~~~|```)[ \t]*$\n?")

// exampleLead matches the line that introduces examples.
var exampleLead = regexp.MustCompile(`(?mi)^[ \t]*(usage|examples?|example usage)[ \t]*:?[ \t]*\n`)

// promptFile is the prompt file of a tool: agent.system.tool.<name>.md, or
// the one it names.
func (a *Agent) promptFile(name string) string {
	if pf, ok := a.tool(name).(PromptFiler); ok {
		return pf.PromptFile()
	}
	return "agent.system.tool." + name + ".md"
}

// toolDescription is the description of a tool for native calls: its
// prompt file (agent.system.tool.<name>.md or the file it names), only its
// own "### name" part when the file describes several tools, without the
// examples written in the JSON protocol.
//
// It is made once per tool and file for the agent's life: its profile's
// prompts and its vars do not change.
func (a *Agent) toolDescription(name, file string) string {
	key := name + "\x00" + file
	if text, ok := a.descs[key]; ok {
		return text
	}
	text, err := a.Render(file, nil)
	if err != nil {
		text = ""
	}
	text = section(text, name)
	text = fenced.ReplaceAllString(text, "")
	text = exampleLead.ReplaceAllString(text, "")
	text = strings.TrimSpace(text)
	if a.descs == nil {
		a.descs = map[string]string{}
	}
	a.descs[key] = text
	return text
}

// sharedDescription is the description of a function whose prompt another
// function has whole: the lines that name it, and where the rest is.
func sharedDescription(desc, raw, first string) string {
	var b strings.Builder
	for _, line := range strings.Split(desc, "\n") {
		if strings.Contains(line, raw) {
			b.WriteString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "-")) + "\n")
		}
	}
	fmt.Fprintf(&b, "the description of %s says how this tool works", first)
	return b.String()
}

// section returns the "### name" part of a prompt file that describes
// several tools (memory_save, memory_load, … in one file), without its
// heading; a file with one heading, or none for name, is returned whole,
// without its first heading.
func section(text, name string) string {
	parts := []string{""} // parts[0]: before the first heading
	heads := []string{""}
	for _, line := range strings.SplitAfter(text, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "### "); ok {
			heads = append(heads, strings.Trim(strings.TrimSpace(h), ":`*"))
			parts = append(parts, "")
			continue
		}
		parts[len(parts)-1] += line
	}
	if i := slices.Index(heads[1:], name); i >= 0 && len(heads) > 2 {
		return parts[0] + parts[i+1] // what the file says of all its tools, and of this one
	}
	return strings.Join(parts, "")
}

// callsText writes content and calls as Agent Zero's tool requests, one
// JSON object per call, for a model that gets no native calls.
func callsText(content string, calls []HistoryCall) string {
	var b strings.Builder
	b.WriteString(content)
	for _, c := range calls {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		args := c.Args
		if !json.Valid([]byte(args)) {
			args = "{}"
		}
		b.WriteString(`{"tool_name": `)
		b.WriteString(jsonString(c.Name))
		b.WriteString(`, "tool_args": `)
		b.WriteString(args)
		b.WriteByte('}')
	}
	return b.String()
}

// jsonString is s as a JSON string; a tool's name most often needs no
// escape.
func jsonString(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s)
			return string(raw)
		}
	}
	return `"` + s + `"`
}

// resultText is a native call's result as the JSON protocol shows it: the
// message Zero keeps is already Agent Zero's {"tool_name", "tool_result"}.
func resultText(m llm.Message) string { return m.Content }

// forJSON renders a history for a request without native calls: calls
// become Agent Zero's tool requests in the text, results user messages,
// and messages of one role in a row are merged, as History merges them.
// A history without native calls is returned as it is.
func forJSON(msgs []llm.Message, join func(a, sep, b string) string) []llm.Message {
	if !slices.ContainsFunc(msgs, func(m llm.Message) bool { return len(m.ToolCalls) > 0 || m.Role == llm.Tool }) {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case len(m.ToolCalls) > 0:
			calls := make([]HistoryCall, len(m.ToolCalls))
			for i, c := range m.ToolCalls {
				calls[i] = HistoryCall{ID: c.ID, Name: c.Name, Args: c.Arguments}
			}
			m = llm.Message{Role: llm.Assistant, Content: callsText(m.Content, calls)}
		case m.Role == llm.Tool:
			m = llm.Message{Role: llm.User, Content: resultText(m), Images: m.Images}
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != llm.System {
			out[n-1].Content = join(out[n-1].Content, "\n\n", m.Content)
			if len(m.Images) > 0 {
				out[n-1].Images = slices.Concat(out[n-1].Images, m.Images)
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// forNative renders a history for a request with native calls: a call
// message keeps its calls (with their API names) only when a result for
// each follows it, and a result only right after its call; what a
// summary, a cancel or the JSON protocol left apart is written as text, so
// the API never sees a call without its result or a result without its
// call. Messages that need no change are not copied: a history whose calls
// need no renaming is returned as it is.
func forNative(msgs []llm.Message, t *toolTable, join func(a, sep, b string) string) []llm.Message {
	var out []llm.Message
	copied := false
	// put emits msgs[i] as m; changed says m is not msgs[i] as it is.
	put := func(i int, m llm.Message, changed bool) {
		if !copied {
			if !changed {
				return // out is msgs[:i+1]
			}
			out = append(make([]llm.Message, 0, len(msgs)), msgs[:i]...)
			copied = true
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role && len(out[n-1].ToolCalls) == 0 && len(m.ToolCalls) == 0 &&
			m.Role != llm.Tool && m.Role != llm.System {
			out[n-1].Content = join(out[n-1].Content, "\n\n", m.Content)
			if len(m.Images) > 0 {
				out[n-1].Images = slices.Concat(out[n-1].Images, m.Images)
			}
			return
		}
		out = append(out, m)
	}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch {
		case len(m.ToolCalls) > 0:
			j := i + 1 // msgs[i+1:j] are results of its calls, each once
			for j < len(msgs) && msgs[j].Role == llm.Tool && answers(m.ToolCalls, msgs[i+1:j], msgs[j].ToolCallID) {
				j++
			}
			if j-i-1 != len(m.ToolCalls) {
				calls := make([]HistoryCall, len(m.ToolCalls))
				for k, c := range m.ToolCalls {
					calls[k] = HistoryCall{ID: c.ID, Name: c.Name, Args: c.Arguments}
				}
				put(i, llm.Message{Role: llm.Assistant, Content: callsText(m.Content, calls)}, true)
				continue // its results, if any, follow as text
			}
			renamed := false
			for _, c := range m.ToolCalls {
				renamed = renamed || t.api(c.Name) != c.Name
			}
			if renamed {
				calls := make([]llm.ToolCall, len(m.ToolCalls))
				for k, c := range m.ToolCalls {
					calls[k] = llm.ToolCall{ID: c.ID, Name: t.api(c.Name), Arguments: c.Arguments}
				}
				m = llm.Message{Role: llm.Assistant, Content: m.Content, ToolCalls: calls}
			}
			put(i, m, renamed)
			for k := i + 1; k < j; k++ {
				put(k, msgs[k], false)
			}
			i = j - 1
		case m.Role == llm.Tool:
			put(i, llm.Message{Role: llm.User, Content: resultText(m), Images: m.Images}, true)
		default:
			put(i, m, false)
		}
	}
	if !copied {
		return msgs
	}
	return out
}

// answers reports whether id is one of calls' ids that none of results
// answered yet.
func answers(calls []llm.ToolCall, results []llm.Message, id string) bool {
	for _, r := range results {
		if r.ToolCallID == id {
			return false
		}
	}
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}
