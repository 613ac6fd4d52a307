package mcp

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/vision"
)

func prepared(t *testing.T, data []byte) llm.Image {
	t.Helper()
	im, err := vision.Load(data, "want")
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// sentImages are the images of the model's requests, each request's.
func sentImages(env *servertest.Env) [][]llm.Image {
	var out [][]llm.Image
	for _, r := range env.Model.Requests() {
		var ims []llm.Image
		for _, m := range r.Messages {
			ims = append(ims, m.Images...)
		}
		out = append(out, ims)
	}
	return out
}

// zero_run's images, given as MCP image content (with or without its
// type) or as workspace paths (relative or absolute), reach the model as
// images of the user's message; zero_status's run_started names them.
func TestRunWithImages(t *testing.T) {
	small, wide := imagetest.PNG(3, 2), imagetest.PNG(5, 4)
	env := newEnv(t, nil,
		llmtest.Reply{Match: "What colours", Content: answer("Red and blue.")},
		llmtest.Reply{Match: "And these", Content: answer("Both are small.")})
	if err := os.MkdirAll(filepath.Join(env.Workspace, "shots"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Workspace, "shots", "wide.png"), wide, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "What colours?", "workspace": env.Workspace,
		"images": []any{map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString(small), "mimeType": "image/png"}}})
	mustOK(t, res)
	if out["response"] != "Red and blue." {
		t.Fatalf("zero_run = %v", out)
	}
	sent := sentImages(env)
	if len(sent) != 1 || len(sent[0]) != 1 || sent[0][0].Hash != prepared(t, small).Hash || sent[0][0].MIME != "image/png" {
		t.Fatalf("the model was sent %+v", sent)
	}
	session := out["session"].(string)
	// The same session again: an image without its type, and two paths.
	out, res = call(t, r.c, "zero_run", map[string]any{"message": "And these?", "session": session,
		"images": []any{map[string]any{"data": base64.StdEncoding.EncodeToString(small)}},
		"attach": []any{"shots/wide.png", filepath.Join(env.Workspace, "shots", "wide.png")}})
	mustOK(t, res)
	sent = sentImages(env)
	if len(sent) != 2 {
		t.Fatalf("%d model requests", len(sent))
	}
	var hashes []string
	for _, im := range sent[1] {
		hashes = append(hashes, im.Hash)
	}
	if want := []string{prepared(t, small).Hash, prepared(t, small).Hash, prepared(t, wide).Hash, prepared(t, wide).Hash}; strings.Join(hashes, ",") != strings.Join(want, ",") {
		t.Errorf("the second request's images %v, want %v", hashes, want)
	}
	st, _ := call(t, r.c, "zero_status", map[string]any{"session": session})
	var started []any
	for _, e := range st["events"].([]any) {
		if ev := e.(map[string]any); ev["type"] == string(loop.EventRunStarted) {
			started = append(started, ev["images"])
		}
	}
	if len(started) != 2 {
		t.Fatalf("run_started events %v", started)
	}
	if ims, _ := started[1].([]any); len(ims) != 3 || ims[1].(map[string]any)["name"] != "shots/wide.png" || ims[0].(map[string]any)["sha256"] != prepared(t, small).Hash {
		t.Errorf("the second run_started names %v", started[1])
	}
}

// A picture that is not taken fails the call with an error naming the
// item and why, and nothing runs: no session is made, the model is not
// asked.
func TestBadImages(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("should not run")})
	outside := t.TempDir()
	png := imagetest.PNG(2, 2)
	if err := os.WriteFile(filepath.Join(outside, "secret.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(env.Workspace, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Workspace, "notes.txt"), []byte("just text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	img := func(data string) map[string]any {
		return map[string]any{"type": "image", "data": data, "mimeType": "image/png"}
	}
	eleven := make([]any, 11)
	for i := range eleven {
		eleven[i] = img(b64(png))
	}
	for _, tt := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"outside", map[string]any{"attach": []any{"../" + filepath.Base(outside) + "/secret.png"}}, []string{"attach[0]", "outside the workspace"}},
		{"absolute outside", map[string]any{"attach": []any{filepath.Join(outside, "secret.png")}}, []string{"attach[0]", "outside the workspace"}},
		{"link out", map[string]any{"attach": []any{"link.png"}}, []string{"attach[0]", "link"}},
		{"missing", map[string]any{"attach": []any{"nope.png"}}, []string{"attach[0]", "nope.png"}},
		{"text file", map[string]any{"attach": []any{"notes.txt"}}, []string{"attach[0]", "not an image", "text/plain"}},
		{"invalid base64", map[string]any{"images": []any{img(b64(png)), img("%%%not base64")}}, []string{"images[1]", "not valid base64"}},
		{"not an image", map[string]any{"images": []any{img(b64([]byte("hello, I am text")))}}, []string{"images[0]", "not an image", "text/plain"}},
		{"no data", map[string]any{"images": []any{map[string]any{"mimeType": "image/png"}}}, []string{"images[0]", "data is required"}},
		{"not image content", map[string]any{"images": []any{map[string]any{"type": "audio", "data": b64(png)}}}, []string{"images[0]", `type must be "image"`}},
		{"not an object", map[string]any{"images": []any{"abc"}}, []string{"images", "must be"}},
		{"too many", map[string]any{"images": eleven}, []string{"images", "11 pictures", "at most 10"}},
		{"too many with attach", map[string]any{"images": eleven[:6], "attach": []any{"a.png", "b.png", "c.png", "d.png", "e.png"}}, []string{"attach", "11 pictures"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := startStdio(t, env, clientOpts{})
			for _, tool := range []string{"zero_run", "zero_start"} {
				args := map[string]any{"message": "look", "workspace": env.Workspace}
				for k, v := range tt.args {
					args[k] = v
				}
				_, res := call(t, r.c, tool, args)
				t.Logf("%s: %s", tool, text(res))
				if !res.IsError {
					t.Fatalf("%s succeeded: %s", tool, text(res))
				}
				for _, w := range tt.want {
					if !strings.Contains(text(res), w) {
						t.Errorf("%s: %q lacks %q", tool, text(res), w)
					}
				}
			}
		})
	}
	if n := len(env.Model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	if n := len(env.Manager.List()); n != 0 {
		t.Errorf("%d sessions were made", n)
	}
}

// A bad picture for a session that exists changes nothing of it either:
// its mode stays.
func TestBadImageChangesNothing(t *testing.T) {
	env := newEnv(t, nil, llmtest.Reply{Content: answer("ok")})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "hi", "workspace": env.Workspace})
	mustOK(t, res)
	session := out["session"].(string)
	_, res = call(t, r.c, "zero_run", map[string]any{"message": "plan it", "session": session, "mode": "plan", "attach": []any{"nope.png"}})
	if !res.IsError {
		t.Fatalf("zero_run succeeded: %s", text(res))
	}
	s, err := env.Manager.Get(session)
	if err != nil || s.Mode() != "default" {
		t.Errorf("the session's mode is %q (%v)", s.Mode(), err)
	}
	if n := len(env.Model.Requests()); n != 1 {
		t.Errorf("the model was asked %d times", n)
	}
}

// The base64 of a picture is checked for its length before it is decoded,
// and decoded strictly; a data: URL is taken.
func TestDecodeImages(t *testing.T) {
	huge := strings.Repeat("A", maxImageBase64+4)
	if _, err := decodeImages([]imageArg{{Data: huge}}); err == nil || !strings.Contains(err.Error(), "images[0]: 42.7 MiB of base64; a picture may have at most 32 MiB") {
		t.Errorf("huge: %v", err)
	}
	if _, err := decodeImages([]imageArg{{Data: "aGVsbG8=\x00"}}); err == nil || !strings.Contains(err.Error(), "not valid base64") {
		t.Errorf("trailing garbage: %v", err)
	}
	if _, err := decodeImages([]imageArg{{Data: "aGVsbG9="}}); err == nil {
		t.Error("non-canonical padding bits were taken")
	}
	atts, err := decodeImages([]imageArg{{Data: "data:image/png;base64,aGVsbG8="}, {Data: "aGVs\nbG8="}})
	if err != nil || len(atts) != 2 || string(atts[0].Data) != "hello" || string(atts[1].Data) != "hello" {
		t.Errorf("data URL: %v %v", atts, err)
	}
}

// The agent calls a tool of the user's MCP server that returns a picture:
// the next model request holds it as an image, and zero_run's result
// holds it as image content, named in its structured result.
func TestServerToolImageReachesModelAndClient(t *testing.T) {
	shot := imagetest.PNG(4, 3)
	tools := mcpserver.NewMCPServer("pics", "1", mcpserver.WithToolCapabilities(false))
	tools.AddTool(mcp.NewTool("shot", mcp.WithDescription("A screenshot of the app.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultImage("the app's window", base64.StdEncoding.EncodeToString(shot), "image/png"), nil
		})
	hs := httptest.NewServer(mcpserver.NewStreamableHTTPServer(tools))
	t.Cleanup(hs.Close)
	home := t.TempDir()
	cfg := filepath.Join(home, ".config", "zero", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("mcp_servers:\n  pics:\n    url: "+hs.URL+"/mcp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := servertest.New(t, servertest.Options{Home: home, Replies: []llmtest.Reply{
		{Match: "Take a screenshot", Content: toolReply("look at the app", "pics.shot", map[string]any{})},
		{Content: answer("The window is blue.")},
	}})
	r := startStdio(t, env, clientOpts{})
	out, res := call(t, r.c, "zero_run", map[string]any{"message": "Take a screenshot of the app", "workspace": env.Workspace})
	mustOK(t, res)
	if out["response"] != "The window is blue." {
		t.Fatalf("zero_run = %v", out)
	}
	want := prepared(t, shot)
	sent := sentImages(env)
	if len(sent) != 2 || len(sent[0]) != 0 || len(sent[1]) != 1 || sent[1][0].Hash != want.Hash {
		t.Fatalf("the model was sent %+v", sent)
	}
	var images []mcp.ImageContent
	for _, c := range res.Content {
		if im, ok := c.(mcp.ImageContent); ok {
			images = append(images, im)
		}
	}
	if len(images) != 1 || images[0].MIMEType != "image/png" || images[0].Data != base64.StdEncoding.EncodeToString(shot) {
		t.Fatalf("zero_run's image content: %+v", images)
	}
	refs, _ := out["images"].([]any)
	if len(refs) != 1 || refs[0].(map[string]any)["sha256"] != want.Hash || refs[0].(map[string]any)["width"] != 4.0 {
		t.Errorf("zero_run's images: %v", out["images"])
	}
	if !strings.Contains(text(res), "Images from the run's tools") {
		t.Errorf("zero_run's text: %s", text(res))
	}
}

// toolImages returns each picture once, at most loop.MaxToolImages, and
// counts the rest.
func TestToolImagesBounded(t *testing.T) {
	var ti toolImages
	for i := range 25 {
		e := serverEvent(loop.EventToolResult, string(rune('a'+i)))
		ti.add(e)
		ti.add(e) // the same picture again
	}
	ti.add(serverEvent(loop.EventRunStarted, "z"))
	if len(ti.refs) != loop.MaxToolImages || ti.left != 25-loop.MaxToolImages {
		t.Errorf("%d refs, %d left", len(ti.refs), ti.left)
	}
}

func serverEvent(typ loop.EventType, hash string) server.Event {
	return server.Event{Type: typ, Images: []server.ImageRef{{MIME: "image/png", SHA256: hash}}}
}
