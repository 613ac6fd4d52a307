package loop

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zeroagent/zero/llm"
)

// The payloads of the extension points. Built-in extensions type-assert the
// payload they get; script extensions see ScriptInput as JSON, with secrets
// masked, and may answer with the changes their point allows (ApplyScript).

// agentInfo is the part of every script payload that says who is calling.
type agentInfo struct {
	Session   string `json:"session"`
	Agent     int    `json:"agent"`
	Profile   string `json:"profile"`
	Workspace string `json:"workspace"`
}

func (a *Agent) info() agentInfo {
	return agentInfo{Session: a.session.id, Agent: a.Number, Profile: a.Profile, Workspace: a.session.cfg.Workspace}
}

// decodeAnswer unmarshals a script answer into dst, rejecting fields the
// point does not allow.
func decodeAnswer(answer json.RawMessage, allowed ...string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(answer, &m); err != nil {
		return nil, fmt.Errorf("answer is not a JSON object: %w", err)
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			if len(allowed) == 0 {
				return nil, fmt.Errorf("this extension point accepts no changes, got %q", k)
			}
			return nil, fmt.Errorf("unknown field %q (this point accepts %s)", k, strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

func field[T any](m map[string]json.RawMessage, key string, dst *T) (bool, error) {
	raw, ok := m[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return false, fmt.Errorf("field %q: %w", key, err)
	}
	return true, nil
}

// AgentPayload is the payload of agent_init and process_chain_end.
type AgentPayload struct {
	Agent    *Agent
	Response string // process_chain_end: the final answer, if any
}

func (p *AgentPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Response string `json:"response,omitempty"`
	}{p.Agent.info(), p.Response})
}

func (p *AgentPayload) ApplyScript(answer json.RawMessage) error {
	_, err := decodeAnswer(answer)
	return err
}

// LoopPayload is the payload of the points that pass loop_data:
// monologue_start/end, message_loop_start/end, message_loop_prompts_before/
// after, before_main_llm_call, reasoning_stream_end, response_stream_end.
// Scripts may add extras: {"extras_temporary": {...}, "extras_persistent": {...}}.
type LoopPayload struct {
	Agent *Agent
	Loop  *LoopData
}

func (p *LoopPayload) ScriptInput() any {
	ld := p.Loop
	return p.Agent.scriptInput(struct {
		agentInfo
		Iteration        int            `json:"iteration"`
		IterationNo      int            `json:"iteration_no"`
		UserMessage      string         `json:"user_message"`
		LastResponse     string         `json:"last_response,omitempty"`
		ExtrasTemporary  map[string]any `json:"extras_temporary"`
		ExtrasPersistent map[string]any `json:"extras_persistent"`
	}{p.Agent.info(), ld.Iteration, IterationNo(p.Agent), ld.UserMessage, ld.LastResponse,
		ld.ExtrasTemporary.Map(), ld.ExtrasPersistent.Map()})
}

func (p *LoopPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "extras_temporary", "extras_persistent")
	if err != nil {
		return err
	}
	for key, dst := range map[string]*Extras{"extras_temporary": p.Loop.ExtrasTemporary, "extras_persistent": p.Loop.ExtrasPersistent} {
		var add map[string]any
		if _, err := field(m, key, &add); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(add)) {
			dst.Set(k, add[k])
		}
	}
	return nil
}

// SystemPromptPayload is the payload of system_prompt. Scripts may append
// parts: {"append": ["..."]}.
type SystemPromptPayload struct {
	Agent  *Agent
	Loop   *LoopData
	System *[]string
}

func (p *SystemPromptPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Iteration int      `json:"iteration"`
		System    []string `json:"system"`
	}{p.Agent.info(), p.Loop.Iteration, *p.System})
}

func (p *SystemPromptPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "append")
	if err != nil {
		return err
	}
	var add []string
	if _, err := field(m, "append", &add); err != nil {
		return err
	}
	*p.System = append(*p.System, add...)
	return nil
}

// ModelCallPayload is the payload of chat_model_call_before (Messages may be
// replaced) and chat_model_call_after (Response and Reasoning set).
type ModelCallPayload struct {
	Agent     *Agent
	Messages  []llm.Message
	Response  string
	Reasoning string
	after     bool
}

func (p *ModelCallPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Messages  []llm.Message `json:"messages"`
		Response  string        `json:"response,omitempty"`
		Reasoning string        `json:"reasoning,omitempty"`
	}{p.Agent.info(), p.Messages, p.Response, p.Reasoning})
}

func (p *ModelCallPayload) ApplyScript(answer json.RawMessage) error {
	if p.after {
		_, err := decodeAnswer(answer)
		return err
	}
	m, err := decodeAnswer(answer, "messages")
	if err != nil {
		return err
	}
	var msgs []llm.Message
	if ok, err := field(m, "messages", &msgs); err != nil || !ok {
		return err
	}
	for i, msg := range msgs {
		switch msg.Role {
		case llm.System, llm.User, llm.Assistant:
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	p.Messages = msgs
	return nil
}

// StreamChunkPayload is the payload of reasoning_stream_chunk and
// response_stream_chunk. Scripts may rewrite the chunk: {"chunk": "..."}.
type StreamChunkPayload struct {
	Agent *Agent
	Loop  *LoopData
	Chunk string
	Full  string // everything streamed before this chunk, plus the chunk
}

func (p *StreamChunkPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Chunk string `json:"chunk"`
		Full  string `json:"full"`
	}{p.Agent.info(), p.Chunk, p.Full})
}

func (p *StreamChunkPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "chunk")
	if err != nil {
		return err
	}
	var chunk string
	if ok, err := field(m, "chunk", &chunk); err != nil || !ok {
		return err
	}
	p.Full = strings.TrimSuffix(p.Full, p.Chunk) + chunk
	p.Chunk = chunk
	return nil
}

// StreamPayload is the payload of reasoning_stream and response_stream: the
// full text so far and, for the response, the tool request parsed so far.
type StreamPayload struct {
	Agent  *Agent
	Loop   *LoopData
	Text   string
	Parsed map[string]any
}

func (p *StreamPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Text   string         `json:"text"`
		Parsed map[string]any `json:"parsed,omitempty"`
	}{p.Agent.info(), p.Text, p.Parsed})
}

func (p *StreamPayload) ApplyScript(answer json.RawMessage) error {
	_, err := decodeAnswer(answer)
	return err
}

// HistAddPayload is the payload of hist_add_before. Scripts may rewrite the
// content: {"content": "..."} (for example to mask secrets).
type HistAddPayload struct {
	Agent   *Agent
	AI      bool
	Content string
}

func (p *HistAddPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		AI      bool   `json:"ai"`
		Content string `json:"content"`
	}{p.Agent.info(), p.AI, p.Content})
}

func (p *HistAddPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "content")
	if err != nil {
		return err
	}
	_, err = field(m, "content", &p.Content)
	return err
}

// ToolBeforePayload is the payload of tool_execute_before. Scripts may
// replace the arguments ({"tool_args": {...}}) or block the tool with a
// message for the model ({"block": "why"}).
type ToolBeforePayload struct {
	Agent    *Agent
	Loop     *LoopData
	ToolName string
	Method   string
	// Kind is what the call does (see [ToolKinder]), which the approval
	// gate decides by. Name, method and kind are the tool's: the gate is
	// given them as they were, whatever an extension set.
	Kind string
	// ReadOnly says the call changes nothing ([ChangesNothing]): what plan
	// mode allows. Like Kind, it is the tool's.
	ReadOnly bool
	Args     map[string]any
	// Block, when set, stops the tool; the text goes to the model as the
	// tool's result.
	Block string
}

func (p *ToolBeforePayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		ToolName string         `json:"tool_name"`
		Method   string         `json:"method,omitempty"`
		ToolArgs map[string]any `json:"tool_args"`
	}{p.Agent.info(), p.ToolName, p.Method, p.Args})
}

func (p *ToolBeforePayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "tool_args", "block")
	if err != nil {
		return err
	}
	var args map[string]any
	if ok, err := field(m, "tool_args", &args); err != nil {
		return err
	} else if ok {
		if args == nil {
			return fmt.Errorf("field \"tool_args\" must be an object")
		}
		p.Args = args
	}
	_, err = field(m, "block", &p.Block)
	return err
}

// ToolOutputPayload is the payload of tool_output_update: a tool's
// argument values as they are about to be shown (before the tool runs), then
// its live output. Scripts may rewrite what is shown: {"content": "..."}.
type ToolOutputPayload struct {
	Agent    *Agent
	ToolName string
	Content  string
}

func (p *ToolOutputPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		ToolName string `json:"tool_name"`
		Content  string `json:"content"`
	}{p.Agent.info(), p.ToolName, p.Content})
}

func (p *ToolOutputPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "content")
	if err != nil {
		return err
	}
	_, err = field(m, "content", &p.Content)
	return err
}

// ToolAfterPayload is the payload of tool_execute_after. Scripts may rewrite
// the result text: {"result": "..."}.
type ToolAfterPayload struct {
	Agent    *Agent
	ToolName string
	Result   *ToolResult
}

func (p *ToolAfterPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		ToolName  string `json:"tool_name"`
		Result    string `json:"result"`
		BreakLoop bool   `json:"break_loop"`
		IsError   bool   `json:"is_error"`
	}{p.Agent.info(), p.ToolName, p.Result.Text, p.Result.BreakLoop, p.Result.IsError})
}

func (p *ToolAfterPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "result")
	if err != nil {
		return err
	}
	_, err = field(m, "result", &p.Result.Text)
	return err
}

// ToolResultPayload is the payload of hist_add_tool_result: the data that
// becomes the history message. Scripts may rewrite the result and add keys
// (Agent Zero adds "file" and "hint"): {"tool_result": "...", "data": {...}}.
type ToolResultPayload struct {
	Agent      *Agent
	ToolName   string
	ToolResult string
	Data       map[string]any // extra keys, merged into the message
}

func (p *ToolResultPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		ToolName   string         `json:"tool_name"`
		ToolResult string         `json:"tool_result"`
		Data       map[string]any `json:"data,omitempty"`
	}{p.Agent.info(), p.ToolName, p.ToolResult, p.Data})
}

func (p *ToolResultPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "tool_result", "data")
	if err != nil {
		return err
	}
	if _, err := field(m, "tool_result", &p.ToolResult); err != nil {
		return err
	}
	var data map[string]any
	if _, err := field(m, "data", &data); err != nil {
		return err
	}
	for k, v := range data {
		if k == "tool_name" || k == "tool_result" {
			return fmt.Errorf("data may not set %q", k)
		}
		if p.Data == nil {
			p.Data = map[string]any{}
		}
		p.Data[k] = v
	}
	return nil
}

// ErrorFormatPayload is the payload of error_format: the error text that is
// about to reach the model. Scripts may rewrite it: {"message": "..."}.
type ErrorFormatPayload struct {
	Agent   *Agent
	Message string
}

func (p *ErrorFormatPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		Message string `json:"message"`
	}{p.Agent.info(), p.Message})
}

func (p *ErrorFormatPayload) ApplyScript(answer json.RawMessage) error {
	m, err := decodeAnswer(answer, "message")
	if err != nil {
		return err
	}
	_, err = field(m, "message", &p.Message)
	return err
}

// UtilModelCallPayload is the payload of util_model_call_before (System and
// Message may be rewritten) and util_model_call_after (Response set).
type UtilModelCallPayload struct {
	Agent    *Agent
	System   string
	Message  string
	Response string
	after    bool
}

func (p *UtilModelCallPayload) ScriptInput() any {
	return p.Agent.scriptInput(struct {
		agentInfo
		System   string `json:"system"`
		Message  string `json:"message"`
		Response string `json:"response,omitempty"`
	}{p.Agent.info(), p.System, p.Message, p.Response})
}

func (p *UtilModelCallPayload) ApplyScript(answer json.RawMessage) error {
	if p.after {
		m, err := decodeAnswer(answer, "response")
		if err != nil {
			return err
		}
		_, err = field(m, "response", &p.Response)
		return err
	}
	m, err := decodeAnswer(answer, "system", "message")
	if err != nil {
		return err
	}
	if _, err := field(m, "system", &p.System); err != nil {
		return err
	}
	_, err = field(m, "message", &p.Message)
	return err
}
