package main

// Issue 26, images: zero run --attach and zero chat's @path, driven
// through the real binary against the scripted model, which records the
// image parts of each request.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/vision"
)

// imagesSent are the images of the user messages of the model's requests,
// with the text of the message each came with.
func imagesSent(srv *llmtest.Server) (images []llm.Image, texts []string) {
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			for _, im := range m.Images {
				images = append(images, im)
				texts = append(texts, m.Content)
			}
		}
	}
	return images, texts
}

// zero run --attach sends the picture with the task: the model's request
// holds it, byte for byte (a small PNG is kept as it is), in the user's
// message with its text; the live view says it went.
func TestImagesRunAttach(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("a blue square")})
	ws := t.TempDir()
	data := imagetest.PNG(4, 3)
	mustWrite(t, filepath.Join(ws, "shots", "shot.png"), string(data))
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}
	out, errOut, code := zeroRun(t, env, "run", "--workspace", ws, "--attach", "shots/shot.png", "what is in it")
	if code != 0 || !strings.Contains(out, "a blue square") {
		t.Fatalf("zero run --attach: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "attached: shots/shot.png (4×3)") {
		t.Errorf("the live view does not say the image went:\n%s", out)
	}
	want, err := vision.Load(data, "shots/shot.png")
	if err != nil {
		t.Fatal(err)
	}
	images, texts := imagesSent(srv)
	if len(images) != 1 || images[0].Hash != want.Hash || images[0].MIME != "image/png" || !bytes.Equal(images[0].Data, data) {
		t.Fatalf("the model got %d images, want the PNG as it is (%s): %+v", len(images), want.Hash, images)
	}
	if !strings.Contains(texts[0], "what is in it") {
		t.Errorf("the image came without the task's text: %q", texts[0])
	}

	// --json carries the image's reference on run_started, without data.
	srv.Push(llmtest.Reply{Content: chatAnswer("still blue")})
	out, errOut, code = zeroRun(t, env, "run", "--json", "--workspace", ws, "--attach", filepath.Join(ws, "shots", "shot.png"), "and now?")
	if code != 0 {
		t.Fatalf("zero run --json --attach: exit %d\n%s%s", code, out, errOut)
	}
	var first string // the run's checkpoint comes before it
	for line := range strings.Lines(out) {
		if strings.Contains(line, `"type":"run_started"`) {
			first = line
			break
		}
	}
	if !strings.Contains(first, `"type":"run_started"`) || !strings.Contains(first, `"sha256":"`+want.Hash+`"`) || strings.Contains(first, `"data"`) {
		t.Errorf("run_started should name the image by its hash, without its data:\n%s", first)
	}
}

// A file --attach cannot send ends zero run with status 2 before any
// model call, and stderr names it and says why: text, a file that is not
// there, one outside the workspace, a link in the workspace that leads
// out of it, an image that is not the workspace's by an absolute path.
func TestImagesRunAttachRefused(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Reply{Content: chatAnswer("should not be asked")})
	root := t.TempDir()
	ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
	mustWrite(t, filepath.Join(ws, "notes.txt"), "just some notes\n")
	mustWrite(t, filepath.Join(ws, "fake.png"), "<html>not a picture</html>\n")
	mustWrite(t, filepath.Join(ws, "good.png"), string(imagetest.PNG(2, 2)))
	mustWrite(t, filepath.Join(outside, "secret.png"), string(imagetest.PNG(2, 2)))
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(ws, "link.png")); err != nil {
		t.Fatal(err)
	}
	env := []string{"ZERO_MODEL=m", "OPENAI_BASE_URL=" + srv.URL()}
	for _, tc := range []struct{ file, why string }{
		{"notes.txt", "not an image"},
		{"fake.png", "not an image"},
		{"missing.png", "no such file"},
		{"../outside/secret.png", "outside the workspace"},
		{filepath.Join(outside, "secret.png"), "outside the workspace"},
		{"link.png", "outside the workspace"},
	} {
		// The good image first: nothing goes when one of them cannot.
		out, errOut, code := zeroRun(t, env, "run", "--workspace", ws, "--attach", "good.png", "--attach", tc.file, "look")
		if code != 2 || !strings.Contains(errOut, tc.file) || !strings.Contains(errOut, tc.why) {
			t.Errorf("--attach %s: exit %d, want 2 and stderr naming it (%s):\n%s%s", tc.file, code, tc.why, out, errOut)
		}
	}
	if n := len(srv.Requests()) + len(srv.MemoryRequests()); n != 0 {
		t.Errorf("a refused attachment reached the model (%d requests)", n)
	}
}

// zero chat: an @word that names an image of the workspace sends it with
// the message (the @path stays in the text); an @mention that names no
// file is text; an @word of a file that is no picture is not sent, the
// line says why and the message comes back to the input. A replay shows
// which images a message carried.
func TestImagesChatAt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Match: "what is in", Content: chatAnswer("IMAGE-SEEN a blue square")},
		llmtest.Reply{Match: "ask @someone", Content: chatAnswer("MENTION-KEPT as text")},
		llmtest.Reply{Match: "quoted", Content: chatAnswer("QUOTED-SEEN too")},
	)
	ws := t.TempDir()
	data := imagetest.PNG(4, 3)
	mustWrite(t, filepath.Join(ws, "shot.png"), string(data))
	mustWrite(t, filepath.Join(ws, "my shot.png"), string(imagetest.PNG(3, 3)))
	mustWrite(t, filepath.Join(ws, "bad.png"), "this is text, not a picture\n")
	env := chatEnv(t, srv)
	ct := startTerm(t, ws, env, "chat", "--sandbox", "local", "--workspace", ws)
	ct.ready()
	first := ct.sessionID(0, 0)

	// Tab completes the image's name.
	at := ct.mark()
	ct.typeText("what is in @sh")
	ct.waitScreen("› what is in @sh")
	ct.typeText("\t")
	ct.waitScreen("› what is in @shot.png")
	ct.typeText("\r")
	ct.waitFor(at, "attached: shot.png (4×3)")
	ct.answered(at, "IMAGE-SEEN a blue square")
	want, err := vision.Load(data, "shot.png")
	if err != nil {
		t.Fatal(err)
	}
	images, texts := imagesSent(srv)
	if len(images) != 1 || images[0].Hash != want.Hash || !strings.Contains(texts[0], "what is in @shot.png") {
		t.Fatalf("the model got %d images (%q), want shot.png with the text", len(images), texts)
	}

	ct.answered(ct.send("ask @someone about it"), "MENTION-KEPT as text")
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; len(m.Images) != 0 || !strings.Contains(m.Content, "ask @someone about it") {
		t.Errorf("the @mention should go as text alone: %q with %d images", m.Content, len(m.Images))
	}

	n := len(srv.Requests())
	at = ct.send("what about @bad.png")
	ct.waitFor(at, "error: not sent:")
	ct.waitFor(at, "bad.png")
	ct.waitFor(at, "not an image")
	ct.waitScreen("› what about @bad.png") // back in the input
	if got := len(srv.Requests()); got != n {
		t.Errorf("the refused message reached the model (%d requests, were %d)", got, n)
	}
	ct.typeText("\x03") // Ctrl-C clears it
	ct.idle()

	at = ct.send(`the quoted @"my shot.png"`)
	ct.waitFor(at, "attached: my shot.png (3×3)")
	ct.answered(at, "QUOTED-SEEN too")
	if images, _ := imagesSent(srv); len(images) < 2 {
		t.Errorf("the quoted path sent no image")
	}

	// The replay of the session shows the message and its image.
	ct.waitFor(ct.send("/reset"), "a new conversation")
	ct.idle()
	at = ct.send("/load " + first[:8])
	end := ct.waitFor(at, "QUOTED-SEEN too")
	ct.idle()
	got := ct.text()[at:end]
	pos := 0
	for _, w := range []string{"› what is in @shot.png", "attached: shot.png (4×3)", "IMAGE-SEEN", "› ask @someone about it", "MENTION-KEPT",
		`› the quoted @"my shot.png"`, "attached: my shot.png (3×3)"} {
		i := strings.Index(got[pos:], w)
		if i < 0 {
			t.Fatalf("the replay lacks %q after what came before it:\n%s", w, got)
		}
		pos += i + len(w)
	}
	if strings.Contains(got, "bad.png") {
		t.Errorf("the refused message is in the session:\n%s", got)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// An image sent while the agent works goes with the intervention: said
// once under the message, and in the model's next request.
func TestImagesChatIntervention(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Reply{Reasoning: "thinking slowly about it all", ChunkSize: 4, HoldAfter: 1, Content: chatAnswer("first answer")},
		llmtest.Reply{Match: "LOOK-HERE", Content: chatAnswer("SAW-IT in the intervention")},
	)
	ws := t.TempDir()
	data := imagetest.PNG(5, 2)
	mustWrite(t, filepath.Join(ws, "shot.png"), string(data))
	ct := startChat(t, srv, ws)
	ct.ready()
	held := srv.Held()
	ct.send("start something")
	select {
	case <-held:
	case <-time.After(chatWait):
		t.Fatal("the model was never asked")
	}
	ct.waitScreen("thinking slowly")
	at := ct.send("LOOK-HERE @shot.png")
	ct.waitFor(at, "sent to the running agent")
	ct.answered(at, "SAW-IT in the intervention")
	if n := strings.Count(ct.text()[at:], "attached: shot.png (5×2)"); n != 1 {
		t.Errorf("the image is said %d times, want once:\n%s", n, ct.text()[at:])
	}
	want, err := vision.Load(data, "shot.png")
	if err != nil {
		t.Fatal(err)
	}
	images, texts := imagesSent(srv)
	if len(images) != 1 || images[0].Hash != want.Hash || !strings.Contains(texts[0], "LOOK-HERE @shot.png") {
		t.Errorf("the model got %d images (%q), want shot.png with the intervention", len(images), texts)
	}
	ct.typeText("\x04")
	if code := ct.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}
