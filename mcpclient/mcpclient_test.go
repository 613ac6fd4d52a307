package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/proctest"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/mcpconf"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
)

// TestMain runs this test binary as a stdio MCP server when asked to: the
// tests start it as a real server process.
func TestMain(m *testing.M) {
	if log := os.Getenv("FAKE_MCP_SERVER"); log != "" {
		serveFake(log)
		return
	}
	os.Exit(m.Run())
}

// serveFake is a stdio MCP server with tools echo, fail, crash and hidden;
// every start is recorded in the file log.
func serveFake(log string) {
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	fmt.Fprintf(f, "start %d\n", os.Getpid())
	f.Close()
	s := server.NewMCPServer("fake", "1.0", server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	s.AddResource(mcp.NewResource("fake://notes", "notes", mcp.WithResourceDescription("The team's notes.")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "the notes say 42"}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("A greeting."), mcp.WithArgument("name")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greet", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello "+req.Params.Arguments["name"])),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "fake://style", MIMEType: "text/plain", Text: "write in short sentences"})),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent("aGVsbG8=", "image/png")),
			}), nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."), mcp.WithString("text", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "") + " env=" + os.Getenv("FAKE_VAR")), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fails.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("it failed on purpose"), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Records that it ran, then exits the server.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintf(f, "ran crash\n")
				f.Close()
			}
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Reports its progress twice, then answers once the client has seen it."), mcp.WithString("ack")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				srv := server.ServerFromContext(ctx)
				for i, msg := range []string{"reading", "writing"} {
					_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "total": 2, "message": msg})
				}
				// mcp-go's server writes notifications from a goroutine of
				// their own: the answer waits until the client has them.
				for ack := req.GetString("ack", ""); ack != ""; time.Sleep(time.Millisecond) {
					if _, err := os.Stat(ack); err == nil || ctx.Err() != nil {
						break
					}
				}
			}
			return mcp.NewToolResultText("done"), nil
		})
	s.AddTool(mcp.NewTool("hidden", mcp.WithDescription("Denied by the configuration.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("you should not see this"), nil
		})
	s.AddTool(mcp.NewTool("flood", mcp.WithDescription(strings.Repeat("d", 100<<10))),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", 10<<20)), nil
		})
	s.AddTool(mcp.NewTool("bad:name", mcp.WithDescription("would read as a method")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("no"), nil
		})
	if os.Getenv("FAKE_MCP_IMAGES") != "" {
		addImageTools(s)
	}
	if os.Getenv("FAKE_MCP_ASK") != "" {
		addAskingTools(s)
	}
	_ = server.ServeStdio(s)
}

func fakeServer(t testing.TB, name string) (mcpclient.Server, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "starts")
	return mcpclient.Server{Name: name, Command: exe, Env: map[string]string{"FAKE_MCP_SERVER": log, "FAKE_VAR": "from-config"}, Tools: mcpconf.Tools{Deny: []string{"hid*"}}}, log
}

func starts(t *testing.T, log string) int {
	t.Helper()
	b, _ := os.ReadFile(log)
	return strings.Count(string(b), "start ")
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), proctest.HangGuard)
	t.Cleanup(cancel)
	return c
}

func TestPool(t *testing.T) {
	srv, log := fakeServer(t, "Fake Server")
	broken := mcpclient.Server{Name: "broken", Command: filepath.Join(t.TempDir(), "no-such-command")}
	p, errs := mcpclient.NewPool([]mcpclient.Server{srv, broken, {Name: "neither"}, srv}, mcpclient.Options{InitTimeout: 10 * time.Second})
	defer p.Close()
	if len(errs) != 2 {
		t.Errorf("configuration errors: %v", errs)
	}
	if starts(t, log) != 0 {
		t.Fatal("a server started before it was needed")
	}
	tools, errs := p.List(ctx(t))
	var names []string
	for _, tl := range tools {
		names = append(names, tl.FullName())
	}
	// hidden is denied by the filter, bad:name is not a tool name.
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "fake_server.crash,fake_server.echo,fake_server.fail,fake_server.flood,fake_server.progress" {
		t.Errorf("tools: %s", got)
	}
	for _, tl := range tools { // the server's readOnlyHint, for plan mode
		if tl.ReadOnly != (tl.Name == "echo") {
			t.Errorf("%s: ReadOnly %v", tl.Name, tl.ReadOnly)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken") {
		t.Errorf("the broken server's error: %v", errs)
	}
	if _, _ = p.List(ctx(t)); starts(t, log) != 1 {
		t.Errorf("listing again started the server again: %d starts", starts(t, log))
	}

	res, err := p.Call(ctx(t), "fake_server", "echo", map[string]any{"text": "hi"})
	if err != nil || res.Text != "echo: hi env=from-config" || res.IsError {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	// A call's progress reaches its caller as lines, in order.
	var lines []string
	ack := filepath.Join(t.TempDir(), "ack")
	seen := func(l string) {
		if lines = append(lines, l); len(lines) == 2 {
			os.WriteFile(ack, nil, 0o644)
		}
	}
	if res, err = p.CallWith(ctx(t), "fake_server", "progress", map[string]any{"ack": ack}, seen); err != nil || res.Text != "done" ||
		!slices.Equal(lines, []string{"1/2 reading", "2/2 writing"}) {
		t.Fatalf("progress: %+v, %v, lines %q", res, err, lines)
	}
	if res, err = p.Call(ctx(t), "fake_server", "fail", nil); err != nil || !res.IsError || !strings.Contains(res.Text, "on purpose") {
		t.Fatalf("fail: %+v, %v", res, err)
	}
	// A crash after the server got the call: the call fails saying it may
	// or may not have run, and is not sent again (its side effect happened
	// once); the next call starts the server again and works.
	if _, err = p.Call(ctx(t), "fake_server", "crash", nil); !errors.Is(err, mcpclient.ErrMaybeRan) {
		t.Fatalf("a crashing tool: %v, want ErrMaybeRan", err)
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "ran crash") != 1 || starts(t, log) != 1 {
		t.Fatalf("the crashed call ran %d times over %d starts, want once: it was sent again", strings.Count(string(b), "ran crash"), starts(t, log))
	}
	if res, err = p.Call(ctx(t), "fake_server", "echo", map[string]any{"text": "again"}); err != nil || res.Text != "echo: again env=from-config" {
		t.Fatalf("after the crash: %+v, %v", res, err)
	}
	if n := starts(t, log); n != 2 {
		t.Errorf("the server was started %d times, want 2 (once again after its crash)", n)
	}
	if _, err = p.Call(ctx(t), "nosuch", "echo", nil); err == nil {
		t.Error("a call to an unknown server did not fail")
	}
	p.Close()
	if _, err = p.Call(ctx(t), "fake_server", "echo", nil); !errors.Is(err, mcpclient.ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

// scripted is an in-process model answering from a list.
type scripted struct {
	replies []string
	sent    [][]llm.Message
}

func (m *scripted) Stream(_ context.Context, req llm.Request, fn llm.StreamFunc) (llm.Result, error) {
	m.sent = append(m.sent, req.Messages)
	if len(m.sent) > len(m.replies) {
		return llm.Result{}, errors.New("no reply scripted")
	}
	r := m.replies[len(m.sent)-1]
	// The loop may stop the stream once the tool request is complete: the
	// error then says so, and the result carries what was sent.
	if err := fn(llm.Delta{Kind: llm.Content, Text: r}); err != nil && !errors.Is(err, llm.ErrStop) {
		return llm.Result{}, err
	}
	return llm.Result{Content: r}, nil
}

// TestAgentUsesServerTools: the servers' tools are in the system prompt
// (name, description, input schema) and the agent calls them by
// server.tool through the loop; a profile's filter takes tools away.
func TestAgentUsesServerTools(t *testing.T) {
	srv, _ := fakeServer(t, "fake")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	model := &scripted{replies: []string{
		`{"thoughts": ["echo"], "headline": "Echo", "tool_name": "fake.echo", "tool_args": {"text": "from the agent"}}`,
		`{"thoughts": ["done"], "headline": "Answer", "tool_name": "response", "tool_args": {"text": "done"}}`,
	}}
	reg := loop.Builtins()
	mcpclient.Register(reg)
	set, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	sess := loop.NewSession("m", loop.Config{Setup: loop.Setup{
		Model: model, Prompts: profiles.New(), Hooks: set, Tools: []loop.Tool{tools.Response{}},
		ToolSource:   mcpclient.Source{Pool: p, Allow: func(name string) bool { return name != "fake.fail" }},
		ToolProtocol: loop.ProtocolJSON, // the MCP tools' part of the JSON protocol's system prompt
	}}, func(e loop.Event) {
		if e.Type == loop.EventToolResult {
			results = append(results, e.Text)
		}
	})
	if _, err := sess.Run(ctx(t), "use the server"); err != nil {
		t.Fatal(err)
	}
	sys := model.sent[0][0].Content
	for _, want := range []string{`"Remote (MCP Server) Agent Tools"`, "### fake.echo:", "Echo the text back.", `"text"`} {
		if !strings.Contains(sys, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if strings.Contains(sys, "fake.fail") || strings.Contains(sys, "fake.hidden") {
		t.Error("the system prompt lists a filtered tool")
	}
	if len(results) == 0 || results[0] != "echo: from the agent env=from-config" {
		t.Errorf("tool results: %q", results)
	}
}

// TestResourcesAndPrompts: a server's resources and prompts are reachable
// through the pool (and the mcp_resources tool).
func TestResourcesAndPrompts(t *testing.T) {
	srv, _ := fakeServer(t, "fake")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	cat, err := p.Catalog(ctx(t), "fake")
	if err != nil || !strings.Contains(cat, "fake://notes") || !strings.Contains(cat, "greet(name)") {
		t.Fatalf("catalog: %q, %v", cat, err)
	}
	if res, err := p.ReadResource(ctx(t), "fake", "fake://notes"); err != nil || res.Text != "the notes say 42" || res.Images != nil {
		t.Errorf("read: %+v, %v", res, err)
	}
	// An embedded text resource is the prompt's too; a picture is named.
	if text, err := p.GetPrompt(ctx(t), "fake", "greet", map[string]string{"name": "Ada"}); err != nil || !strings.Contains(text, "hello Ada") ||
		!strings.Contains(text, "[resource fake://style]\nwrite in short sentences") || !strings.Contains(text, "[image, image/png, not shown]") {
		t.Errorf("prompt: %q, %v", text, err)
	}
	if _, err := p.Catalog(ctx(t), "nope"); err == nil || !strings.Contains(err.Error(), "the servers are: fake") {
		t.Errorf("an unknown server: %v", err)
	}
}

// TestServerFloods: what a careless or hostile server sends is bounded: a
// huge description is cut, a 10 MiB result is cut, a tool name that would
// read as a method is left out.
func TestServerFloods(t *testing.T) {
	srv, _ := fakeServer(t, "fake")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	tools, errs := p.List(ctx(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, tl := range tools {
		if strings.Contains(tl.Name, ":") {
			t.Errorf("a tool named %q is listed", tl.Name)
		}
		if len(tl.Description) > mcpclient.MaxDescription+16 {
			t.Errorf("%s's description is %d bytes", tl.Name, len(tl.Description))
		}
	}
	res, err := p.Call(ctx(t), "fake", "flood", nil)
	// Kept: the first MaxResult bytes, and a line saying how much the
	// server sent (what is spilled then says it is not all).
	if err != nil || len(res.Text) > mcpclient.MaxResult+100 || !strings.HasSuffix(res.Text, "[the server sent 10485760 bytes; only the first 4194304 are kept]") {
		t.Errorf("flood: %d bytes ending %q, %v", len(res.Text), res.Text[max(0, len(res.Text)-80):], err)
	}
}

// TestPlanModeOffersReadOnlyServerTools: in plan mode the agent is offered
// only the servers' tools that say they change nothing (readOnlyHint).
func TestPlanModeOffersReadOnlyServerTools(t *testing.T) {
	srv, _ := fakeServer(t, "fake")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	model := &scripted{replies: []string{`{"thoughts": ["plan"], "headline": "Answer", "tool_name": "response", "tool_args": {"text": "the plan"}}`}}
	reg := loop.Builtins()
	mcpclient.Register(reg)
	set, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess := loop.NewSession("m", loop.Config{Setup: loop.Setup{
		Model: model, Prompts: profiles.New(), Hooks: set, Tools: []loop.Tool{tools.Response{}},
		ToolSource: mcpclient.Source{Pool: p}, ToolProtocol: loop.ProtocolJSON,
	}}, func(loop.Event) {})
	sess.SetPlanning(true)
	if _, err := sess.Run(ctx(t), "plan it"); err != nil {
		t.Fatal(err)
	}
	sys := model.sent[0][0].Content
	if !strings.Contains(sys, "### fake.echo:") || strings.Contains(sys, "### fake.crash:") || strings.Contains(sys, "### fake.flood:") {
		t.Errorf("plan mode offered the wrong server tools:\n%s", sys)
	}
}
