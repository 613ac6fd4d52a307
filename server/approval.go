package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
)

// The event types the broker adds to a session's event stream. They are
// server events, not engine events, so they live here rather than in loop.
const (
	// EventApprovalRequested: a tool waits for a face to answer. Item is the
	// tool call's item, Text the request id, Tool/Method/Args/Title the call.
	EventApprovalRequested loop.EventType = "approval_requested"
	// EventApprovalResolved: the request was answered or abandoned. Text is
	// the request id, Status one of the Approval* values, Error the reason
	// of a refusal.
	EventApprovalResolved loop.EventType = "approval_resolved"
)

// Statuses carried by approval_resolved.
const (
	ApprovalApproved  = "approved"
	ApprovalDenied    = "denied"
	ApprovalCancelled = "cancelled"
)

// Decision is what a policy says about a tool call.
type Decision string

// The decisions.
const (
	// Auto runs the tool without asking.
	Auto Decision = "auto"
	// Ask holds the tool until a face approves or denies it.
	Ask Decision = "ask"
	// Deny never runs the tool; the model is told why.
	Deny Decision = "deny"
)

// Rule decides calls of the tools matching Tool and Kind whose subject (the
// command, see BrokerOptions.Subject) matches Pattern. Tool and Pattern are
// globs where '*' matches any text, slashes and spaces included; empty
// matches everything. Tool matches the tool name or "name:method"; Kind is
// one of the call's kinds (see [loop.ToolKinder]), empty for any.
type Rule struct {
	Tool     string
	Kind     string
	Pattern  string
	Decision Decision
	// Reason is told to the model when the rule denies (a default otherwise).
	Reason string
}

// Policy is a list of rules, the first matching one wins, and a default for
// calls no rule matches (empty means Auto).
type Policy struct {
	Rules   []Rule
	Default Decision
}

// Call is what a policy decides about: the tool, its method, what it does
// (its kind, see [loop.ToolKinder]) and its subject, the command or path it
// acts on (see [Subject]).
type Call struct {
	Tool, Method, Kind, Subject string
}

// PolicyFor is the policy of a configuration's approval setting:
// "sandbox" (the default, see [DefaultPolicy]), "ask" ([AskPolicy]) or
// "auto" (never asks); confined says whether commands run confined.
func PolicyFor(approval string, confined bool) Policy {
	switch approval {
	case "ask":
		return AskPolicy()
	case "auto":
		return Policy{Default: Auto}
	default:
		return DefaultPolicy(confined)
	}
}

// AskPolicy is approval "ask": every call that acts is asked about. What
// passes is decided by what a call does, not by its name: reading,
// searching, fetching to read and thinking (the answer, a subordinate,
// whose own calls are asked about), and Zero's own tools that change
// nothing but the agent's memory. An MCP server's tool (server.tool) is
// asked about whatever it claims, and so is a tool that says nothing of
// what it does (kind "other"), a user's executable and a command.
func AskPolicy() Policy {
	pass := func(kind string) Rule { return Rule{Kind: kind, Decision: Auto} }
	memory := func(tool, kind string) Rule { return Rule{Tool: tool, Kind: kind, Decision: Auto} }
	return Policy{Default: Ask, Rules: []Rule{
		{Tool: "*.*", Decision: Ask}, // an MCP server's tool, whatever its name and kind
		pass("read"), pass("search"), pass("fetch"), pass("think"),
		// Zero's own, by name and by what they say they do: a user's tool
		// cannot take a built-in's name, and would say it executes.
		memory("memory_save", "edit"), memory("memory_delete", "delete"), memory("memory_forget", "delete"),
		memory("behaviour_adjustment", "edit"),
	}}
}

// DefaultPolicy is approval "sandbox": everything runs on its own where
// commands are confined (a container, or bubblewrap, which isolates what
// it claims), while commands that would run unconfined on this machine
// need approval. Asking inside a real sandbox protects nothing and makes
// clients that cannot answer (Codex declines every elicitation) unusable.
func DefaultPolicy(confined bool) Policy {
	if confined {
		return Policy{Default: Auto}
	}
	return Policy{Default: Auto, Rules: []Rule{{Tool: "code_execution_tool", Decision: Ask}}}
}

// Decide returns the decision for a call.
func (p Policy) Decide(c Call) Decision {
	d, _ := p.decide(c)
	return d
}

// Subject is what a policy's patterns match in a call's arguments: the
// first string among "code", "command", "path", "url".
func Subject(args map[string]any) string { return defaultSubject("", args) }

// decide returns the decision for a call and the rule that made it (nil for
// the default).
func (p Policy) decide(c Call) (Decision, *Rule) {
	for i := range p.Rules {
		r := &p.Rules[i]
		toolOK := glob(r.Tool, c.Tool) || (c.Method != "" && glob(r.Tool, c.Tool+":"+c.Method))
		if toolOK && (r.Kind == "" || r.Kind == c.Kind) && glob(r.Pattern, c.Subject) {
			return cmp.Or(r.Decision, Auto), r
		}
	}
	return cmp.Or(p.Default, Auto), nil
}

// glob matches s against pattern, where '*' is any run of characters.
func glob(pattern, s string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := len(parts) - 1
	if last == 0 {
		return s == ""
	}
	for _, p := range parts[1:last] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[last])
}

// Request is a tool call waiting for approval.
type Request struct {
	ID      string         `json:"id"`
	Session string         `json:"session"`
	Agent   int            `json:"agent"`
	Item    string         `json:"item"` // the tool call's item in the event stream
	Tool    string         `json:"tool"`
	Method  string         `json:"method,omitempty"`
	Kind    string         `json:"kind,omitempty"` // what the call does (see loop.ToolKinder)
	Args    map[string]any `json:"args,omitempty"`
	Title   string         `json:"title"`
	// Subject is what the policy matched (the command), possibly empty.
	Subject string `json:"subject,omitempty"`
}

// Approvals is what the faces use to answer approval requests. They learn
// of new requests from approval_requested events or by polling Pending.
type Approvals interface {
	// Pending lists the waiting requests of a session ("" for all), oldest
	// first.
	Pending(session string) []Request
	// Approve lets the tool run; always also lets later calls of the same
	// tool (and rule pattern) in the session run without asking.
	Approve(id string, always bool) error
	// Deny blocks the tool; reason is told to the model.
	Deny(id, reason string) error
}

// BrokerOptions configures a Broker. The zero value works.
type BrokerOptions struct {
	// Subject extracts what rule patterns match from a call's arguments;
	// nil uses the first string among "code", "command", "path", "url".
	Subject func(tool string, args map[string]any) string
	Logger  *slog.Logger
}

// Broker applies a Policy to every tool call through the sessions' gate
// ([Broker.Gate]) and holds the calls that need asking until a face answers or
// the run ends. It implements Approvals.
type Broker struct {
	policy  Policy
	subject func(string, map[string]any) string
	logger  *slog.Logger

	mu       sync.Mutex
	pending  map[string]*pending
	order    []string                   // pending ids, oldest first
	always   map[string]map[string]bool // session -> remembered "allow always" keys
	emitters map[string]func(Event)
	policies map[string]Policy    // per session, over policy
	planning map[string]bool      // sessions in plan mode
	only     map[string]onlyTools // sessions running a command that names its tools
	// questions wait for the person (see Ask); asked are their ids, oldest first.
	questions map[string]*question
	asked     []string
	// remembered is told when a session's "allow always" set grew (the
	// manager stores it with the session).
	remembered func(session string)
}

type pending struct {
	req    Request
	answer chan answer // buffer 1: the one resolver never blocks
}

type answer struct {
	ok     bool
	always bool
	reason string
}

var _ Approvals = (*Broker)(nil)

// NewBroker returns a broker applying p.
func NewBroker(p Policy, opts BrokerOptions) *Broker {
	p.Rules = slices.Clone(p.Rules)
	if opts.Subject == nil {
		opts.Subject = defaultSubject
	}
	return &Broker{
		policy:   p,
		subject:  opts.Subject,
		logger:   cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		pending:  map[string]*pending{},
		always:   map[string]map[string]bool{},
		emitters: map[string]func(Event){},
		policies: map[string]Policy{},
		planning: map[string]bool{},
		only:     map[string]onlyTools{},
	}
}

// setPlanning puts session in plan mode or out of it: in plan mode a call
// that changes something is refused before any policy or "allow always"
// is looked at (see check).
func (b *Broker) setPlanning(session string, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		b.planning[session] = true
	} else {
		delete(b.planning, session)
	}
}

// SetPolicy gives session its own policy (the default depends on the
// sandbox its workspace runs in); it lasts until the session is closed.
func (b *Broker) SetPolicy(session string, p Policy) {
	p.Rules = slices.Clone(p.Rules)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.policies[session] = p
}

func (b *Broker) policyOf(session string) Policy {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.policies[session]; ok {
		return p
	}
	return b.policy
}

func defaultSubject(_ string, args map[string]any) string {
	for _, k := range []string{"code", "command", "path", "url"} {
		if s, ok := args[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// Gate is the broker's [loop.Gate]. The manager installs it in every
// session it creates, after the tool_execute_before extensions, so no
// extension (a workspace's above all) can switch approvals off or change a
// call after it was approved.
func (b *Broker) Gate(ctx context.Context, bp *loop.ToolBeforePayload) error {
	return b.check(ctx, bp)
}

// attach routes the approval events of session id to emit.
func (b *Broker) attach(id string, emit func(Event)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.emitters[id] = emit
}

// detach forgets session id; its runs have ended, so nothing of it pends.
func (b *Broker) detach(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.emitters, id)
	delete(b.always, id)
	delete(b.policies, id)
	delete(b.planning, id)
	delete(b.only, id)
}

func (b *Broker) emit(session string, e Event) {
	b.mu.Lock()
	fn := b.emitters[session]
	b.mu.Unlock()
	if fn != nil {
		e.Session = session
		fn(e)
	}
}

func (b *Broker) check(ctx context.Context, bp *loop.ToolBeforePayload) error {
	if bp == nil || bp.Agent == nil || bp.Block != "" {
		return nil
	}
	subject := b.subject(bp.ToolName, bp.Args)
	session := bp.Agent.Session().ID()
	b.mu.Lock()
	planning := b.planning[session]
	only, limited := b.only[session]
	b.mu.Unlock()
	if planning && !bp.ReadOnly {
		bp.Block = PlanModeRefusal
		b.logger.Info("tool call refused in plan mode", "session", session, "tool", bp.ToolName)
		return nil
	}
	if limited && !slices.Contains(only.tools, bp.ToolName) {
		bp.Block = OnlyRefusal(only.tools)
		b.logger.Info("tool call refused: the command names other tools", "session", session, "tool", bp.ToolName)
		return nil
	}
	decision, rule := b.policyOf(session).decide(Call{Tool: bp.ToolName, Method: bp.Method, Kind: bp.Kind, Subject: subject})
	switch decision {
	case Deny:
		reason := "this call is not allowed by the approval policy"
		if rule != nil && rule.Reason != "" {
			reason = rule.Reason
		}
		bp.Block = "Refused: " + reason + "."
		b.logger.Info("tool call denied by policy", "session", session, "tool", bp.ToolName)
		return nil
	case Ask:
	default:
		return nil
	}
	key := bp.ToolName
	if rule != nil {
		key += "\x00" + rule.Pattern
	}
	b.mu.Lock()
	remembered := b.always[session][key]
	b.mu.Unlock()
	if remembered {
		return nil
	}

	item := ""
	if bp.Loop != nil && bp.Loop.CurrentTool != nil {
		item = bp.Loop.CurrentTool.ID
	}
	name := bp.ToolName
	if bp.Method != "" {
		name += ":" + bp.Method
	}
	title := name
	if subject != "" {
		title += ": " + cut.Clip(subject, 200)
	}
	req := Request{
		ID: session + "/" + cmp.Or(item, fmt.Sprintf("call-%p", bp)), Session: session, Agent: bp.Agent.Number,
		Item: item, Tool: bp.ToolName, Method: bp.Method, Kind: bp.Kind, Args: bp.Args, Title: title, Subject: subject,
	}
	pd := &pending{req: req, answer: make(chan answer, 1)}
	b.mu.Lock()
	b.pending[req.ID] = pd
	b.order = append(b.order, req.ID)
	b.mu.Unlock()

	args, _ := json.Marshal(bp.Args)
	b.emit(session, Event{Type: EventApprovalRequested, Agent: req.Agent, Item: item, Text: req.ID,
		Tool: bp.ToolName, Method: bp.Method, Kind: bp.Kind, Args: args, Title: title})
	resolved := Event{Type: EventApprovalResolved, Agent: req.Agent, Item: item, Text: req.ID, Tool: bp.ToolName}

	select {
	case a := <-pd.answer:
		if !a.ok {
			reason := cmp.Or(a.reason, "no reason given")
			bp.Block = "The user refused this call: " + reason
			resolved.Status, resolved.Error = ApprovalDenied, reason
			b.emit(session, resolved)
			return nil
		}
		if a.always {
			b.mu.Lock()
			if b.always[session] == nil {
				b.always[session] = map[string]bool{}
			}
			b.always[session][key] = true
			tell := b.remembered
			b.mu.Unlock()
			if tell != nil {
				tell(session)
			}
		}
		resolved.Status = ApprovalApproved
		b.emit(session, resolved)
		return nil
	case <-ctx.Done():
		b.take(req.ID)
		resolved.Status = ApprovalCancelled
		b.emit(session, resolved)
		return fmt.Errorf("waiting for approval of %s: %w", name, context.Cause(ctx))
	}
}

// alwaysOf returns the calls session allows without asking ("allow
// always" answers), sorted.
func (b *Broker) alwaysOf(session string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.always[session]))
}

// remember restores a session's "allow always" answers (a stored session
// loaded again).
func (b *Broker) remember(session string, keys []string) {
	if len(keys) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.always[session] == nil {
		b.always[session] = map[string]bool{}
	}
	for _, k := range keys {
		b.always[session][k] = true
	}
}

// take removes a pending request; exactly one caller gets it, so one answer
// wins a race between faces (or with a cancel).
func (b *Broker) take(id string) *pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	pd := b.pending[id]
	if pd == nil {
		return nil
	}
	delete(b.pending, id)
	b.order = slices.DeleteFunc(b.order, func(s string) bool { return s == id })
	return pd
}

// Pending implements Approvals.
func (b *Broker) Pending(session string) []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Request
	for _, id := range b.order {
		if r := b.pending[id].req; session == "" || r.Session == session {
			out = append(out, r)
		}
	}
	return out
}

// Approve implements Approvals.
func (b *Broker) Approve(id string, always bool) error {
	pd := b.take(id)
	if pd == nil {
		return fmt.Errorf("approve %q: %w", id, ErrNotFound)
	}
	pd.answer <- answer{ok: true, always: always}
	return nil
}

// Deny implements Approvals.
func (b *Broker) Deny(id, reason string) error {
	pd := b.take(id)
	if pd == nil {
		return fmt.Errorf("deny %q: %w", id, ErrNotFound)
	}
	pd.answer <- answer{reason: reason}
	return nil
}
