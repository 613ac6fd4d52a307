package loop

import (
	"slices"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
)

func plainJoin(a, sep, b string) string { return a + sep + b }

// TestForNativePairsCallsAndResults: whatever compression, a cancel or the
// JSON protocol left of a call and its results, the request pairs every
// call with a result and every result with its call.
func TestForNativePairsCallsAndResults(t *testing.T) {
	call := func(ids ...string) llm.Message {
		m := llm.Message{Role: llm.Assistant, Content: "say"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: id, Name: "text_editor:read", Arguments: `{"path":"a"}`})
		}
		return m
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.Tool, ToolCallID: id, Content: `{"tool_name": "text_editor:read", "tool_result": "r` + id + `"}`}
	}
	user := llm.Message{Role: llm.User, Content: "summary of older messages"}
	tt := &toolTable{toAPI: map[string]string{}, byAPI: map[string]string{}}
	tt.add("text_editor:read")
	for _, tc := range []struct {
		name string
		in   []llm.Message
		want []string // role, and "+calls" for a message that keeps its calls
	}{
		{"paired", []llm.Message{user, call("1", "2"), result("2"), result("1")}, []string{"user", "assistant+calls", "tool", "tool"}},
		{"result lost to a summary", []llm.Message{user, call("1", "2"), result("1")}, []string{"user", "assistant", "user"}},
		{"call lost to a summary", []llm.Message{user, result("1"), call("2"), result("2")}, []string{"user", "assistant+calls", "tool"}},
		{"a message between", []llm.Message{call("1"), user, result("1")}, []string{"assistant", "user"}},
		{"a result twice", []llm.Message{call("1"), result("1"), result("1")}, []string{"assistant+calls", "tool", "user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := forNative(tc.in, tt, plainJoin)
			var got []string
			for _, m := range out {
				r := string(m.Role)
				if len(m.ToolCalls) > 0 {
					r += "+calls"
					if m.ToolCalls[0].Name != "text_editor_read" {
						t.Errorf("call name %q is not the API's", m.ToolCalls[0].Name)
					}
				}
				got = append(got, r)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("roles = %v, want %v", got, tc.want)
			}
			joined := ""
			for _, m := range out {
				joined += m.Content
			}
			if strings.Count(joined, "r1")+strings.Count(joined, "r2") < strings.Count(fmtAll(tc.in), "tool_result") {
				t.Errorf("a result's text was lost: %q", joined)
			}
		})
	}
}

func fmtAll(msgs []llm.Message) string {
	s := ""
	for _, m := range msgs {
		s += m.Content
	}
	return s
}

// TestForJSONWritesCallsAsRequests: without native calls, a call is Agent
// Zero's tool request in the text and a result a user message, merged
// with its neighbours as the history merges.
func TestForJSONWritesCallsAsRequests(t *testing.T) {
	in := []llm.Message{
		{Role: llm.User, Content: "read a"},
		{Role: llm.Assistant, Content: "Reading.", ToolCalls: []llm.ToolCall{{ID: "1", Name: "text_editor:read", Arguments: `{"path":"a"}`}}},
		{Role: llm.Tool, ToolCallID: "1", Content: `{"tool_name": "text_editor:read", "tool_result": "alpha"}`},
		{Role: llm.User, Content: "warning"},
	}
	out := forJSON(in, plainJoin)
	if len(out) != 3 || out[1].Content != "Reading.\n"+`{"tool_name": "text_editor:read", "tool_args": {"path":"a"}}` ||
		out[2].Role != llm.User || !strings.Contains(out[2].Content, "alpha") || !strings.HasSuffix(out[2].Content, "warning") {
		t.Errorf("out = %+v", out)
	}
	plain := []llm.Message{{Role: llm.User, Content: "x"}}
	if got := forJSON(plain, plainJoin); &got[0] != &plain[0] {
		t.Error("a history without native calls was copied")
	}
}

// TestToolTableNames: Zero's names become names every API takes, unique,
// and back.
func TestToolTableNames(t *testing.T) {
	tt := &toolTable{toAPI: map[string]string{}, byAPI: map[string]string{}}
	for _, raw := range []string{"text_editor:read", "text_editor_read", "github.search_issues", strings.Repeat("x", 80), "", "ünïcode"} {
		tt.add(raw)
	}
	seen := map[string]bool{}
	for raw, api := range tt.toAPI {
		if !validAPIName(api) || seen[api] || tt.byAPI[api] != raw {
			t.Errorf("%q -> %q (valid %v, seen %v, back %q)", raw, api, validAPIName(api), seen[api], tt.byAPI[api])
		}
		seen[api] = true
	}
	if tt.toAPI["text_editor:read"] != "text_editor_read" || tt.toAPI["text_editor_read"] != "text_editor_read_2" {
		t.Errorf("names = %v", tt.toAPI)
	}
}

func validAPIName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// TestToolDescriptionWithoutJSONExamples: a tool prompt becomes its
// function's description without the JSON protocol's examples, and a file
// describing several tools gives each its own part.
func TestToolDescriptionWithoutJSONExamples(t *testing.T) {
	text := "## memory tools\nshared words\n### memory_load\nloads\nusage:\n~~~json\n{\"tool_name\": \"memory_load\"}\n~~~\n### memory_save\nsaves\n"
	got := fenced.ReplaceAllString(exampleLead.ReplaceAllString(section(text, "memory_load"), ""), "")
	if strings.Contains(got, "tool_name") || strings.Contains(got, "saves") || !strings.Contains(got, "loads") || !strings.Contains(got, "shared words") {
		t.Errorf("description = %q", got)
	}
}
