package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
)

// A message sent while a command runs is an intervention, in every face:
// the command keeps running, the model's next request carries what it
// printed so far, the note that it still runs in session 0 (and how to wait
// for it, type into it or stop it) and the user's message; a later
// `output` call gets what the command printed after; the output is shown
// once. The command ticks until the test lets it finish (the gate file),
// and the model's reply after the message holds until the gate is there,
// so nothing depends on how fast the machine is.

// tickCommand ticks once a second until the file gate appears in the
// workspace, ticks once more (the test opens the gate after the message,
// so that tick is a later one), then prints finished-42 (a text its
// command line does not hold) and ends.
const tickCommand = `i=0; until [ -e gate ]; do i=$((i+1)); echo tick $i; sleep 1; done; echo tick $((i+1)); echo finished-$((6*7))`

// hurry is the user's message during the command.
const hurry = "PLEASE-HURRY how far is it"

// stillRunning is what the model is told about the command.
const stillRunning = "still running in session 0"

func interveneReplies() []llmtest.Reply {
	return []llmtest.Reply{
		{Content: `{"thoughts": ["start the counter"], "headline": "Counting", "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "` + tickCommand + `"}}`},
		// The reply to the message holds at its first chunk: the test
		// opens the gate then, so the command has ticked on meanwhile.
		{Match: hurry, HoldAfter: 1, Content: `{"thoughts": ["wait for the rest"], "headline": "Waiting for the counter", "tool_name": "code_execution_tool", "tool_args": {"runtime": "output", "session": 0}}`},
		{Match: "finished-42", Content: `{"thoughts": ["done"], "headline": "Answering", "tool_name": "response", "tool_args": {"text": "ALL-DONE"}}`},
	}
}

// openGate waits until the model was asked with the user's message (its
// reply holds), lets the command finish and the reply go on.
func openGate(t *testing.T, srv *llmtest.Server, held <-chan struct{}, ws string) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked after the message")
	}
	mustWrite(t, filepath.Join(ws, "gate"), "")
	srv.Release()
}

var tickRE = regexp.MustCompile(`tick (\d+)`)

// ticks are the tick numbers in s, in order.
func ticks(s string) []int {
	var out []int
	for _, m := range tickRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// checkOnce fails unless ticks counts 1, 2, ... k, each once.
func checkOnce(t *testing.T, where string, got []int) {
	t.Helper()
	for i, n := range got {
		if n != i+1 {
			t.Errorf("%s shows the ticks %v, want each once, in order", where, got)
			return
		}
	}
}

func requestText(r llmtest.Recorded) string {
	var b strings.Builder
	for _, m := range r.Messages[1:] { // the system prompt lists the tools, not the run
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	return b.String()
}

// checkModelSaw checks the model's requests: the one after the message
// holds the ticks so far, the note and the message, in that order; the one
// after the output call holds later ticks only, and the command's end.
// It returns the ticks the model got in all.
func checkModelSaw(t *testing.T, srv *llmtest.Server) []int {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3 (the command, the message, the output)", len(reqs))
	}
	second := requestText(reqs[1])
	tickAt, noteAt, msgAt := strings.Index(second, "tick 2"), strings.Index(second, stillRunning), strings.Index(second, hurry)
	if tickAt < 0 || noteAt < tickAt || msgAt < noteAt {
		t.Errorf("the request after the message should hold the output so far, then %q, then the message:\n%s", stillRunning, second)
	}
	for _, how := range []string{`runtime \"output\"`, "input tool", `\"reset\"`} {
		if !strings.Contains(second, how) {
			t.Errorf("the note should say how to go on (%s):\n%s", how, second)
		}
	}
	if strings.Contains(second, "still busy with an earlier command") {
		t.Errorf("the model is told the shell was busy, which it was not:\n%s", second)
	}
	before := ticks(second)
	checkOnce(t, "the request after the message", before)

	third := requestText(reqs[2])
	at := strings.LastIndex(third, "Waiting for the counter")
	if at < 0 || !strings.Contains(third[at:], "finished-42") {
		t.Fatalf("the output call should get the command's end:\n%s", third)
	}
	after := ticks(third[at:])
	if len(after) == 0 {
		t.Errorf("the output call got no later ticks: the command stopped?\n%s", third[at:])
	}
	all := append(slices.Clone(before), after...)
	checkOnce(t, "the model's two results", all)
	return all
}

// The terminal chat: the ticks show once (the user's message between them
// and the result does not make the result print them again), the result
// says the command still runs, and the model gets the rest.
func TestInterveneChatDuringCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, interveneReplies()...)
	ws := t.TempDir()
	ct := startChat(t, srv, ws, "--approval", "auto")
	ct.ready()
	at := ct.send("count for me")
	ct.waitFor(at, "tick 2")
	held := srv.Held()
	at = ct.send(hurry)
	ct.waitFor(at, "sent to the running agent")
	openGate(t, srv, held, ws)
	ct.answered(at, "ALL-DONE")
	all := checkModelSaw(t, srv)

	out := ct.text()
	var shown []int
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if m := regexp.MustCompile(`^tick (\d+)$`).FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			shown = append(shown, n)
		}
	}
	checkOnce(t, "the terminal", shown)
	if !slices.Equal(shown, all) {
		t.Errorf("the terminal showed the ticks %v, the model got %v", shown, all)
	}
	if n := strings.Count(out, "finished-42"); n != 1 {
		t.Errorf("the command's end shows %d times, want once", n)
	}
	if !strings.Contains(out, "still running") {
		t.Errorf("the chat should say the command still runs:\n%s", out)
	}
	if strings.Contains(out, "[SYSTEM:") || strings.Contains(out, "still busy") {
		t.Errorf("the chat shows the note meant for the model:\n%s", out)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// faceClient speaks JSON-RPC to a zero face over its stdin and stdout:
// lines (ACP, MCP) or LSP frames. Requests from the face are refused, so
// nothing waits on them; notifications are kept, and a test waits for one
// with waitNote.
type faceClient struct {
	t    *testing.T
	wire framing
	in   interface{ Write([]byte) (int, error) }

	mu      sync.Mutex
	cond    *sync.Cond
	id      int
	results map[int]json.RawMessage
	notes   []string
	closed  bool
}

func startFace(t *testing.T, wire framing, env []string, args ...string) *faceClient {
	t.Helper()
	cmd := zeroCmd(t, env, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &faceClient{t: t, wire: wire, in: in, results: map[int]json.RawMessage{}}
	c.cond = sync.NewCond(&c.mu)
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stderr of zero %s:\n%s", args[0], stderr.String())
		}
	})
	go func() { // ends when the face closes its stdout
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			raw, err := wire.read(r)
			if err != nil {
				c.mu.Lock()
				c.closed = true
				c.cond.Broadcast()
				c.mu.Unlock()
				return
			}
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(raw, &m) != nil {
				continue
			}
			c.mu.Lock()
			switch {
			case m.Method != "" && m.ID != nil: // a request from the face
				c.writeLocked(map[string]any{"jsonrpc": "2.0", "id": *m.ID, "error": map[string]any{"code": -32601, "message": "not supported by this client"}})
			case m.Method != "":
				c.notes = append(c.notes, string(raw))
			case m.ID != nil && m.Error != nil:
				c.results[*m.ID] = json.RawMessage(`{"error":` + string(m.Error) + `}`)
			case m.ID != nil:
				c.results[*m.ID] = m.Result
			}
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *faceClient) writeLocked(msg map[string]any) {
	raw, _ := json.Marshal(msg)
	if _, err := c.in.Write(c.wire.frame(raw)); err != nil {
		c.t.Errorf("writing to the face: %v", err)
	}
}

// send sends a request and returns its id; await gets its result.
func (c *faceClient) send(method string, params any) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	c.writeLocked(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	return c.id
}

func (c *faceClient) notify(method string, params any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeLocked(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// wait waits until cond holds (under c.mu); chatWait only guards against
// a hang.
func (c *faceClient) wait(what string, cond func() bool) {
	c.t.Helper()
	c.until(what, cond, false)
}

// waitExit waits until the face has closed its output (it exited).
func (c *faceClient) waitExit() {
	c.t.Helper()
	c.until("the face's exit", func() bool { return c.closed }, true)
}

// until waits for cond, under c.mu, woken by every message of the face;
// a face that closes its output first fails the test unless closedOK.
func (c *faceClient) until(what string, cond func() bool, closedOK bool) {
	c.t.Helper()
	timer := time.AfterFunc(chatWait, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(chatWait)
	c.mu.Lock()
	defer c.mu.Unlock()
	for !cond() {
		if c.closed && !closedOK {
			c.t.Fatalf("the face closed its output before %s", what)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("never saw %s; notifications:\n%s", what, strings.Join(c.notes, "\n"))
		}
		c.cond.Wait()
	}
}

func (c *faceClient) await(id int) json.RawMessage {
	c.t.Helper()
	var res json.RawMessage
	c.wait(fmt.Sprintf("the answer to request %d", id), func() bool {
		r, ok := c.results[id]
		res = r
		return ok
	})
	if strings.HasPrefix(string(res), `{"error":`) {
		c.t.Fatalf("request %d failed: %s", id, res)
	}
	return res
}

func (c *faceClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	return c.await(c.send(method, params))
}

// waitNote waits for a notification that contains want.
func (c *faceClient) waitNote(want string) {
	c.t.Helper()
	c.wait("a notification with "+want, func() bool {
		return slices.ContainsFunc(c.notes, func(n string) bool { return strings.Contains(n, want) })
	})
}

func (c *faceClient) allNotes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.notes)
}

func faceEnvFor(srv *llmtest.Server) []string {
	return []string{"ZERO_MODEL=" + llmtest.ModelName, "OPENAI_BASE_URL=" + srv.URL(), "ZERO_APPROVAL=auto"}
}

// acpCall is a tool call as an ACP editor shows it, after the updates.
type acpCall struct {
	id, status, content string
}

// acpCalls folds the session/update notifications into the tool calls, in
// the order they started.
func acpCalls(notes []string) []*acpCall {
	var calls []*acpCall
	byID := map[string]*acpCall{}
	for _, n := range notes {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					ToolCallID    string `json:"toolCallId"`
					Status        string `json:"status"`
					Content       []struct {
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(n), &m) != nil || m.Method != "session/update" {
			continue
		}
		u := m.Params.Update
		if u.SessionUpdate != "tool_call" && u.SessionUpdate != "tool_call_update" {
			continue
		}
		c := byID[u.ToolCallID]
		if c == nil {
			c = &acpCall{id: u.ToolCallID}
			byID[u.ToolCallID] = c
			calls = append(calls, c)
		}
		if u.Status != "" {
			c.status = u.Status
		}
		if len(u.Content) > 0 { // an update's content replaces what was shown
			var b strings.Builder
			for _, part := range u.Content {
				b.WriteString(part.Content.Text)
			}
			c.content = b.String()
		}
	}
	return calls
}

// ACP: the second session/prompt during the run is the message (it ends
// its turn at once); the command's tool call completes (it returned what
// there was) showing the ticks once and that the command still runs, and
// the output call shows the rest.
func TestInterveneACPDuringCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, interveneReplies()...)
	ws := t.TempDir()
	c := startFace(t, lines, faceEnvFor(srv), "acp", "--workspace", ws)
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(c.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}}), &s); err != nil || s.SessionID == "" {
		t.Fatalf("session/new: %v", err)
	}
	prompt := func(text string) int {
		return c.send("session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	first := prompt("count for me")
	c.waitNote("tick 2")
	held := srv.Held()
	if res := c.await(prompt(hurry)); !strings.Contains(string(res), "end_turn") {
		t.Errorf("the message's prompt = %s, want end_turn", res)
	}
	openGate(t, srv, held, ws)
	if res := c.await(first); !strings.Contains(string(res), "end_turn") {
		t.Fatalf("the run's prompt = %s, want end_turn", res)
	}
	all := checkModelSaw(t, srv)

	calls := acpCalls(c.allNotes())
	if len(calls) != 2 {
		t.Fatalf("want 2 tool calls (the command, the output), got %d", len(calls))
	}
	cmd, out := calls[0], calls[1]
	if cmd.status != "completed" || !strings.Contains(cmd.content, stillRunning) {
		t.Errorf("the command's call should complete and say it still runs: %s\n%s", cmd.status, cmd.content)
	}
	if out.status != "completed" || !strings.Contains(out.content, "finished-42") {
		t.Errorf("the output call should complete with the command's end: %s\n%s", out.status, out.content)
	}
	shown := append(ticks(cmd.content), ticks(out.content)...)
	checkOnce(t, "the editor", shown)
	if !slices.Equal(shown, all) {
		t.Errorf("the editor showed the ticks %v, the model got %v", shown, all)
	}
}

// lspEvents are the events of zero/event notifications.
func lspEvents(notes []string) []loop.Event {
	var evs []loop.Event
	for _, n := range notes {
		var m struct {
			Method string     `json:"method"`
			Params loop.Event `json:"params"`
		}
		if json.Unmarshal([]byte(n), &m) == nil && m.Method == "zero/event" {
			evs = append(evs, m.Params)
		}
	}
	return evs
}

// checkEvents checks a face's events: each tool call's output streams each
// tick once, the command's result is completed and says it still runs
// (Running), and the output call's result has the command's end.
func checkEvents(t *testing.T, evs []loop.Event, all []int) {
	t.Helper()
	var results []loop.Event
	var streamed strings.Builder
	for _, e := range evs {
		switch e.Type {
		case loop.EventToolOutputDelta:
			streamed.WriteString(e.Text)
		case loop.EventToolResult:
			if e.Tool != "response" {
				results = append(results, e)
			}
		}
	}
	if len(results) != 2 {
		t.Fatalf("want 2 tool results (the command, the output), got %d: %+v", len(results), results)
	}
	cmd, out := results[0], results[1]
	if cmd.Status != loop.ToolCompleted || !cmd.Running || !strings.Contains(cmd.Text, stillRunning) {
		t.Errorf("the command's result should be completed, running, and say so: %+v", cmd)
	}
	if out.Status != loop.ToolCompleted || out.Running || !strings.Contains(out.Text, "finished-42") {
		t.Errorf("the output call's result should have the command's end: %+v", out)
	}
	shown := ticks(streamed.String())
	checkOnce(t, "the streamed output", shown)
	if !slices.Equal(shown, all) {
		t.Errorf("the output streamed the ticks %v, the model got %v", shown, all)
	}
}

// LSP: zero/intervene during the command; zero/prompt answers once the
// run answered, and the zero/event notifications carry the output once and
// a command result that says the command still runs.
func TestInterveneLSPDuringCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, interveneReplies()...)
	ws := t.TempDir()
	c := startFace(t, frames, faceEnvFor(srv), "lsp", "--workspace", ws)
	c.call("initialize", map[string]any{"processId": nil, "rootUri": "file://" + ws, "capabilities": map[string]any{}})
	c.notify("initialized", map[string]any{})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(c.call("zero/newSession", map[string]any{}), &s); err != nil || s.SessionID == "" {
		t.Fatalf("zero/newSession: %v", err)
	}
	first := c.send("zero/prompt", map[string]any{"sessionId": s.SessionID, "message": "count for me"})
	c.waitNote("tick 2")
	held := srv.Held()
	c.call("zero/intervene", map[string]any{"sessionId": s.SessionID, "message": hurry})
	openGate(t, srv, held, ws)
	if res := c.await(first); !strings.Contains(string(res), "ALL-DONE") {
		t.Fatalf("zero/prompt = %s, want the answer", res)
	}
	all := checkModelSaw(t, srv)
	checkEvents(t, lspEvents(c.allNotes()), all)
}

// mcpStatus is the part of zero_status's answer the test reads.
type mcpStatus struct {
	Events []struct {
		Type    string `json:"type"`
		Item    string `json:"item"`
		Text    string `json:"text"`
		Tool    string `json:"tool"`
		Status  string `json:"status"`
		Running bool   `json:"running"`
	} `json:"events"`
	Cursor  int64 `json:"cursor"`
	Running bool  `json:"running"`
	Result  *struct {
		StopReason string `json:"stop_reason"`
		Response   string `json:"response"`
	} `json:"result"`
}

func mcpTool(t *testing.T, c *faceClient, name string, args map[string]any, out any) {
	t.Helper()
	var res struct {
		IsError    bool            `json:"isError"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	raw := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("%s: %s", name, raw)
	}
	if err := json.Unmarshal(res.Structured, out); err != nil {
		t.Fatalf("%s: %v: %s", name, err, raw)
	}
}

// MCP: zero_reply during the command; zero_status follows the run, and
// shows the output once (in the live output, not again in the result) and
// a command result that says the command still runs.
func TestInterveneMCPDuringCommand(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, interveneReplies()...)
	ws := t.TempDir()
	c := startFace(t, lines, faceEnvFor(srv), "mcp", "--workspace", ws)
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	c.notify("notifications/initialized", map[string]any{})
	var start struct {
		Session string `json:"session"`
		Cursor  int64  `json:"cursor"`
	}
	mcpTool(t, c, "zero_start", map[string]any{"message": "count for me", "workspace": ws}, &start)
	var events []loop.Event
	cursor := start.Cursor
	follow := func(until func(st mcpStatus) bool) {
		t.Helper()
		for {
			var st mcpStatus
			// A short wait, under the client's guard (chatWait, 20 s): a
			// loaded machine may take longer than that for the next event,
			// and the loop asks again.
			mcpTool(t, c, "zero_status", map[string]any{"session": start.Session, "since": cursor, "wait": 5}, &st)
			cursor = st.Cursor
			for _, e := range st.Events {
				events = append(events, loop.Event{Type: loop.EventType(e.Type), Item: e.Item, Text: e.Text, Tool: e.Tool, Status: e.Status, Running: e.Running})
			}
			if until(st) {
				return
			}
		}
	}
	follow(func(mcpStatus) bool {
		return slices.ContainsFunc(events, func(e loop.Event) bool { return strings.Contains(e.Text, "tick 2") })
	})
	held := srv.Held()
	var reply struct {
		Intervened bool `json:"intervened"`
	}
	mcpTool(t, c, "zero_reply", map[string]any{"session": start.Session, "message": hurry}, &reply)
	if !reply.Intervened {
		t.Errorf("zero_reply during the run should intervene")
	}
	openGate(t, srv, held, ws)
	follow(func(mcpStatus) bool {
		return slices.ContainsFunc(events, func(e loop.Event) bool { return e.Type == loop.EventRunEnded })
	})
	all := checkModelSaw(t, srv)

	var results []loop.Event
	var shown []int
	for _, e := range events {
		shown = append(shown, ticks(e.Text)...) // whatever a client reads, deltas and results
		if e.Type == loop.EventToolResult && e.Tool != "response" {
			results = append(results, e)
		}
	}
	checkOnce(t, "zero_status", shown)
	if !slices.Equal(shown, all) {
		t.Errorf("zero_status showed the ticks %v, the model got %v", shown, all)
	}
	if len(results) != 2 || results[0].Status != loop.ToolCompleted || !strings.Contains(results[0].Text, stillRunning) {
		t.Errorf("the command's result should be completed and say the command still runs: %+v", results)
	}
}
