package hooks

import "slices"

// Agent Zero's extension point names. The engine calls them in the order [Points] lists.
const (
	AgentInit                = "agent_init"
	MonologueStart           = "monologue_start"
	MessageLoopStart         = "message_loop_start"
	MessageLoopPromptsBefore = "message_loop_prompts_before"
	SystemPrompt             = "system_prompt"
	MessageLoopPromptsAfter  = "message_loop_prompts_after"
	BeforeMainLLMCall        = "before_main_llm_call"
	ChatModelCallBefore      = "chat_model_call_before"
	ChatModelCallAfter       = "chat_model_call_after"
	ReasoningStreamChunk     = "reasoning_stream_chunk"
	ReasoningStream          = "reasoning_stream"
	ReasoningStreamEnd       = "reasoning_stream_end"
	ResponseStreamChunk      = "response_stream_chunk"
	ResponseStream           = "response_stream"
	ResponseStreamEnd        = "response_stream_end"
	HistAddBefore            = "hist_add_before"
	ToolExecuteBefore        = "tool_execute_before"
	ToolOutputUpdate         = "tool_output_update"
	ToolExecuteAfter         = "tool_execute_after"
	HistAddToolResult        = "hist_add_tool_result"
	MessageLoopEnd           = "message_loop_end"
	MonologueEnd             = "monologue_end"
	ProcessChainEnd          = "process_chain_end"
	UtilModelCallBefore      = "util_model_call_before"
	UtilModelCallAfter       = "util_model_call_after"
	ErrorFormat              = "error_format"
)

// points follows Agent Zero's call sites (agent.py): construction, then one monologue iteration, where
// the stream points fire while the chat model call is in flight and so come before
// chat_model_call_after; the utility-model and error points are off the main path and come last.
var points = []string{
	AgentInit,
	MonologueStart,
	MessageLoopStart,
	MessageLoopPromptsBefore,
	SystemPrompt,
	MessageLoopPromptsAfter,
	BeforeMainLLMCall,
	ChatModelCallBefore,
	ReasoningStreamChunk,
	ReasoningStream,
	ResponseStreamChunk,
	ResponseStream,
	ChatModelCallAfter,
	ReasoningStreamEnd,
	ResponseStreamEnd,
	HistAddBefore,
	ToolExecuteBefore,
	ToolOutputUpdate,
	ToolExecuteAfter,
	HistAddToolResult,
	MessageLoopEnd,
	MonologueEnd,
	ProcessChainEnd,
	UtilModelCallBefore,
	UtilModelCallAfter,
	ErrorFormat,
}

// Points returns every Agent Zero extension point name, in Agent Zero's call order. The slice is a
// fresh copy.
func Points() []string { return slices.Clone(points) }

// IsPoint reports whether name is one of Agent Zero's extension points.
func IsPoint(name string) bool { return slices.Contains(points, name) }
