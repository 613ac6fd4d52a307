package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

const (
	maxWait    = 50 // seconds zero_status may wait: under the ~60 s hosts allow a call
	rootsLimit = 5 * time.Second
)

func (f *face) newMCPServer() *mcpserver.MCPServer {
	hooks := &mcpserver.Hooks{}
	hooks.AddOnRequestInitialization(f.requireInitialized)
	hooks.AddAfterInitialize(f.markInitialized)
	hooks.AddBeforeListResources(func(context.Context, any, *mcp.ListResourcesRequest) { f.syncResources() })
	hooks.AddBeforeListPrompts(func(context.Context, any, *mcp.ListPromptsRequest) { f.syncPrompts() })
	hooks.AddBeforeGetPrompt(func(context.Context, any, *mcp.GetPromptRequest) { f.syncPrompts() })
	s := mcpserver.NewMCPServer("zero", f.opts.Version,
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, false),
		mcpserver.WithPromptCapabilities(false),
		mcpserver.WithLogging(),
		mcpserver.WithRecovery(),
		mcpserver.WithHooks(hooks),
		mcpserver.WithInstructions(f.instructions()),
	)
	f.srv = s
	start := f.startSchema()
	status := inputSchema[statusArgs]()
	prop(status, "since").Minimum = jsonschema.Ptr(0.0)
	prop(status, "wait").Minimum, prop(status, "wait").Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(maxWait))
	run := outputSchema[runOut]()
	prop(run, "stop_reason").Enum = enum(loop.StopResponse, loop.StopCancelled, loop.StopError, loop.StopBudget, server.StopIntervened, stopApproval, stopRunning)
	rewind := conflictsEnum(inputSchema[rewindArgs]())
	prop(rewind, "to").Minimum = jsonschema.Ptr(1.0)
	fork := inputSchema[forkArgs]()
	prop(fork, "at_run").Minimum = jsonschema.Ptr(1.0)
	trust := outputSchema[trustOut]()
	prop(trust, "status").Enum = enum(server.TrustNone, server.TrustTrusted, server.TrustUntrusted, server.TrustChanged)

	s.AddTool(annotate(tool("zero_start",
		"Start a task for the Zero agent, or continue a session, and return at once with the session id and a cursor; then follow the run with zero_status (the result's next field has the call). If the session is running, the message joins the run as an intervention.",
		start, outputSchema[startOut]()), hints{}), f.handleStart)
	s.AddTool(annotate(tool("zero_status",
		"What a session did since a cursor: its events (thoughts, one headline per step, tool calls, command output, the answer), whether it still runs, the approvals it waits for, and the last run's result. Pass the cursor it returns to the next call; wait > 0 waits up to that many seconds (at most 50) for news.",
		status, outputSchema[statusOut]()), hints{readOnly: true, idempotent: true}), f.handleStatus)
	s.AddTool(annotate(tool("zero_reply",
		"Send a follow-up message to a session: it starts a new run, or joins the running one as an intervention. Like every message, it must stand on its own.",
		inputSchema[replyArgs](), outputSchema[startOut]()), hints{}), f.handleReply)
	s.AddTool(annotate(tool("zero_approve",
		"Answer an approval request of a run (its id is in pending_approvals of zero_status or zero_run). Ask the user first: the request runs a command on their machine or sandbox.",
		inputSchema[approveArgs](), outputSchema[approveOut]()), hints{idempotent: true}), f.handleApprove)
	s.AddTool(annotate(tool("zero_cancel", "Cancel the run in progress of a session; what it started is stopped. The session stays and can be continued.",
		inputSchema[sessionArgs](), outputSchema[cancelOut]()), hints{idempotent: true}), f.handleCancel)
	s.AddTool(annotate(tool("zero_sessions", "List the sessions of this workspace, oldest first, with their workspace, profile, title and whether they run: those of this zero process and those kept from earlier ones, which zero_start, zero_reply and zero_status continue by id.",
		inputSchema[sessionsArgs](), outputSchema[sessionsOut]()), hints{readOnly: true, idempotent: true}), f.handleSessions)
	s.AddTool(annotate(tool("zero_run",
		"Run a task with the Zero agent and wait for its answer. It returns early, the run going on, when the run needs an approval this client cannot be asked for, or after about 50 s; the result's next field then has the call to make (zero_approve or zero_status). Sends progress (headline and latest thought) when given a progress token. Images the agent's tools returned follow the result's text.",
		start, run), hints{}), f.handleRun)
	s.AddTool(annotate(tool("zero_trust",
		"Ask the user whether to trust the workspace's own code (.zero extensions and tools), which Zero keeps off until they do. "+
			"Only the user can answer: the files are shown to them, and a client that cannot ask says how they can trust it themselves.",
		inputSchema[trustArgs](), trust), hints{idempotent: true}), f.handleTrust)

	s.AddTool(annotate(tool("zero_undo",
		"Take back a session's last run (or its last zero_compact): the files its tools and commands changed, created or deleted go back to how they were before it, "+
			"and its part of the conversation goes, so the next run does not see it. A run in progress is cancelled first. "+
			"Files the user changed since are not overwritten without their word: the user is asked, or the call fails naming them, with nothing changed; call again with conflicts keep or overwrite. "+
			"The result says what was restored, removed and kept, and the processes still running in the sandbox, which Zero cannot undo.",
		conflictsEnum(inputSchema[undoArgs]()), outputSchema[rewoundOut]()), hints{destructive: true}), f.handleUndo)
	s.AddTool(annotate(tool("zero_rewind",
		"Without to: list a session's checkpoints (one is taken before each run and each zero_compact) with what they cover; nothing changes. "+
			"With to: go back to that checkpoint, the state just before its run: the files (files), the conversation (conversation), or both (the default); the runs after it are taken back. "+
			"A run in progress is cancelled first. Files the user changed since are asked about as zero_undo does (conflicts keep or overwrite).",
		rewind, outputSchema[rewindOut]()), hints{destructive: true, idempotent: true}), f.handleRewind)
	s.AddTool(annotate(tool("zero_fork",
		"Fork a session: a new session with its conversation up to the end of a run (default: the last one that ended) and its own id, which zero_reply, zero_start and zero_run continue like any session. "+
			"The original and its history are left as they are. The files are not copied: both work in the same workspace.",
		fork, outputSchema[forkOut]()), hints{}), f.handleFork)
	s.AddTool(annotate(tool("zero_compact",
		"Summarise a session's conversation now, to free its context, focus saying what the summary should keep; it returns the history's size in tokens before and after. "+
			"Not during a run. zero_undo takes a compaction back.",
		inputSchema[compactArgs](), outputSchema[compactOut]()), hints{}), f.handleCompact)

	s.AddResourceTemplate(mcp.NewResourceTemplate("zero://session/{id}", "Zero session",
		mcp.WithTemplateDescription("Transcript of a Zero session: messages, tool calls with results, answers."),
		mcp.WithTemplateMIMEType("text/markdown")), f.readSession)
	r := f.memoriesResource()
	s.AddResource(r.Resource, r.Handler)
	s.AddResourceTemplate(mcp.NewResourceTemplate(memoriesURI+"/search/{query}", "Zero memory search",
		mcp.WithTemplateDescription("The agent's memories most relevant to query (URL-encoded), best first (JSON)."),
		mcp.WithTemplateMIMEType("application/json")), f.readMemories)
	return s
}

// startSchema is the input schema of zero_start and zero_run: the profile
// argument offers the catalog's profiles that fit the sandbox (see
// offeredProfiles), and says which one is the default.
func (f *face) startSchema() *jsonschema.Schema {
	s := inputSchema[startArgs]()
	p := prop(s, "profile")
	if offered := f.offeredProfiles(); len(offered) > 0 {
		p.Enum = enum(profileIDs(offered)...)
		p.Description = profileDescription(p.Description, offered)
	}
	var modes []string
	for _, m := range server.Modes {
		modes = append(modes, m.ID)
	}
	prop(s, "mode").Enum = enum(modes...)
	// An image is MCP image content, which may carry more (annotations).
	items := prop(s, "images").Items
	items.AdditionalProperties = nil
	prop(items, "type").Enum = enum("image")
	return s
}

// hints are what a tool's annotations tell a client: a readOnly tool
// changes nothing, an idempotent one has no further effect when repeated
// with the same arguments, a destructive one may undo what was done (a
// rewind puts files back). None of Zero's tools reaches out.
type hints struct{ readOnly, idempotent, destructive bool }

// annotate sets a tool's hints.
func annotate(t mcp.Tool, h hints) mcp.Tool {
	t.Annotations = mcp.ToolAnnotation{ReadOnlyHint: &h.readOnly, IdempotentHint: &h.idempotent,
		DestructiveHint: &h.destructive, OpenWorldHint: mcp.ToBoolPtr(false)}
	return t
}

// conflictsEnum sets the values of the conflicts argument of s.
func conflictsEnum(s *jsonschema.Schema) *jsonschema.Schema {
	prop(s, "conflicts").Enum = enum(server.ConflictsKeep, server.ConflictsOverwrite)
	return s
}

// instructions tell the client's model what Zero is and how to drive it,
// naming where commands run (Options.Sandbox).
func (f *face) instructions() string {
	where := "in a sandbox"
	if f.opts.Sandbox != "" {
		where = f.opts.Sandbox
	}
	return "Zero is an autonomous coding agent. It works on a workspace folder and runs commands " + where + ". " +
		"It cannot see this conversation: every message must say what it needs. " +
		"Start a task with zero_start and follow it with zero_status (pass the cursor back; wait up to 50 s), " +
		"or use zero_run to wait for the answer. When a run waits for an approval, ask the user and answer with zero_approve. " +
		"zero_undo takes back a run's changes to the files and the conversation (zero_rewind goes back further)."
}

func tool(name, desc string, in, out *jsonschema.Schema) mcp.Tool {
	t := mcp.NewToolWithRawSchema(name, desc, raw(in))
	mcp.WithRawOutputSchema(raw(out))(&t)
	return t
}

// Tool arguments and results: their fields, tags and descriptions are the
// tools' schemas (see schema.go). An argument without omitempty is
// required.
type (
	startArgs struct {
		Message   string     `json:"message" jsonschema:"The task for the agent, complete on its own: the agent cannot see this conversation, so include the files, errors and goals it needs."`
		Workspace string     `json:"workspace,omitempty" jsonschema:"Absolute path of the folder the agent works in. Default: the client's first root, else the folder zero was started in (never / or the home directory unless the user named it with --workspace)."`
		Session   string     `json:"session,omitempty" jsonschema:"Id of a session to continue, from an earlier zero_start, zero_run or zero_sessions result. Omit to start a new session."`
		Profile   string     `json:"profile,omitempty" jsonschema:"Agent profile for a new session (or to switch a session to)."`
		Mode      string     `json:"mode,omitempty" jsonschema:"plan: the agent only reads, searches and thinks, changes nothing, and answers with a plan; default: it may edit files and run commands. For a new session, or to switch a session to. Default: a new session's is default."`
		Images    []imageArg `json:"images,omitempty" jsonschema:"Pictures for the agent to see with the message (screenshots, mockups), as MCP image content. At most 10 with attach."`
		Attach    []string   `json:"attach,omitempty" jsonschema:"Pictures in the workspace to attach, by path (relative to the workspace, or absolute inside it)."`
	}
	startOut struct {
		Session    string        `json:"session"`
		Run        int           `json:"run"`
		Cursor     int64         `json:"cursor" jsonschema:"pass to zero_status as since"`
		Intervened bool          `json:"intervened" jsonschema:"the message went to the running run"`
		Workspace  string        `json:"workspace,omitempty"`
		Trust      *trustWarning `json:"trust,omitempty" jsonschema:"the workspace's own code is off until the user trusts it"`
		Next       *nextCall     `json:"next,omitempty" jsonschema:"the call to make next"`
	}
	statusArgs struct {
		Session string  `json:"session" jsonschema:"Session id, from zero_start, zero_run or zero_sessions."`
		Since   int64   `json:"since,omitempty" jsonschema:"Cursor from the previous result (0 = from the start)."`
		Wait    float64 `json:"wait,omitempty" jsonschema:"Seconds to wait for news (default 0: answer at once)."`
	}
	statusOut struct {
		Session string             `json:"session"`
		Events  []compact          `json:"events"`
		Cursor  int64              `json:"cursor"`
		More    bool               `json:"more,omitempty" jsonschema:"more events wait: call again with cursor"`
		Running bool               `json:"running"`
		Mode    string             `json:"mode" jsonschema:"the session's mode: default, or plan (it changes nothing and answers with a plan)"`
		Plan    []server.AgentPlan `json:"plan,omitempty" jsonschema:"each agent's last plan (todo:write): its steps with their status"`
		Pending []approval         `json:"pending_approvals"`
		Result  *lastResult        `json:"result,omitempty"`
		// Usage is what the session's runs used, all of them.
		Usage *server.Usage `json:"session_usage,omitempty" jsonschema:"what all the session's model calls used"`
	}
	approval struct {
		ID      string `json:"id"`
		Tool    string `json:"tool"`
		Title   string `json:"title"`
		Subject string `json:"subject,omitempty"`
	}
	lastResult struct {
		Run        int           `json:"run"`
		StopReason string        `json:"stop_reason"`
		Response   string        `json:"response,omitempty"`
		Error      string        `json:"error,omitempty"`
		Usage      *server.Usage `json:"usage,omitempty" jsonschema:"what the run's model calls used"`
	}
	replyArgs struct {
		Session string `json:"session" jsonschema:"Session id, from zero_start, zero_run or zero_sessions."`
		Message string `json:"message" jsonschema:"The task for the agent, complete on its own: the agent cannot see this conversation, so include the files, errors and goals it needs."`
	}
	approveArgs struct {
		ID string `json:"id" jsonschema:"Approval request id, from pending_approvals."`
		// Approve is a pointer to tell false from missing.
		Approve *bool  `json:"approve" jsonschema:"true runs the tool, false refuses it."`
		Always  bool   `json:"always,omitempty" jsonschema:"Also allow later calls of this tool in the session without asking (default false)."`
		Reason  string `json:"reason,omitempty" jsonschema:"Why it is refused; the agent reads it."`
	}
	approveOut struct {
		ID       string `json:"id"`
		Approved bool   `json:"approved"`
		Always   bool   `json:"always,omitempty"`
	}
	sessionArgs struct {
		Session string `json:"session" jsonschema:"Session id."`
	}
	cancelOut struct {
		Session   string `json:"session"`
		Cancelled bool   `json:"cancelled" jsonschema:"a run was going on"`
	}
	sessionsArgs struct {
		Workspace string `json:"workspace,omitempty" jsonschema:"Absolute path of a workspace whose stored sessions to list. Default: the folder zero was started in."`
		All       bool   `json:"all,omitempty" jsonschema:"List the stored sessions of every workspace."`
	}
	sessionsOut struct {
		Sessions []server.Info `json:"sessions"`
	}
	runOut struct {
		Session    string        `json:"session"`
		Run        int           `json:"run"`
		StopReason string        `json:"stop_reason" jsonschema:"approval_required and running: the call returned while the run goes on; see next"`
		Response   string        `json:"response,omitempty"`
		Error      string        `json:"error,omitempty"`
		Intervened bool          `json:"intervened,omitempty"`
		Trust      *trustWarning `json:"trust,omitempty" jsonschema:"the workspace's own code is off until the user trusts it"`
		Usage      *server.Usage `json:"usage,omitempty" jsonschema:"what the run's model calls used: tokens, cached tokens, cost when known"`
		// Cursor, Pending and Next are set when the call returned before
		// the run ended.
		Cursor  int64      `json:"cursor,omitempty" jsonschema:"pass to zero_status as since"`
		Pending []approval `json:"pending_approvals,omitempty"`
		Next    *nextCall  `json:"next,omitempty" jsonschema:"the call to make next"`
		// Images are the pictures the run's tools brought, which follow
		// the text as image content.
		Images []server.ImageRef `json:"images,omitempty" jsonschema:"pictures the run's tools brought: the image content after the text, in order"`
	}
	// nextCall is the call a model should make next.
	nextCall struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
)

// bind decodes a call's arguments into dst, a pointer to the tool's
// arguments struct, naming the field that is wrong; the fields its schema
// requires must be there.
func bind(req mcp.CallToolRequest, dst any) error {
	raw, err := json.Marshal(req.GetRawArguments())
	if err != nil {
		return badArg("arguments", "not JSON: %v", err)
	}
	if string(raw) == "null" {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return badArg("arguments", "must be an object")
	}
	for _, name := range required(dst) {
		v, ok := fields[name]
		if !ok || string(v) == "null" || string(v) == `""` {
			return badArg(name, "required")
		}
	}
	// Unknown arguments are ignored: clients add their own (Gemini CLI's
	// wait_for_previous); wrong types of known ones are errors.
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			typ := jsonType(te.Type.Kind().String())
			article := "a"
			if strings.ContainsRune("aeiou", rune(typ[0])) {
				article = "an"
			}
			return badArg(te.Field, "must be %s %s, not %s", article, typ, te.Value)
		}
		return badArg("arguments", "%v", err)
	}
	return nil
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "ptr":
		return "boolean"
	case "int", "int64", "float64":
		return "number"
	case "slice":
		return "array"
	case "struct":
		return "object"
	}
	return kind
}

// result is a successful tool result: structured content plus the same as
// indented JSON text for clients that ignore structured content.
func result(v any, summary string) *mcp.CallToolResult {
	text, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return mcp.NewToolResultError("encode result: " + err.Error())
	}
	if summary != "" {
		return mcp.NewToolResultStructured(v, summary+"\n"+string(text))
	}
	return mcp.NewToolResultStructured(v, string(text))
}

// toolError turns err into an isError result; argument errors name their
// field, the others say what failed.
func toolError(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(err.Error())
}

func (f *face) session(id string) (*server.Session, error) {
	s, err := f.mgr.Get(id)
	if err != nil {
		if errors.Is(err, server.ErrNotFound) {
			return nil, badArg("session", "no session %q (zero_sessions lists them)", id)
		}
		return nil, fmt.Errorf("session %q: %w", id, err)
	}
	return s, nil
}

// openSession continues a.Session or creates a session on the workspace the
// call names, the client's first root, or the default workspace. When the
// client is to be asked for its roots first, ask is the result that asks
// (see clientRoots); in holds the answers of a call that asked.
// Before it changes anything (a profile, a mode, a new session), ready is
// given the session's folders: its error fails the call with nothing done.
func (f *face) openSession(ctx context.Context, a startArgs, in mcp.InputResponses, ready func(roots []string) error) (s *server.Session, ask *mcp.CallToolResult, err error) {
	if a.Profile != "" {
		if err := f.checkProfile(a.Profile); err != nil {
			return nil, nil, err
		}
	}
	if !server.ValidMode(a.Mode) {
		return nil, nil, badArg("mode", "unknown mode %q: default or plan", a.Mode)
	}
	if a.Session != "" {
		s, err := f.session(a.Session)
		if err != nil {
			return nil, nil, err
		}
		if a.Workspace != "" {
			if ws := s.Spec().Roots; len(ws) > 0 && filepath.Clean(a.Workspace) != ws[0] {
				return nil, nil, badArg("workspace", "session %s works in %s; omit workspace to continue it", s.ID(), ws[0])
			}
		}
		if err := ready(s.Spec().Roots); err != nil {
			return nil, nil, err
		}
		if a.Profile != "" && a.Profile != s.Spec().Profile && a.Profile != s.Info().Profile {
			if err := s.Configure(ctx, a.Profile, ""); err != nil {
				if errors.Is(err, loop.ErrBusy) {
					return nil, nil, badArg("profile", "cannot switch profile while the session is running")
				}
				return nil, nil, badArg("profile", "%v", err)
			}
		}
		if a.Mode != "" {
			if err := s.SetMode(a.Mode); err != nil {
				return nil, nil, badArg("mode", "%v", err)
			}
		}
		f.drive(ctx, s)
		return s, nil, nil
	}
	roots, ask, err := f.workspace(ctx, a.Workspace, in)
	if err != nil || ask != nil {
		return nil, ask, err
	}
	if err := ready(roots); err != nil {
		return nil, nil, err
	}
	s, err = f.mgr.Create(context.WithoutCancel(ctx), server.SessionSpec{Roots: roots, Profile: a.Profile, Mode: a.Mode})
	var refused interface{ InvalidWorkspace() bool }
	if errors.As(err, &refused) && refused.InvalidWorkspace() { // the host's word on choosing another folder
		return nil, nil, badArg("workspace", "%v", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create session: %w", err)
	}
	f.drive(ctx, s)
	return s, nil, nil
}

// workspace returns the folders of a new session: ws, else the client's
// roots, else the default workspace. ask, when not nil, is the result
// that asks the client for its roots (see clientRoots).
func (f *face) workspace(ctx context.Context, ws string, in mcp.InputResponses) (roots []string, ask *mcp.CallToolResult, err error) {
	if ws != "" {
		if !filepath.IsAbs(ws) {
			return nil, nil, badArg("workspace", "must be an absolute path, not %q", ws)
		}
		if err := isDir(ws); err != nil {
			return nil, nil, badArg("workspace", "%v", err)
		}
		return []string{filepath.Clean(ws)}, nil, nil
	}
	if roots, ask := f.clientRoots(ctx, in); ask != nil || len(roots) > 0 {
		return roots, ask, nil
	}
	if f.opts.DefaultWorkspace != "" {
		return []string{f.opts.DefaultWorkspace}, nil, nil
	}
	// Without a default, zero was started outside any project (Claude
	// Desktop starts its servers in /): the model can ask the user, and
	// the user can fix the configuration.
	return nil, nil, badArg("workspace", "required: the client sent no workspace roots and zero has no folder of its own (it was started in / or the home directory, or without --workspace). "+
		"Give workspace, the absolute path of the project's folder (ask the user which), or add --workspace DIR to zero mcp's arguments in the client's configuration")
}

func isDir(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s does not exist or cannot be read", p)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", p)
	}
	return nil
}

// rootsInput keys the roots among a call's input requests.
const rootsInput = "roots"

// clientRoots returns the client's roots when it advertised them; the
// file:// roots that are directories become the session's folders. Before
// protocol 2026-07-28 they are asked for with roots/list. From then on a
// server sends no requests: ask is an input-required result for the
// handler to return, and the client calls again with its roots in in.
// That call carries no request state: the roots are the client's word,
// checked like the workspace argument, and zero_run's state is its
// approvals'.
func (f *face) clientRoots(ctx context.Context, in mcp.InputResponses) (roots []string, ask *mcp.CallToolResult) {
	if clientCaps(ctx).Roots == nil {
		return nil, nil
	}
	if !mcp.IsModernProtocol(mcpserver.RequestProtocolVersion(ctx)) {
		return f.listRoots(ctx), nil
	}
	if _, answered := in[rootsInput]; !answered {
		return nil, mcpserver.NewInputRequestBuilder("").Roots(rootsInput).ToolResult()
	}
	if res := mcpserver.RootsResponse(in, rootsInput); res != nil {
		return fileRoots(res.Roots), nil
	}
	return nil, nil // an answer that is not a roots list: none
}

// listRoots asks a client before 2026-07-28 for its roots; one that fails
// to answer in time offers none.
func (f *face) listRoots(ctx context.Context) []string {
	rctx, cancel := context.WithTimeout(ctx, rootsLimit)
	defer cancel()
	res, err := f.srv.RequestRoots(rctx, mcp.ListRootsRequest{})
	if err != nil {
		f.log.Warn("roots/list failed", "err", err)
		return nil
	}
	return fileRoots(res.Roots)
}

// fileRoots keeps the roots that are file:// URIs of directories.
func fileRoots(rs []mcp.Root) []string {
	var roots []string
	for _, r := range rs {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) || isDir(u.Path) != nil {
			continue
		}
		roots = append(roots, filepath.Clean(u.Path))
	}
	return roots
}

// clientCaps are the capabilities of the client of ctx: those its request
// declares from protocol 2026-07-28 on (a server must not take them from
// earlier requests), those of its initialize before.
func clientCaps(ctx context.Context) mcp.ClientCapabilities {
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if ci, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo); ok {
		return ci.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

func (f *face) handleStart(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s, in, fail := f.openStart(ctx, req)
	if fail != nil {
		return fail, nil
	}
	return f.send(s, in)
}

// openStart reads the arguments of zero_start or zero_run, makes their
// message (its pictures checked, see input) and opens (or continues)
// their session; fail is the result to answer instead: a tool error, or
// the input request that asks a 2026-07-28 client for its roots. A bad
// picture fails the call before anything is opened or changed.
func (f *face) openStart(ctx context.Context, req mcp.CallToolRequest) (s *server.Session, in loop.Input, fail *mcp.CallToolResult) {
	var a startArgs
	if err := bind(req, &a); err != nil {
		return nil, in, toolError(err)
	}
	if err := checkImageArgs(a); err != nil {
		return nil, in, toolError(err)
	}
	inline, err := decodeImages(a.Images)
	if err != nil {
		return nil, in, toolError(err)
	}
	s, ask, err := f.openSession(ctx, a, req.Params.InputResponses, func(roots []string) (err error) {
		in, err = input(a, inline, roots)
		return err
	})
	if err != nil {
		return nil, in, toolError(err)
	}
	if ask != nil {
		return nil, in, ask
	}
	return s, in, nil
}

func (f *face) handleReply(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a replyArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	f.drive(ctx, s)
	return f.send(s, loop.Input{Text: a.Message})
}

func (f *face) send(s *server.Session, in loop.Input) (*mcp.CallToolResult, error) {
	cur := s.Cursor()
	run, intervened, err := s.SendInput(in)
	if err != nil {
		return toolError(fmt.Errorf("send: %w", err)), nil
	}
	out := startOut{Session: s.ID(), Run: run, Cursor: cur, Intervened: intervened, Trust: sessionTrust(s)}
	if r := s.Spec().Roots; len(r) > 0 {
		out.Workspace = r[0]
	}
	out.Next = &nextCall{Tool: "zero_status", Arguments: map[string]any{"session": s.ID(), "since": cur, "wait": 30}}
	summary := fmt.Sprintf("Started run %d of session %s; follow it with zero_status {session: %q, since: %d, wait: 30}.", run, s.ID(), s.ID(), cur)
	if intervened {
		summary = fmt.Sprintf("Session %s was running: the message was delivered to run %d as an intervention.", s.ID(), run)
	}
	if out.Trust != nil {
		summary += "\nWarning: " + out.Trust.Message
	}
	return result(out, summary), nil
}

func (f *face) handleStatus(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a statusArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	if a.Since < 0 {
		return toolError(badArg("since", "must not be negative")), nil
	}
	if a.Wait < 0 {
		return toolError(badArg("wait", "must not be negative")), nil
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	// The run's state is read before its events: a run's run_ended is in
	// the log before it stops running, so a status that says the run is
	// over holds its end, and the cursor it gives has nothing after it.
	running := s.Running()
	last, ended := s.Last()
	evs, next := s.Events(a.Since)
	if a.Since > next {
		// A made-up cursor would wait past every event to come.
		return toolError(badArg("since", "%d is beyond the session's last event (%d): pass the cursor a result gave, or 0", a.Since, next)), nil
	}
	if len(evs) == 0 && a.Wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(min(a.Wait, maxWait)*float64(time.Second)))
		_, _, _ = s.Wait(wctx, a.Since) // a timeout just means no news
		cancel()
		running = s.Running()
		last, ended = s.Last()
		evs, next = s.Events(a.Since)
	}
	out := statusOut{Session: s.ID(), Cursor: next, Running: running, Mode: s.Mode(), Plan: s.Plans(), Pending: []approval{}, Usage: s.Info().Usage}
	out.Events, out.Cursor, out.More = compactEvents(evs, out.Cursor)
	out.Events = answerOnce(out.Events)
	if ap := f.mgr.Approvals(); ap != nil {
		for _, r := range ap.Pending(s.ID()) {
			out.Pending = append(out.Pending, approval{ID: r.ID, Tool: r.Tool, Title: r.Title, Subject: r.Subject})
		}
	}
	if ended && !out.Running {
		out.Result = &lastResult{Run: last.Run, StopReason: last.StopReason, Response: last.Response, Usage: last.Usage}
		if last.Err != nil && (last.StopReason == loop.StopError || last.StopReason == loop.StopBudget) {
			out.Result.Error = last.Err.Error()
		}
	}
	return result(out, statusSummary(out)), nil
}

func statusSummary(o statusOut) string {
	var b strings.Builder
	state := "finished"
	if o.Running {
		state = "running"
	}
	fmt.Fprintf(&b, "Session %s is %s; %d new events; next cursor %d.", o.Session, state, len(o.Events), o.Cursor)
	for _, p := range o.Pending {
		fmt.Fprintf(&b, "\nWaiting for approval %s: %s (call zero_approve).", p.ID, p.Title)
	}
	if o.Result != nil && !o.Running {
		fmt.Fprintf(&b, "\nLast run %d ended: %s.", o.Result.Run, o.Result.StopReason)
		if o.Result.Usage != nil {
			fmt.Fprintf(&b, " Usage: %s.", o.Result.Usage.Line())
		}
		if o.Result.Response != "" {
			b.WriteString("\nAnswer: " + o.Result.Response)
		}
	}
	return b.String()
}

func (f *face) handleApprove(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a approveArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	ap := f.mgr.Approvals()
	if ap == nil {
		return toolError(badArg("id", "this server asks for no approvals")), nil
	}
	var err error
	if *a.Approve {
		err = ap.Approve(a.ID, a.Always)
	} else {
		err = ap.Deny(a.ID, cmpOr(a.Reason, "refused by the user"))
	}
	if errors.Is(err, server.ErrNotFound) {
		return toolError(badArg("id", "no pending approval %q (it may have been answered or its run ended)", a.ID)), nil
	}
	if err != nil {
		return toolError(fmt.Errorf("approve: %w", err)), nil
	}
	verb := "Refused"
	if *a.Approve {
		verb = "Approved"
	}
	return result(approveOut{ID: a.ID, Approved: *a.Approve, Always: a.Always && *a.Approve}, verb+" "+a.ID+"."), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (f *face) handleCancel(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a sessionArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	s, err := f.session(a.Session)
	if err != nil {
		return toolError(err), nil
	}
	was := s.Running()
	s.Cancel()
	msg := "Cancelled the run of session " + s.ID() + "."
	if !was {
		msg = "Session " + s.ID() + " had no run going on."
	}
	return result(cancelOut{Session: s.ID(), Cancelled: was}, msg), nil
}

func (f *face) handleSessions(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a sessionsArgs
	if err := bind(req, &a); err != nil {
		return toolError(err), nil
	}
	if a.Workspace != "" {
		if !filepath.IsAbs(a.Workspace) {
			return toolError(badArg("workspace", "must be an absolute path")), nil
		}
		a.Workspace = filepath.Clean(a.Workspace)
	}
	out := sessionsOut{Sessions: f.mgr.ListWith(server.ListOptions{Workspace: a.Workspace, All: a.All})}
	if out.Sessions == nil {
		out.Sessions = []server.Info{}
	}
	return result(out, fmt.Sprintf("%d sessions.", len(out.Sessions))), nil
}
