package loop

import (
	"encoding/json"
	"time"

	"github.com/zeroagent/zero/llm"
)

// EventType names one kind of observable step of a run.
type EventType string

// The event types. The editor faces map each onto their protocol.
const (
	EventRunStarted         EventType = "run_started"
	EventTurnStarted        EventType = "turn_started"
	EventReasoningDelta     EventType = "reasoning_delta"
	EventThoughtsDelta      EventType = "thoughts_delta"
	EventHeadline           EventType = "headline"
	EventToolCall           EventType = "tool_call"
	EventToolStarted        EventType = "tool_started" // approved and extensions done: the tool runs now
	EventToolOutputDelta    EventType = "tool_output_delta"
	EventToolResult         EventType = "tool_result"
	EventIntervention       EventType = "intervention" // Text: a user message delivered during the run
	EventResponseDelta      EventType = "response_delta"
	EventResponse           EventType = "response"
	EventWarning            EventType = "warning"
	EventError              EventType = "error"
	EventSubordinateStarted EventType = "subordinate_started"
	EventSubordinateEnded   EventType = "subordinate_ended"
	EventUsage              EventType = "usage"
	EventRunEnded           EventType = "run_ended"
	// EventHistoryCompressed: an agent's history was compressed; Tokens
	// holds what the model sees of it before and after, Text says so.
	EventHistoryCompressed EventType = "history_compressed"
	// EventPlan: an agent wrote its plan (todo:write); Plan is the whole
	// list, which replaces the agent's last one.
	EventPlan EventType = "plan"
)

// Stop reasons carried by run_ended.
const (
	StopResponse  = "response"
	StopCancelled = "cancelled"
	StopError     = "error"
	// StopBudget (usage.go): limits.tokens or limits.cost reached.
)

// Tool result statuses carried by tool_result.
const (
	ToolCompleted = "completed"
	ToolFailed    = "failed"
	ToolCancelled = "cancelled"
)

// Event is one observable step. Seq increases by one per event within a
// session; Item is the stable id of the message or tool call the event
// belongs to, so editors can group deltas.
type Event struct {
	Seq     int64     `json:"seq"`
	Session string    `json:"session"`
	Agent   int       `json:"agent"`
	Item    string    `json:"item,omitempty"`
	Type    EventType `json:"type"`
	Time    time.Time `json:"time"`

	// Text is the delta or the full text, depending on Type.
	Text string `json:"text,omitempty"`
	// Iteration is LoopData.iteration for turn_started.
	Iteration *int `json:"iteration,omitempty"`
	// Tool fields (tool_call, tool_result).
	Tool   string          `json:"tool,omitempty"`
	Method string          `json:"method,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	Kind   string          `json:"kind,omitempty"`
	Title  string          `json:"title,omitempty"`
	Status string          `json:"status,omitempty"`
	// Running, on a tool_result, says that what the tool started goes on
	// after the call returned: a command still running in its shell (the
	// user sent a message, or a wait timed out). Status says how the call
	// went (completed: it returned what there was so far), Running that
	// its work is not over.
	Running bool `json:"running,omitempty"`
	// Streamed, on a tool_result, is how many bytes at the start of Text
	// the call's tool_output_delta events showed already: a face that
	// showed them shows Text[Streamed:] (what the tool added, such as a
	// note) or nothing, instead of the output again.
	Streamed int `json:"streamed,omitempty"`
	// Diffs are the files a tool_result's tool changed.
	Diffs []FileDiff `json:"diffs,omitempty"`
	// Images are the pictures of a run_started's or an intervention's
	// user message, or a tool_result's, as references (no data: ask
	// Session.Image by Hash).
	Images []llm.Image `json:"images,omitempty"`
	// Profile of a subordinate (subordinate_started).
	Profile string `json:"profile,omitempty"`
	// Usage (usage).
	Usage *Usage `json:"usage,omitempty"`
	// Tokens of the history (history_compressed).
	Tokens *TokenChange `json:"tokens,omitempty"`
	// Plan is an agent's whole plan (plan).
	Plan *Plan `json:"plan,omitempty"`
	// Run end (run_ended). Error is why it failed or, for a run cancelled
	// for another reason than the user's asking, why it was cancelled
	// ("cancelled: the client disconnected"); on a failed tool_result it
	// is the error as the run reports it should it end on it, so a face
	// that showed the failure need not say it again.
	StopReason string `json:"stop_reason,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Plan is an agent's list of steps, as todo:write keeps it and ACP shows
// it (its plan entries).
type Plan struct {
	Items []PlanItem `json:"items"`
}

// A PlanItem is one step of a plan.
type PlanItem struct {
	Content string `json:"content"`
	// Status is PlanPending, PlanInProgress or PlanCompleted.
	Status string `json:"status"`
	// Priority is "high", "medium" or "low"; "" when the agent gave none.
	Priority string `json:"priority,omitempty"`
}

// The statuses of a plan's steps.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// Usage is the token usage of one model call (a usage event's), or the
// totals of a run (run_ended's; see usage.go). Estimated is true when the
// server reported none and Zero counted the tokens itself (for totals:
// some call's).
type Usage struct {
	// Role is the model's (RoleChat, RoleUtility, RoleEmbedding), of a call.
	Role             string `json:"role,omitempty"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	TotalTokens      int    `json:"total_tokens"`
	// CachedTokens is the part of PromptTokens the provider's prompt
	// cache served.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// Cost is what the call cost, in the currency of the endpoint or of
	// the configured prices; nil when unknown (never 0 for unknown).
	Cost *float64 `json:"cost,omitempty"`
	// CostPartial, in totals, says that some calls' cost is unknown: Cost
	// is what the others cost.
	CostPartial bool `json:"cost_partial,omitempty"`
	// Calls counts the calls of totals.
	Calls     int  `json:"calls,omitempty"`
	Estimated bool `json:"estimated,omitempty"`
	// Roles are the totals' parts by role.
	Roles *UsageByRole `json:"roles,omitempty"`
}
