package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/zeroagent/zero/hooks"
	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/mcpclient"
	"github.com/zeroagent/zero/profiles"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/vision"
)

// addImageTools gives the fake server (FAKE_MCP_IMAGES) tools and a
// resource that answer with pictures: shot (a picture as image content
// and as an embedded resource), shots (a thousand), bad_images (invalid
// base64, text claimed to be a PNG, a PNG claimed to be a JPEG, a PDF
// blob, a PDF blob claimed to be a PNG), and the resource fake://shot.png.
func addImageTools(s *server.MCPServer) {
	png64 := base64.StdEncoding.EncodeToString(imagetest.PNG(4, 3))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	s.AddResource(mcp.NewResource("fake://shot.png", "shot", mcp.WithMIMEType("image/png")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: "image/png", Blob: png64}}, nil
		})
	s.AddTool(mcp.NewTool("shot", mcp.WithDescription("A screenshot.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("a screenshot"),
				mcp.NewImageContent(png64, "image/png"),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "fake://shot.png", MIMEType: "image/png", Blob: png64}),
			}}, nil
		})
	s.AddTool(mcp.NewTool("shots", mcp.WithDescription("A thousand screenshots.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := &mcp.CallToolResult{}
			for range 1000 {
				res.Content = append(res.Content, mcp.NewImageContent(png64, "image/png"))
			}
			return res, nil
		})
	s.AddTool(mcp.NewTool("bad_images", mcp.WithDescription("Pictures that are not.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewImageContent("not base64!!", "image/png"),
				mcp.NewImageContent(b64("hello, I am text"), "image/png"),
				mcp.NewImageContent(png64, "image/jpeg"),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "fake://doc.pdf", MIMEType: "application/pdf", Blob: b64("%PDF-1.4\n")}),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "fake://lie.png", MIMEType: "image/png", Blob: b64("%PDF-1.4\n")}),
			}}, nil
		})
}

func imageServer(t *testing.T) mcpclient.Server {
	t.Helper()
	srv, _ := fakeServer(t, "fake")
	srv.Env["FAKE_MCP_IMAGES"] = "1"
	return srv
}

// wantImage is the picture the fake server sends, as package vision
// prepares it (the PNG, kept as it is).
func wantImage(t *testing.T) llm.Image {
	t.Helper()
	im, err := vision.Load(imagetest.PNG(4, 3), "want")
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// TestToolImages: a tool's image content and its embedded resources of an
// image type become the result's Images, loaded by package vision, each
// with a line in the text; a resource read does the same.
func TestToolImages(t *testing.T) {
	p, _ := mcpclient.NewPool([]mcpclient.Server{imageServer(t)}, mcpclient.Options{})
	defer p.Close()
	want := wantImage(t)
	res, err := p.Call(ctx(t), "fake", "shot", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a screenshot\n[image 1: image/png 4×3]\n[image 2: image/png 4×3]" || res.IsError {
		t.Errorf("text %q", res.Text)
	}
	if len(res.Images) != 2 {
		t.Fatalf("%d images", len(res.Images))
	}
	for i, im := range res.Images {
		if im.Hash != want.Hash || im.MIME != "image/png" || im.Width != 4 || im.Height != 3 || !bytes.Equal(im.Data, want.Data) {
			t.Errorf("image %d: %+v", i+1, im.Ref())
		}
	}
	if res.Images[0].Name != "fake.shot image 1" {
		t.Errorf("name %q", res.Images[0].Name)
	}
	rd, err := p.ReadResource(ctx(t), "fake", "fake://shot.png")
	if err != nil || rd.Text != "[image 1: image/png 4×3]" || len(rd.Images) != 1 || rd.Images[0].Hash != want.Hash {
		t.Errorf("resource: %q, %d images, %v", rd.Text, len(rd.Images), err)
	}
}

// TestHostileImages: what a server says of its pictures is not believed:
// a thousand of them give ten and a line counting the rest, invalid base64
// and data that is no picture give a line saying so, a type that lies is
// corrected from the bytes, and a blob that is no picture is named.
func TestHostileImages(t *testing.T) {
	p, _ := mcpclient.NewPool([]mcpclient.Server{imageServer(t)}, mcpclient.Options{})
	defer p.Close()
	res, err := p.Call(ctx(t), "fake", "shots", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Images) != loop.MaxToolImages {
		t.Errorf("%d images of a thousand kept", len(res.Images))
	}
	lines := strings.Split(res.Text, "\n")
	if len(lines) != loop.MaxToolImages+1 || lines[loop.MaxToolImages] != "[990 more images left out: at most 10 are taken from one result]" {
		t.Errorf("text %q", res.Text)
	}

	res, err = p.Call(ctx(t), "fake", "bad_images", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Text)
	lines = strings.Split(res.Text, "\n")
	want := []string{
		"[image 1 (image/png): not loaded: its data is not valid base64",
		"[image 2 (image/png): not loaded: not an image: fake.bad_images image 2 is text/plain",
		"[image 3: image/png 4×3]",
		"[resource fake://doc.pdf: application/pdf, 12 bytes of base64]",
		"[image 4 (image/png): not loaded: not an image: fake.bad_images image 4 is application/pdf",
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want %q…", i+1, lines[i], w)
		}
	}
	if len(res.Images) != 1 || res.Images[0].MIME != "image/png" || res.Images[0].Hash != wantImage(t).Hash {
		t.Errorf("images %d", len(res.Images))
	}
}

// TestFloodedImage: a picture of 300 MiB of base64 is refused as it
// arrives, at about MaxMessage of memory, with an error naming the limit.
func TestFloodedImage(t *testing.T) {
	srv, log := hostileServer(t, "image")
	p, _ := mcpclient.NewPool([]mcpclient.Server{srv}, mcpclient.Options{})
	defer p.Close()
	t.Log(floodedCall(t, p))
	p.Close()
	goneAll(t, log)
}

// TestAgentSeesServerImages: the pictures of a server's tool and of a
// resource the agent reads join the tool results in history: the next
// model request holds them as images, and the tool_result events name
// them by reference (the session has their data).
func TestAgentSeesServerImages(t *testing.T) {
	p, _ := mcpclient.NewPool([]mcpclient.Server{imageServer(t)}, mcpclient.Options{})
	defer p.Close()
	model := &scripted{replies: []string{
		`{"thoughts": ["look"], "headline": "Look", "tool_name": "fake.shot", "tool_args": {}}`,
		`{"thoughts": ["read"], "headline": "Read", "tool_name": "mcp_resources:read", "tool_args": {"server": "fake", "uri": "fake://shot.png"}}`,
		`{"thoughts": ["done"], "headline": "Answer", "tool_name": "response", "tool_args": {"text": "a blue square"}}`,
	}}
	reg := loop.Builtins()
	mcpclient.Register(reg)
	set, err := hooks.Resolve(reg, nil, hooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var results []loop.Event
	sess := loop.NewSession("m", loop.Config{Setup: loop.Setup{
		Model: model, Prompts: profiles.New(), Hooks: set, Tools: []loop.Tool{tools.Response{}},
		ToolSource: mcpclient.Source{Pool: p}, ToolProtocol: loop.ProtocolJSON,
	}}, func(e loop.Event) {
		if e.Type == loop.EventToolResult {
			results = append(results, e)
		}
	})
	if _, err := sess.Run(ctx(t), "what does the screen show?"); err != nil {
		t.Fatal(err)
	}
	want := wantImage(t)
	images := func(msgs []llm.Message) (n int) {
		for _, m := range msgs {
			for _, im := range m.Images {
				if im.Hash != want.Hash || !bytes.Equal(im.Data, want.Data) {
					t.Errorf("a request's image: %+v", im.Ref())
				}
				n++
			}
		}
		return n
	}
	if len(model.sent) != 3 {
		t.Fatalf("%d model requests", len(model.sent))
	}
	if n := images(model.sent[1]); n != 2 {
		t.Errorf("the request after fake.shot holds %d images, want 2", n)
	}
	if n := images(model.sent[2]); n != 3 {
		t.Errorf("the request after the resource read holds %d images, want 3", n)
	}
	if len(results) < 2 || len(results[0].Images) != 2 || len(results[1].Images) != 1 {
		t.Fatalf("tool results: %+v", results)
	}
	for _, e := range results[:2] {
		if !strings.Contains(e.Text, "[image 1: image/png 4×3]") {
			t.Errorf("tool result text %q", e.Text)
		}
		for _, ref := range e.Images {
			if ref.Data != nil || ref.Hash != want.Hash {
				t.Errorf("event image %+v", ref)
			}
			if im, ok := sess.Image(ref.Hash); !ok || !bytes.Equal(im.Data, want.Data) {
				t.Errorf("Session.Image(%s): %v", ref.Hash, ok)
			}
		}
	}
}
