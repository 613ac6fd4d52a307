package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm/llmtest"
)

// The limits tests move tens of MiB through pipes; they run one at a time
// so their memory does not add up.

// bigText is n bytes of numbered lines.
func bigText(n int) string {
	b := make([]byte, 0, n+64)
	for i := 1; len(b) < n; i++ {
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " of a large file\n"...)
	}
	return string(b[:n])
}

func errorOf(m map[string]any) (code float64, text string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	raw, _ := json.Marshal(e)
	return code, string(raw)
}

// A line longer than MaxLineSize is answered, not fatal: a request with an
// id (wherever the id stands) gets an error for that id, anything else a
// parse error with a null id, and the connection goes on.
func TestACPLineOverLimit(t *testing.T) {
	env := servertest.New(t, servertest.Options{})
	send, recv, _, served := rawLines(t, env)
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := recv(); m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	huge := strings.Repeat("a", MaxLineSize)
	// Within MaxLineSize but more than the ACP library's 10 MiB without
	// any long string: too many small values.
	many := strings.Repeat(`{"type":"text","text":"a"},`, 11<<20/27)
	tests := []struct {
		name    string
		line    string
		id      any
		code    float64
		mention string
	}{
		{"request, id first", `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"` + huge + `"}]}}`, float64(7), -32600, "64 MiB"},
		{"request, id last", `{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"x","prompt":[{"type":"text","text":"` + huge + `"}]},"id":"late"}`, "late", -32600, "64 MiB"},
		{"notification", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + huge + `"}}`, nil, -32700, "64 MiB"},
		{"not json", huge + "x", nil, -32700, "64 MiB"},
		{"many small values", `{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"x","prompt":[` + many + `{"type":"text","text":"a"}]}}`, float64(8), -32600, "10 MiB"},
	}
	for _, tt := range tests { // in order: one stream
		send(tt.line)
		m := recv()
		code, text := errorOf(m)
		if code != tt.code || m["id"] != tt.id {
			t.Errorf("%s: answer id %v code %v (%s), want id %v code %v", tt.name, m["id"], code, text, tt.id, tt.code)
		}
		if !strings.Contains(text, tt.mention) {
			t.Errorf("%s: error %s does not name the limit (%s)", tt.name, text, tt.mention)
		}
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := recv(); m["id"] != float64(9) || m["result"] == nil {
		t.Errorf("initialize after the long lines = %v", m)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v", err)
	default:
	}
}

// Lines between the ACP library's 10 MiB and MaxLineSize are read: an
// editor's answer for a 12 MiB file reaches text_editor whole, and an
// 11 MiB prompt reaches the session whole.
func TestACPLargeLineAccepted(t *testing.T) {
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("read", "text_editor:read", map[string]any{"path": "big.txt", "line_from": 100000})},
		{Content: answer("read it")},
	}})
	c := newFakeClient()
	big := filepath.Join(env.Workspace, "big.txt")
	c.buffers[big] = bigText(12 << 20)
	h := start(t, env, c)
	h.init(t, true)
	s := h.newSession(t)
	if resp, err := h.prompt(t.Context(), s.SessionId, "read the big file"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	us := h.client.of(s.SessionId)
	if out := toolText(us); !strings.Contains(out, "line 100000 of a large file") || !strings.Contains(out, "big.txt: ") {
		t.Errorf("text_editor:read of a 12 MiB editor buffer = %q", trim(out))
	}
	if got := messageText(us); got != "read it" {
		t.Errorf("message = %q", got)
	}

	// An 11 MiB embedded resource: the session sees all of it (and refuses
	// it as too large for the model, naming its size in bytes).
	text := bigText(11 << 20)
	blocks := []sdk.ContentBlock{sdk.TextBlock("look at this"), sdk.ResourceBlock(sdk.EmbeddedResourceResource{
		TextResourceContents: &sdk.TextResourceContents{Uri: "file://" + big, Text: text}})}
	in, err := promptInput(blocks, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(len(in.Text))
	before := len(h.client.of(s.SessionId))
	resp, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: blocks})
	if err != nil && !strings.Contains(err.Error(), want) {
		t.Fatalf("prompt with an 11 MiB resource: %v", err)
	}
	if err == nil {
		if got := messageText(h.client.of(s.SessionId)[before:]); !strings.Contains(got, want) {
			t.Errorf("prompt with an 11 MiB resource = %+v, message %q; want the size %s named", resp, trim(got), want)
		}
	}
	if _, err := h.prompt(t.Context(), s.SessionId, "/pause"); err != nil {
		t.Errorf("prompt after the long ones: %v", err)
	}
}

// An editor's answer longer than MaxReadTextFile fails the read with a
// clear error for the agent, and one longer than MaxLineSize fails the
// pending fs/read_text_file call (the tool gets an error, nothing hangs);
// neither reaches the agent whole, and the connection goes on.
func TestACPReadTextFileCapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		want string
	}{
		{"over MaxReadTextFile", MaxReadTextFile + 1, fmt.Sprintf("%d bytes, more than the 32 MiB", MaxReadTextFile+1)},
		{"over MaxLineSize", MaxLineSize + 1, "more than the 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
				{Content: toolReply("read", "text_editor:read", map[string]any{"path": "huge.txt"})},
				{Content: toolReply("read small", "text_editor:read", map[string]any{"path": "small.txt"})},
				{Content: answer("done")},
			}})
			c := newFakeClient()
			c.buffers[filepath.Join(env.Workspace, "huge.txt")] = bigText(tc.size)
			c.buffers[filepath.Join(env.Workspace, "small.txt")] = "small file\n"
			h := start(t, env, c)
			h.init(t, true)
			s := h.newSession(t)
			if resp, err := h.prompt(t.Context(), s.SessionId, "read both"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", resp, err)
			}
			checkCapped(t, h.client.of(s.SessionId), tc.want)
		})
	}
}

// checkCapped checks a run that read huge.txt (refused with a message
// holding want) and then small.txt.
func checkCapped(t *testing.T, us []sdk.SessionUpdate, want string) {
	t.Helper()
	var failed, total int
	for _, u := range us {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed {
			failed++
		}
		raw, _ := json.Marshal(u)
		total += len(raw)
	}
	out := toolText(us)
	if !strings.Contains(out, want) || !strings.Contains(out, "terminal") {
		t.Errorf("tool output = %q, want %q and a pointer to the terminal", trim(out), want)
	}
	if failed != 1 {
		t.Errorf("%d failed tool calls, want 1 (the huge read): %s", failed, describe(us))
	}
	if !strings.Contains(out, "small file") {
		t.Errorf("the read after the huge one did not work: %q", trim(out))
	}
	if total > 1<<20 {
		t.Errorf("the updates carry %d bytes: the huge file leaked into them", total)
	}
	if got := messageText(us); got != "done" {
		t.Errorf("message = %q", trim(got))
	}
}

func trim(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// A long line's long strings go around the SDK and come back whole.
func TestStashShrink(t *testing.T) {
	st := newStash(1 << 20)
	long := strings.Repeat("é\"\\\n", 1000)
	raw, _ := json.Marshal(map[string]any{"a": long, "b": []any{"short", long + "2"}, "c": 5})
	small, keys, ok := st.shrink(raw)
	if !ok || len(small) > 1000 || len(keys) != 2 {
		t.Fatalf("shrink = %s, %v, %v", small, keys, ok)
	}
	var v struct {
		A string
		B []any
		C int
	}
	if err := json.Unmarshal(small, &v); err != nil {
		t.Fatal(err)
	}
	if err := st.resolve(&v); err != nil {
		t.Fatal(err)
	}
	if v.A != long || v.B[0] != "short" || v.B[1] != long+"2" || v.C != 5 {
		t.Errorf("resolved %q %q %v", trim(v.A), v.B, v.C)
	}
	if !st.empty() {
		t.Error("the stash still holds what was taken")
	}
	if _, _, ok := st.shrink([]byte(`["` + strings.Repeat("a", 2000) + `", "` + strings.Repeat("b", 1000) + `"]`)); ok || !st.empty() {
		t.Errorf("a line with an invalid long string shrank (%v) or left strings behind", ok)
	}
	// Over the budget the oldest go first and their placeholders fail.
	st = newStash(3000)
	k1 := st.put(strings.Repeat("a", 2000))
	k2 := st.put(strings.Repeat("b", 2000))
	if _, err := st.take(k1); err == nil {
		t.Error("the evicted string was still there")
	}
	if v, err := st.take(k2); err != nil || len(v) != 2000 {
		t.Errorf("take = %d bytes, %v", len(v), err)
	}
	if v, err := st.take("plain"); err != nil || v != "plain" {
		t.Errorf("take of plain text = %q, %v", v, err)
	}
}

// A client that stops reading holds up neither the run nor Zero's memory:
// the session's events wait in its bounded log, the run ends, and when the
// client reads again it is told what it missed, then gets the answer.
func TestACPClientNotReading(t *testing.T) {
	env := servertest.New(t, servertest.Options{LogLimit: 50, Replies: []llmtest.Reply{{
		Match: "think hard", Reasoning: strings.Repeat("step ", 800), ChunkSize: 4, // 1,000 deltas
		Content: servertest.Answer("thought it through"),
	}}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(t.Context(), inR, outW, Options{Manager: env.Manager, Catalog: env.Catalog})
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); io.Copy(io.Discard, outR); <-served })
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	out := bufio.NewScanner(outR) // read only when the test says
	out.Buffer(nil, 1<<20)
	recvID := func(id float64) (map[string]any, []map[string]any) {
		t.Helper()
		var notes []map[string]any
		for out.Scan() {
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("bad line %q: %v", out.Text(), err)
			}
			if m["id"] == id {
				return m, notes
			}
			notes = append(notes, m)
		}
		t.Fatalf("output ended before the answer to %v", id)
		return nil, nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	recvID(1)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, env.Workspace))
	m, _ := recvID(2)
	id, _ := m["result"].(map[string]any)["sessionId"].(string)
	sess, err := env.Manager.Get(id)
	if err != nil {
		t.Fatalf("session/new = %v", m)
	}

	// Nothing reads from here on: the first update Zero writes blocks.
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + id + `","prompt":[{"type":"text","text":"think hard"}]}}`)
	ctx, cancel := context.WithTimeout(t.Context(), waitLong)
	defer cancel()
	res, err := sess.WaitRun(ctx, 1)
	if err != nil || res.Response != "thought it through" {
		t.Fatalf("the run did not end while the client was not reading: %+v, %v", res, err)
	}

	m, notes := recvID(3)
	if r, _ := m["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Errorf("prompt answer = %v", m)
	}
	var thoughts, message string
	for _, n := range notes {
		params, _ := n["params"].(map[string]any)
		u, _ := params["update"].(map[string]any)
		content, _ := u["content"].(map[string]any)
		text, _ := content["text"].(string)
		switch u["sessionUpdate"] {
		case "agent_thought_chunk":
			thoughts += text
		case "agent_message_chunk":
			message += text
		}
	}
	if !strings.Contains(thoughts, "events of this session were dropped") {
		t.Errorf("the client is not told what it missed; thoughts: %.300q", thoughts)
	}
	if message != "thought it through" {
		t.Errorf("answer = %q", message)
	}
	if len(notes) > 200 {
		t.Errorf("%d updates for 1,000 deltas the client was too slow for: they should come joined", len(notes))
	}
}
