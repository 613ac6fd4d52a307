package acp

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/vision"
)

// sentImages are the images of the requests' user messages, in order.
func sentImages(reqs []llmtest.Recorded) []llm.Image {
	var out []llm.Image
	for _, r := range reqs {
		for _, m := range r.Messages {
			out = append(out, m.Images...)
		}
	}
	return out
}

// An image block and a link to a picture in the workspace reach the model
// as image parts of the user message, beside its text; the editor's text
// is the message's.
func TestACPImagePrompt(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{{Content: answer("a red and a blue square")}}})
	red, blue := imagetest.PNG(8, 8), imagetest.PNG(6, 4)
	if err := os.WriteFile(filepath.Join(env.Workspace, "blue.png"), blue, 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	resp, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("what do these show?"),
		sdk.ImageBlock(base64.StdEncoding.EncodeToString(red), "image/png"),
		sdk.ResourceLinkBlock("blue.png", "file://"+filepath.Join(env.Workspace, "blue.png")),
	}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	reqs := env.Model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if last.Role != llm.User || !strings.Contains(last.Content, "what do these show?") {
		t.Fatalf("last message = %s %q", last.Role, last.Content)
	}
	wantRed, _ := vision.Load(red, "")
	wantBlue, _ := vision.Load(blue, "")
	if len(last.Images) != 2 || last.Images[0].Hash != wantRed.Hash || last.Images[1].Hash != wantBlue.Hash || last.Images[0].MIME != "image/png" {
		t.Fatalf("the request's images = %+v, want the red then the blue PNG", last.Images)
	}
	if got := messageText(h.client.of(s.SessionId)); got != "a red and a blue square" {
		t.Errorf("answer = %q", got)
	}
}

// What is not a picture Zero can take, or lies outside the workspace, is
// refused with an error that says why, before any model call.
func TestACPImageRefused(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{})
	outside := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(outside, imagetest.PNG(2, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Workspace, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Workspace, "notes.png"), []byte("just text, named .png"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	huge := strings.Repeat("A", vision.MaxSourceBytes/3*4+64)
	for _, c := range []struct {
		name  string
		block sdk.ContentBlock
		want  string
	}{
		{"bad base64", sdk.ImageBlock("not base64 at all!", "image/png"), "not base64"},
		{"not an image", sdk.ImageBlock(base64.StdEncoding.EncodeToString([]byte("hello")), "image/png"), "not an image"},
		{"too large", sdk.ImageBlock(huge, "image/png"), "MiB"},
		{"outside", sdk.ResourceLinkBlock("secret.png", "file://"+outside), "outside the workspace"},
		{"link out", sdk.ResourceLinkBlock("link.png", "file://"+filepath.Join(env.Workspace, "link.png")), "outside the workspace"},
		{"text named png", sdk.ResourceLinkBlock("notes.png", "file://"+filepath.Join(env.Workspace, "notes.png")), "not an image"},
	} {
		_, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("look"), c.block}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: prompt error = %v, want one saying %q", c.name, err, c.want)
		}
	}
	if n := len(env.Model.Requests()); n != 0 {
		t.Errorf("%d model requests after refused prompts", n)
	}
}

// A model whose endpoint refuses image parts gets the turn again without
// them, each image named in its place; the user is told once, and the run
// answers.
func TestACPImageEndpointRefuses(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: answer("I cannot see it, but you said it is red")},
		{Content: answer("second answer")},
	}})
	env.Model.SetBlind(true)
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	for _, text := range []string{"it is red", "and this one?"} {
		resp, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
			sdk.TextBlock(text), sdk.ImageBlock(base64.StdEncoding.EncodeToString(imagetest.PNG(4, 4)), "image/png")}})
		if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt %q = %+v, %v", text, resp, err)
		}
	}
	reqs := env.Model.Requests()
	// The first request is refused; the retry and the second prompt's
	// request carry no image (the refusal is remembered).
	if len(reqs) != 3 || reqs[0].Reply >= 0 {
		t.Fatalf("%d requests (%+v), want a refused one and two answered", len(reqs), reqs)
	}
	if n := len(sentImages(reqs[1:])); n != 0 {
		t.Errorf("%d images sent after the endpoint refused them", n)
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if !strings.Contains(last.Content, "[image") || !strings.Contains(last.Content, "cannot see") {
		t.Errorf("the last request's message does not name the image: %q", last.Content)
	}
	all := thoughtText(h.client.of(s.SessionId))
	if n := strings.Count(all, "refused the images"); n != 1 {
		t.Errorf("the refusal is said %d times, want once: %s", n, all)
	}
}

// models.chat.vision: false sends no image and says so once.
func TestACPVisionOff(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Settings: map[string]string{"models.chat.vision": "false"},
		Replies: []llmtest.Reply{{Content: answer("noted")}}})
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if _, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("see this"), sdk.ImageBlock(base64.StdEncoding.EncodeToString(imagetest.PNG(4, 4)), "image/png")}}); err != nil {
		t.Fatal(err)
	}
	reqs := env.Model.Requests()
	if n := len(sentImages(reqs)); n != 0 || len(reqs) != 1 {
		t.Fatalf("%d requests with %d images, want 1 with none", len(reqs), n)
	}
	if all := thoughtText(h.client.of(s.SessionId)); !strings.Contains(all, "models.chat.vision is false") {
		t.Errorf("the user is not told the image was not sent: %s", all)
	}
}

// A stored session replays its user's pictures on session/load, from the
// store, and the next request still holds them.
func TestACPImageReplay(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{{Content: answer("one")}, {Content: answer("two")}}})
	pic := imagetest.PNG(5, 5)
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if _, err := h.conn.Prompt(t.Context(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("green?"), sdk.ImageBlock(base64.StdEncoding.EncodeToString(pic), "image/png")}}); err != nil {
		t.Fatal(err)
	}
	h2 := start(t, env, newFakeClient())
	h2.init(t, false)
	if _, err := h2.conn.LoadSession(t.Context(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: env.Workspace, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	var replayed []string
	for _, u := range h2.client.of(s.SessionId) {
		if c := u.UserMessageChunk; c != nil && c.Content.Image != nil {
			replayed = append(replayed, c.Content.Image.Data)
		}
	}
	if len(replayed) != 1 || replayed[0] != base64.StdEncoding.EncodeToString(pic) {
		t.Fatalf("replayed images = %d, want the one sent", len(replayed))
	}
	if _, err := h2.prompt(t.Context(), s.SessionId, "and now?"); err != nil {
		t.Fatal(err)
	}
	reqs := env.Model.Requests()
	if got := sentImages(reqs[len(reqs)-1:]); len(got) != 1 {
		t.Errorf("the next request holds %d images, want the earlier one", len(got))
	}
}

// thoughtText joins the agent's thought chunks (where warnings go).
func thoughtText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if c := u.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

// The model calls vision_load on a workspace picture: the next request
// holds it, and the editor sees it in the tool call's content.
func TestACPVisionLoad(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Replies: []llmtest.Reply{
		{Content: toolReply("look at the screenshot", "vision_load", map[string]any{"paths": []string{"shot.png"}})},
		{Content: answer("a purple square")},
	}})
	pic := imagetest.PNG(7, 7)
	if err := os.WriteFile(filepath.Join(env.Workspace, "shot.png"), pic, 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, env, newFakeClient())
	h.init(t, false)
	s := h.newSession(t)
	if _, err := h.prompt(t.Context(), s.SessionId, "what does shot.png show?"); err != nil {
		t.Fatal(err)
	}
	reqs := env.Model.Requests()
	want, _ := vision.Load(pic, "")
	if got := sentImages(reqs[1:]); len(got) != 1 || got[0].Hash != want.Hash {
		t.Fatalf("the request after vision_load holds %d images, want shot.png", len(got))
	}
	var shown []string
	for _, u := range h.client.of(s.SessionId) {
		if tc := u.ToolCallUpdate; tc != nil {
			for _, c := range tc.Content {
				if c.Content != nil && c.Content.Content.Image != nil {
					shown = append(shown, c.Content.Content.Image.Data)
				}
			}
		}
	}
	if len(shown) != 1 || shown[0] != base64.StdEncoding.EncodeToString(want.Data) {
		t.Errorf("the editor was shown %d images in the tool call, want shot.png", len(shown))
	}
}
