package loop_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
)

func picture(i int) llm.Image {
	return llm.NewImage("image/png", []byte(fmt.Sprintf("picture %d", i)), 10+i, 10, fmt.Sprintf("p%d.png", i))
}

// looker is a tool that brings n pictures.
func looker(n, from int) loop.Tool {
	return toolFunc{"looker", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		res := loop.ToolResult{Text: fmt.Sprintf("%d pictures", n)}
		for i := range n {
			res.Images = append(res.Images, picture(from+i))
		}
		return res, nil
	}}
}

// imagesOf are the images of messages, in order.
func imagesOf(msgs []llm.Message) []llm.Image {
	var out []llm.Image
	for _, m := range msgs {
		out = append(out, m.Images...)
	}
	return out
}

// The user's pictures go with their message, and a tool's with its result,
// in both tool protocols; events name them without their data, which the
// session gives by hash.
func TestImagesReachTheModel(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{loop.ProtocolJSON, loop.ProtocolNative} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			first := reply{content: toolReq("look", "looker", map[string]any{})}
			if protocol == loop.ProtocolNative {
				first = nativeCalls(llm.ToolCall{ID: "c1", Name: "looker", Arguments: "{}"})
			}
			model := &fakeModel{replies: []reply{first, {content: respond("seen")}}}
			sess, rec := newSession(t, setup{model: model, protocol: protocol, tools: []loop.Tool{responseTool, looker(1, 2)}})
			if _, err := sess.RunInput(runCtx(t), loop.Input{Text: "what is this?", Images: []llm.Image{picture(1)}}); err != nil {
				t.Fatal(err)
			}
			reqs := model.requests()
			if got := imagesOf(reqs[0]); len(got) != 1 || got[0].Hash != picture(1).Hash || string(got[0].Data) != "picture 1" {
				t.Fatalf("first request's images = %+v, want the user's picture", got)
			}
			got := imagesOf(reqs[1])
			if len(got) != 2 || got[1].Hash != picture(2).Hash {
				t.Fatalf("second request's images = %d, want the user's and the tool's", len(got))
			}
			for _, m := range reqs[1] {
				if len(m.Images) > 0 && m.Images[0].Hash == picture(2).Hash && protocol == loop.ProtocolNative && m.Role != llm.Tool {
					t.Errorf("native: the tool's picture is on a %s message, want its tool result", m.Role)
				}
			}
			started := rec.ofType(loop.EventRunStarted)[0]
			results := rec.ofType(loop.EventToolResult)
			if len(started.Images) != 1 || started.Images[0].Data != nil || len(results) == 0 || len(results[0].Images) != 1 || results[0].Images[0].Data != nil {
				t.Fatalf("events' images = %+v / %+v, want references", started.Images, results)
			}
			if im, ok := sess.Image(results[0].Images[0].Hash); !ok || string(im.Data) != "picture 2" {
				t.Errorf("Image(tool's hash) = %v", ok)
			}
		})
	}
}

// A request carries the newest MaxRequestImages pictures; older ones are
// named in their place, and a tool that brings too many keeps the first
// MaxToolImages, saying so.
func TestImagesBoundedPerRequest(t *testing.T) {
	t.Parallel()
	model := &fakeModel{replies: []reply{
		{content: toolReq("look", "looker", map[string]any{})},
		{content: respond("seen")},
	}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, looker(loop.MaxToolImages+2, 100)}})
	var mine []llm.Image
	for i := range 3 {
		mine = append(mine, picture(i))
	}
	if _, err := sess.RunInput(runCtx(t), loop.Input{Text: "look", Images: mine}); err != nil {
		t.Fatal(err)
	}
	second := model.requests()[1]
	got := imagesOf(second)
	if len(got) != loop.MaxRequestImages || got[0].Hash != picture(100).Hash {
		t.Fatalf("second request holds %d images (first %s), want the newest %d: the tool's", len(got), got[0].Name, loop.MaxRequestImages)
	}
	var text strings.Builder
	for _, m := range second {
		text.WriteString(m.Content)
	}
	if n := strings.Count(text.String(), "no longer shown"); n != 3 {
		t.Errorf("%d pictures named as no longer shown, want the user's 3:\n%s", n, text.String())
	}
	if w := rec.text(loop.EventWarning); !strings.Contains(w, "only the first 10") {
		t.Errorf("warnings %q do not say the tool's extra pictures were left out", w)
	}
}

// A message with more pictures than a message may hold, or with something
// that is not a picture, is refused before the run starts its model call.
func TestImagesRefusedInput(t *testing.T) {
	t.Parallel()
	model := &fakeModel{}
	sess, _ := newSession(t, setup{model: model})
	var many []llm.Image
	for i := range loop.MaxInputImages + 1 {
		many = append(many, picture(i))
	}
	for _, in := range []loop.Input{
		{Text: "many", Images: many},
		{Text: "text", Images: []llm.Image{llm.NewImage("text/plain", []byte("x"), 0, 0, "")}},
		{Text: "empty", Images: []llm.Image{{MIME: "image/png"}}},
	} {
		if _, err := sess.RunInput(runCtx(t), in); err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("%s: err = %v", in.Text, err)
		}
	}
	if n := len(model.requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

// A picture a tool names after something holding a secret (an MCP
// resource's URI the model wrote with an alias, expanded for the tool)
// is named by the alias in events, history and the request.
func TestImageNamesMasked(t *testing.T) {
	t.Parallel()
	leaky := toolFunc{"looker", func(context.Context, *loop.ToolCall) (loop.ToolResult, error) {
		im := llm.NewImage("image/png", []byte("pic"), 1, 1, "res://x?token="+secretToken)
		return loop.ToolResult{Text: "1 picture", Images: []llm.Image{im}}, nil
	}}
	model := &fakeModel{replies: []reply{{content: toolReq("look", "looker", map[string]any{})}, {content: respond("seen")}}}
	sess, rec := newSession(t, setup{model: model, tools: []loop.Tool{responseTool, leaky}, secrets: secretSet(t)})
	if _, err := sess.Run(runCtx(t), "look"); err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.ofType(loop.EventToolResult) {
		for _, im := range e.Images {
			if strings.Contains(im.Name, secretToken) {
				t.Errorf("event names the picture %q", im.Name)
			}
		}
	}
	for _, m := range model.requests()[1] {
		for _, im := range m.Images {
			if strings.Contains(im.Name, secretToken) {
				t.Errorf("request names the picture %q", im.Name)
			}
		}
	}
	for _, m := range sess.Agent0().History.State().Messages {
		for _, im := range m.Images {
			if strings.Contains(im.Name, secretToken) {
				t.Errorf("history names the picture %q", im.Name)
			}
		}
	}
}
