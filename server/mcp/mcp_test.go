package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/server"
)

func TestStartStatusCursorFlow(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "say hello", Reasoning: "I should run echo", ChunkSize: 2, Content: command("run echo", "echo hello-out")},
		llmtest.Reply{Match: "hello-out", Content: answer("done: hello-out")})
	r := startStdio(t, env, clientOpts{})
	st, res := call(t, r.c, "zero_start", map[string]any{"message": "say hello", "workspace": env.Workspace})
	mustOK(t, res)
	session := st["session"].(string)
	if st["run"] != float64(1) || st["intervened"] != false {
		t.Fatalf("zero_start = %v", st)
	}
	last, evs := poll(t, r.c, session, st["cursor"].(float64), finished)
	result := last["result"].(map[string]any)
	if u, _ := result["usage"].(map[string]any); u == nil || u["calls"] != float64(2) {
		t.Errorf("the last run's usage = %v, want its two calls", result["usage"])
	}
	if u, _ := last["session_usage"].(map[string]any); u == nil || u["calls"] != float64(2) {
		t.Errorf("session_usage = %v, want the session's two calls", last["session_usage"])
	}
	delete(result, "usage")
	if diff := cmp.Diff(map[string]any{"run": float64(1), "stop_reason": "response", "response": "done: hello-out"}, result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	answerAt := index(evs, func(e map[string]any) bool { return e["type"] == "response" })
	for _, want := range []func(map[string]any) bool{
		func(e map[string]any) bool { return e["type"] == "reasoning_delta" },
		func(e map[string]any) bool { return e["type"] == "thoughts_delta" },
		func(e map[string]any) bool { return e["type"] == "headline" && e["text"] == "H: run echo" },
		func(e map[string]any) bool { return e["type"] == "tool_call" && e["kind"] == "execute" },
		func(e map[string]any) bool {
			return e["type"] == "tool_output_delta" && strings.Contains(fmt.Sprint(e["text"]), "hello-out")
		},
		func(e map[string]any) bool { return e["type"] == "tool_result" && e["status"] == "completed" },
	} {
		if i := index(evs, want); i < 0 || answerAt < 0 || i > answerAt {
			t.Errorf("event missing or after the answer (%d vs %d): %v", i, answerAt, types(evs))
		}
	}
	if i := index(evs, func(e map[string]any) bool { return e["tool"] == "response" }); i >= 0 {
		t.Errorf("the response tool shows as a tool call: %v", evs[i])
	}
	// Consecutive deltas are joined: one reasoning entry for the one reply.
	n, reasoning := 0, ""
	for _, e := range evs {
		if e["type"] == "reasoning_delta" {
			n++
			reasoning += e["text"].(string)
		}
	}
	if reasoning != "I should run echo" || n >= 9 {
		t.Errorf("%d reasoning_delta entries %q, want the 9 chunks joined", n, reasoning)
	}
	// The cursor moves on: nothing new after it.
	again, _ := call(t, r.c, "zero_status", map[string]any{"session": session, "since": last["cursor"]})
	if evs := again["events"].([]any); len(evs) != 0 {
		t.Errorf("events after the final cursor: %v", evs)
	}

	// The session is a resource holding its transcript.
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	list, err := r.c.ListResources(ctx, mcp.ListResourcesRequest{})
	// zero://memories first (the agent's memory), then the sessions.
	if err != nil || len(list.Resources) != 2 || list.Resources[0].URI != "zero://memories" || list.Resources[1].URI != "zero://session/"+session {
		t.Fatalf("resources/list = %+v, %v", list, err)
	}
	tpl, err := r.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpl.ResourceTemplates) != 2 {
		t.Fatalf("resources/templates/list = %+v, %v", tpl, err)
	}
	rd, err := r.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "zero://session/" + session}})
	if err != nil {
		t.Fatal(err)
	}
	md := rd.Contents[0].(mcp.TextResourceContents).Text
	for _, want := range []string{"## User\n\nsay hello", "echo hello-out", "hello-out", "## Zero\n\ndone: hello-out"} {
		if !strings.Contains(md, want) {
			t.Errorf("transcript lacks %q:\n%s", want, md)
		}
	}
	if _, err := r.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "zero://session/nope"}}); err == nil {
		t.Error("reading an unknown session succeeded")
	}
	ss, res := call(t, r.c, "zero_sessions", map[string]any{})
	mustOK(t, res)
	if got := ss["sessions"].([]any); len(got) != 1 || got[0].(map[string]any)["id"] != session {
		t.Errorf("zero_sessions = %v", ss)
	}
}

func TestRunProgressAndLogs(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "build it", Content: command("compile things", "echo built")},
		llmtest.Reply{Match: "built", Content: answer("all built")})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) { f.keepalive = 50 * time.Millisecond })
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	if err := r.c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: "zero_run", Arguments: map[string]any{"message": "build it", "workspace": env.Workspace},
		Meta: &mcp.Meta{ProgressToken: "tok-1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, res)
	out := structured(t, res)
	if out["stop_reason"] != "response" || out["response"] != "all built" || !strings.Contains(text(res), "all built") {
		t.Fatalf("zero_run = %v / %q", out, text(res))
	}
	waitFor(t, func() bool {
		for _, p := range r.notes.find("notifications/progress") {
			if p["progressToken"] == "tok-1" && strings.Contains(fmt.Sprint(p["message"]), "H: compile things") {
				return true
			}
		}
		return false
	}, "progress with the headline")
	waitFor(t, func() bool {
		for _, p := range r.notes.find("notifications/message") {
			if strings.Contains(fmt.Sprint(p["data"]), "tool call") {
				return true
			}
		}
		return false
	}, "a log notification of the tool call")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIntervention(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "long task", Content: command("working slowly", "echo slow"), ChunkSize: 4, HoldAfter: 12}, // held mid-stream, its thoughts begun, until the intervention cuts it
		llmtest.Reply{Match: "also say banana", Content: answer("banana noted")})
	r := startStdio(t, env, clientOpts{})
	st, res := call(t, r.c, "zero_start", map[string]any{"message": "long task", "workspace": env.Workspace})
	mustOK(t, res)
	session := st["session"].(string)
	// Its thoughts streaming: the model is mid-reply, held there until the
	// intervention cuts it.
	poll(t, r.c, session, 0, func(st map[string]any) bool {
		return slices.ContainsFunc(st["events"].([]any), func(e any) bool { return e.(map[string]any)["type"] == "thoughts_delta" })
	})
	rep, res := call(t, r.c, "zero_reply", map[string]any{"session": session, "message": "also say banana"})
	mustOK(t, res)
	if rep["intervened"] != true || !strings.Contains(text(res), "intervention") {
		t.Fatalf("zero_reply during a run = %v", rep)
	}
	last, _ := poll(t, r.c, session, 0, finished)
	if got := last["result"].(map[string]any)["response"]; got != "banana noted" {
		t.Errorf("response = %v, want the intervention's answer", got)
	}
	rd, err := r.c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "zero://session/" + session}})
	if err != nil {
		t.Fatal(err)
	}
	if md := rd.Contents[0].(mcp.TextResourceContents).Text; !strings.Contains(md, "## User (during the run)\n\nalso say banana") {
		t.Errorf("the transcript lacks the intervention:\n%s", md)
	}
	// After the run, zero_reply starts run 2 (the model has no reply left,
	// so it fails, which does not matter here).
	rep, res = call(t, r.c, "zero_reply", map[string]any{"session": session, "message": "again"})
	mustOK(t, res)
	if rep["intervened"] != false || rep["run"] != float64(2) {
		t.Errorf("zero_reply after the run = %v", rep)
	}
	poll(t, r.c, session, 0, finished)
}

func TestCancelMidCommand(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Match: "wait a lot", Content: command("sleeping", "sleep 30")})
	r := startStdio(t, env, clientOpts{})
	st, res := call(t, r.c, "zero_start", map[string]any{"message": "wait a lot", "workspace": env.Workspace})
	mustOK(t, res)
	session := st["session"].(string)
	poll(t, r.c, session, 0, func(st map[string]any) bool {
		return index(toMaps(st["events"]), func(e map[string]any) bool { return e["type"] == "tool_started" }) >= 0
	})
	c, res := call(t, r.c, "zero_cancel", map[string]any{"session": session})
	mustOK(t, res)
	if c["cancelled"] != true {
		t.Errorf("zero_cancel = %v", c)
	}
	last, _ := poll(t, r.c, session, 0, finished)
	if got := last["result"].(map[string]any)["stop_reason"]; got != "cancelled" {
		t.Errorf("stop_reason = %v", got)
	}
}

func toMaps(v any) []map[string]any {
	var out []map[string]any
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func TestApproveWithTool(t *testing.T) {
	for _, tt := range []struct {
		name    string
		approve bool
		want    string
	}{
		{"granted", true, "ran: approved-42"},
		{"refused", false, "not allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newRiskyEnv(t)
			r := startStdio(t, env, clientOpts{})
			st, res := call(t, r.c, "zero_start", map[string]any{"message": "risky", "workspace": env.Workspace})
			mustOK(t, res)
			session := st["session"].(string)
			waiting, _ := poll(t, r.c, session, 0, func(st map[string]any) bool { return len(st["pending_approvals"].([]any)) > 0 })
			p := waiting["pending_approvals"].([]any)[0].(map[string]any)
			if p["tool"] != "code_execution_tool" || p["title"] == "" {
				t.Errorf("pending approval = %v", p)
			}
			if !strings.Contains(text(mustResult(t, r.c, session)), "zero_approve") {
				t.Error("zero_status text does not tell to call zero_approve")
			}
			ap, res := call(t, r.c, "zero_approve", map[string]any{"id": p["id"], "approve": tt.approve})
			mustOK(t, res)
			if ap["approved"] != tt.approve {
				t.Errorf("zero_approve = %v", ap)
			}
			last, _ := poll(t, r.c, session, 0, finished)
			if got := last["result"].(map[string]any)["response"]; got != tt.want {
				t.Errorf("response = %v, want %q", got, tt.want)
			}
			_, res = call(t, r.c, "zero_approve", map[string]any{"id": p["id"], "approve": true})
			if !res.IsError || !strings.HasPrefix(text(res), "id: ") {
				t.Errorf("answering twice = %q, want an error naming id", text(res))
			}
		})
	}
}

func mustResult(t *testing.T, c *client.Client, session string) *mcp.CallToolResult {
	_, res := call(t, c, "zero_status", map[string]any{"session": session})
	return res
}

type elicitor struct {
	action mcp.ElicitationResponseAction
	mu     sync.Mutex
	asked  []string
}

func (e *elicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action, Content: map[string]any{}}}, nil
}

func TestApproveWithElicitation(t *testing.T) {
	for _, tt := range []struct {
		action mcp.ElicitationResponseAction
		want   string
	}{
		{mcp.ElicitationResponseActionAccept, "ran: approved-42"},
		{mcp.ElicitationResponseActionDecline, "not allowed"},
	} {
		t.Run(string(tt.action), func(t *testing.T) {
			env := newRiskyEnv(t)
			el := &elicitor{action: tt.action}
			r := startStdio(t, env, clientOpts{elicit: el})
			out, res := call(t, r.c, "zero_run", map[string]any{"message": "risky", "workspace": env.Workspace})
			mustOK(t, res)
			if out["response"] != tt.want {
				t.Errorf("zero_run = %v, want %q", out, tt.want)
			}
			el.mu.Lock()
			defer el.mu.Unlock()
			if len(el.asked) != 1 || !strings.Contains(el.asked[0], "Allow") {
				t.Errorf("elicitations = %q", el.asked)
			}
		})
	}
}

func TestParallelRunsDoNotQueue(t *testing.T) {
	env := newEnv(t, nil,
		llmtest.Reply{Match: "slow one", Content: command("sleeping", "sleep 30")},
		llmtest.Reply{Match: "quick one", Content: answer("quick done")})
	r := startStdio(t, env, clientOpts{})
	type out struct {
		m   map[string]any
		res *mcp.CallToolResult
	}
	slow := make(chan out, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), waitLong)
		defer cancel()
		res, err := r.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
			Arguments: map[string]any{"message": "slow one", "workspace": env.Workspace}}})
		if err != nil {
			res = mcp.NewToolResultError(err.Error())
		}
		slow <- out{structured(t, res), res}
	}()
	var slowID string
	waitFor(t, func() bool {
		for _, in := range env.Manager.List() {
			if in.Running && in.Title == "slow one" {
				slowID = in.ID
				return true
			}
		}
		return false
	}, "the slow run")
	q, res := call(t, r.c, "zero_run", map[string]any{"message": "quick one", "workspace": env.Workspace})
	mustOK(t, res)
	if q["response"] != "quick done" {
		t.Fatalf("quick zero_run = %v", q)
	}
	select {
	case o := <-slow:
		t.Fatalf("the slow run ended first: %v", o.m)
	default:
	}
	call(t, r.c, "zero_cancel", map[string]any{"session": slowID})
	o := <-slow
	if o.m["stop_reason"] != "cancelled" {
		t.Errorf("slow zero_run = %v %q", o.m, text(o.res))
	}
}

func TestRequestCancelCancelsRun(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Match: "slow one", Content: command("sleeping", "sleep 30")})
	r := startStdio(t, env, clientOpts{})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := r.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
			Arguments: map[string]any{"message": "slow one", "workspace": env.Workspace}}})
		errc <- err
	}()
	var id string
	waitFor(t, func() bool {
		for _, in := range env.Manager.List() {
			if in.Running {
				id = in.ID
				s, _ := env.Manager.Get(id)
				evs, _ := s.Events(0)
				for _, e := range evs {
					if e.Type == "tool_started" {
						return true
					}
				}
			}
		}
		return false
	}, "the command to start")
	cancel() // the client sends notifications/cancelled
	<-errc
	waitFor(t, func() bool {
		s, _ := env.Manager.Get(id)
		last, ok := s.Last()
		return ok && last.StopReason == "cancelled"
	}, "the run to be cancelled")
}

func TestBadArguments(t *testing.T) {
	env := newEnv(t, nil)
	r := startStdio(t, env, clientOpts{})
	file := env.Workspace + "/f.txt"
	if err := writeFile(file); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"zero_start", map[string]any{}, "message: required"},
		{"zero_start", map[string]any{"message": 3}, "message: must be a string"},
		{"zero_start", map[string]any{"message": "x"}, "workspace: required"},
		{"zero_start", map[string]any{"message": "x", "workspace": "rel/dir"}, "workspace: must be an absolute path"},
		{"zero_start", map[string]any{"message": "x", "workspace": "/no/such/dir"}, "workspace: /no/such/dir does not exist"},
		{"zero_start", map[string]any{"message": "x", "workspace": file}, "is not a directory"},
		{"zero_start", map[string]any{"message": "x", "workspace": env.Workspace, "profile": "nope"}, "profile: unknown profile"},
		{"zero_start", map[string]any{"message": "x", "session": "nope"}, `session: no session "nope"`},
		{"zero_start", map[string]any{"message": "x", "wait_for_previous": true, "workspace": "rel"}, "workspace: must be an absolute path"}, // unknown arguments are ignored
		{"zero_status", map[string]any{"session": "nope"}, "session: no session"},
		{"zero_status", map[string]any{"session": "s", "since": "x"}, "since: must be a number"},
		{"zero_status", map[string]any{"session": "s", "wait": -1}, "wait: must not be negative"},
		{"zero_reply", map[string]any{"session": "s"}, "message: required"},
		{"zero_approve", map[string]any{"id": "x"}, "approve: required"},
		{"zero_approve", map[string]any{"id": "x", "approve": "yes"}, "approve: must be a boolean"},
		{"zero_approve", map[string]any{"id": "x", "approve": true}, "id: no pending approval"},
		{"zero_cancel", map[string]any{}, "session: required"},
		{"zero_run", map[string]any{"message": "x", "workspace": "rel"}, "workspace: must be an absolute path"},
	} {
		_, res := call(t, r.c, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s %v = error %v %q, want %q", tt.tool, tt.args, res.IsError, text(res), tt.want)
		}
	}
	// A cursor no result gave (a model's guess) would wait past every
	// event to come: refused, with the session's cursor.
	s, err := env.Manager.Create(t.Context(), server.SessionSpec{Roots: []string{env.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, res := call(t, r.c, "zero_status", map[string]any{"session": s.ID(), "since": 1000000}); !res.IsError ||
		!strings.Contains(text(res), fmt.Sprintf("since: 1000000 is beyond the session's last event (%d)", s.Cursor())) {
		t.Errorf("zero_status with a made-up cursor = %v %q", res.IsError, text(res))
	}
	// Every tool declares its input and output schema.
	var names []string
	for _, tl := range listTools(t, r.c) {
		names = append(names, tl.Name)
		if len(tl.RawOutputSchema) == 0 && tl.OutputSchema.Type == "" {
			t.Errorf("%s has no output schema", tl.Name)
		}
	}
	if diff := cmp.Diff([]string{"zero_approve", "zero_cancel", "zero_compact", "zero_fork", "zero_reply", "zero_rewind", "zero_run", "zero_sessions", "zero_start", "zero_status", "zero_trust", "zero_undo"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestDefaultWorkspaceAndRoots(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	r := startStdioFace(t, env, clientOpts{}, func(f *face) { f.opts.DefaultWorkspace = env.Workspace })
	st, res := call(t, r.c, "zero_run", map[string]any{"message": "hi"})
	mustOK(t, res)
	s, err := env.Manager.Get(st["session"].(string))
	if err != nil || s.Spec().Roots[0] != env.Workspace {
		t.Errorf("session roots = %v, %v", s.Spec().Roots, err)
	}
}

func TestRawStdioRobustness(t *testing.T) {
	env := newEnv(t, nil)
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(t.Context(), sr, sw, Options{Manager: env.Manager}); sw.Close() }()
	lines := rawLines(cr)
	send := func(s string) {
		if _, err := io.WriteString(cw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server output ended")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("bad line %q: %v", l, err)
			}
			return m
		case <-time.After(waitLong):
			t.Fatal("no answer")
		}
		return nil
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize"`) // cut short
	if m := next(); code(m) != mcp.PARSE_ERROR {
		t.Errorf("malformed line: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(); m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("initialize after a bad line: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`)
	if m := next(); code(m) != mcp.METHOD_NOT_FOUND {
		t.Errorf("unknown method: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"zero_status","arguments":{"session":7}}}`)
	if m := next(); !strings.Contains(fmt.Sprint(m["result"]), "session: must be a string") {
		t.Errorf("bad argument: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"nonsense"}`)
	// mcp-go answers params of the wrong type with "invalid request".
	if m := next(); (code(m) != mcp.INVALID_REQUEST && code(m) != mcp.INVALID_PARAMS) || !strings.Contains(fmt.Sprint(m["error"]), "params") {
		t.Errorf("params not an object: %v", m)
	}
	cw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after EOF = %v, want nil", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio did not return within a minute of EOF")
	}
}

func TestEOFEndsRuns(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Match: "slow one", Content: command("sleeping", "sleep 30")})
	r := startStdio(t, env, clientOpts{})
	st, res := call(t, r.c, "zero_start", map[string]any{"message": "slow one", "workspace": env.Workspace})
	mustOK(t, res)
	s, _ := env.Manager.Get(st["session"].(string))
	waitFor(t, s.Running, "the run")
	r.in.Close()
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatal("ServeStdio did not return within a minute of EOF")
	}
	if s.Running() {
		t.Error("the run goes on after ServeStdio returned")
	}
}

func writeFile(p string) error {
	return os.WriteFile(p, []byte("x"), 0o644)
}

func startHTTP(t *testing.T, env *servertest.Env) (string, string) {
	t.Helper()
	return serveHTTPInTest(t, func(ctx context.Context, ln net.Listener, token string) error {
		return ServeHTTP(ctx, ln, token, Options{Manager: env.Manager, Catalog: env.Catalog})
	}), "secret-token"
}

// serveHTTPInTest runs serve on a loopback listener with the token
// secret-token until the test ends, and returns the endpoint's URL.
func serveHTTPInTest(t *testing.T, serve func(ctx context.Context, ln net.Listener, token string) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, "secret-token") }() // owned: the cleanup waits for done
	t.Cleanup(func() {
		cancel()
		// No deadline (see call): a server that never returns is a hang.
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP = %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	env := newEnv(t, askCommands,
		llmtest.Reply{Match: "risky", Content: command("risky step", "echo approved-$((40+2))")},
		llmtest.Reply{Match: "approved-42", Content: answer("ran: approved-42")})
	url, token := startHTTP(t, env)

	for _, auth := range []string{"", "Bearer wrong", "secret-token", "bearer secret-token"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}

	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	el := &elicitor{action: mcp.ElicitationResponseActionAccept}
	c := client.NewClient(tr, client.WithLegacyProtocolOnly(), client.WithElicitationHandler(el))
	n := &notes{}
	c.OnNotification(n.add)
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "zero_run",
		Arguments: map[string]any{"message": "risky", "workspace": env.Workspace}, Meta: &mcp.Meta{ProgressToken: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, res)
	if out := structured(t, res); out["response"] != "ran: approved-42" {
		t.Errorf("zero_run over HTTP = %v", out)
	}
	if len(n.find("notifications/progress")) == 0 {
		t.Error("no progress over HTTP")
	}
	el.mu.Lock()
	defer el.mu.Unlock()
	if len(el.asked) != 1 {
		t.Errorf("elicitations over HTTP = %q", el.asked)
	}
}

// Clients add arguments of their own (Gemini CLI sends wait_for_previous
// with every call): they are ignored, and no schema forbids them.
func TestUnknownArgumentsIgnored(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ran anyway")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "hi", "workspace": env.Workspace, "wait_for_previous": true})
	mustOK(t, res)
	if out["response"] != "ran anyway" {
		t.Errorf("zero_run with an extra argument: %v", out)
	}
	for _, tl := range listTools(t, r.c) {
		// The client decodes the schema into InputSchema (RawInputSchema is
		// the server's side).
		if in, _ := json.Marshal(tl.InputSchema); tl.InputSchema.Type != "object" || strings.Contains(string(in), "additionalProperties") {
			t.Errorf("%s's input schema forbids extra arguments: %s", tl.Name, in)
		}
	}
}
