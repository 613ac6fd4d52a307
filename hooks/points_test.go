package hooks

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPoints(t *testing.T) {
	t.Parallel()
	want := []string{
		"agent_init", "monologue_start", "message_loop_start", "message_loop_prompts_before",
		"system_prompt", "message_loop_prompts_after", "before_main_llm_call", "chat_model_call_before",
		"reasoning_stream_chunk", "reasoning_stream", "response_stream_chunk", "response_stream",
		"chat_model_call_after", "reasoning_stream_end", "response_stream_end", "hist_add_before",
		"tool_execute_before", "tool_output_update", "tool_execute_after", "hist_add_tool_result",
		"message_loop_end", "monologue_end", "process_chain_end", "util_model_call_before",
		"util_model_call_after", "error_format",
	}
	got := Points()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Points() (-want +got):\n%s", diff)
	}
	got[0] = "changed"
	if Points()[0] != AgentInit {
		t.Errorf("Points() returned the package's own slice")
	}
	for _, p := range want {
		if !IsPoint(p) {
			t.Errorf("IsPoint(%q) = false", p)
		}
	}
	if IsPoint("respons_stream") {
		t.Errorf("IsPoint(typo) = true")
	}
}

func TestRegisterPanics(t *testing.T) {
	t.Parallel()
	noop := func(_ context.Context, _ Payload) error { return nil }
	tests := []struct {
		name        string
		point, ext  string
		fn          Func
		preRegister bool
	}{
		{name: "duplicate", point: SystemPrompt, ext: "_10_main", fn: noop, preRegister: true},
		{name: "empty point", point: "", ext: "_10_main", fn: noop},
		{name: "empty name", point: SystemPrompt, ext: "", fn: noop},
		{name: "hidden name", point: SystemPrompt, ext: ".x", fn: noop},
		{name: "path in name", point: SystemPrompt, ext: "a/b", fn: noop},
		{name: "disabled name", point: SystemPrompt, ext: "_10_x.disabled", fn: noop},
		{name: "nil fn", point: SystemPrompt, ext: "_10_main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			if tt.preRegister {
				r.Register(tt.point, tt.ext, tt.fn)
			}
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, %q) did not panic", tt.point, tt.ext)
				}
			}()
			r.Register(tt.point, tt.ext, tt.fn)
		})
	}
}
