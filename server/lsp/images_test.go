package lsp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/internal/servertest"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/llm/llmtest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// sentImages are the images of the requests' messages, in order.
func sentImages(reqs []llmtest.Recorded) []llm.Image {
	var out []llm.Image
	for _, r := range reqs {
		for _, m := range r.Messages {
			out = append(out, m.Images...)
		}
	}
	return out
}

// runStarted is the session's first run_started event.
func runStarted(t *testing.T, c *client, id string) server.Event {
	t.Helper()
	for _, e := range events(c.snapshot(), id) {
		if e.Type == loop.EventRunStarted {
			return e
		}
	}
	t.Fatalf("no run_started among %s", summary(c.snapshot()))
	panic("unreachable")
}

// A picture sent as data reaches the model beside the message's text;
// run_started names it, and zero/image gives it back.
func TestPromptAttachmentData(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil, llmtest.Reply{Match: "what is this", Content: answer("a red square")})
	pic := imagetest.Solid(8, 6, color.RGBA{255, 0, 0, 255})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "what is this?", "attachments": []any{
		map[string]any{"name": "red.png", "mimeType": "image/png", "data": b64(pic)},
	}}, &res)
	if res.StopReason != "response" || res.Response != "a red square" {
		t.Fatalf("prompt: %+v", res)
	}
	reqs := env.Model.Requests()
	sent := sentImages(reqs)
	if len(reqs) != 1 || len(sent) != 1 || sent[0].MIME != "image/png" || !bytes.Equal(sent[0].Data, pic) {
		t.Fatalf("the model got %d requests with %d images (%+v), want the picture", len(reqs), len(sent), sent)
	}
	var user *llm.Message
	for i, m := range reqs[0].Messages {
		if len(m.Images) > 0 {
			user = &reqs[0].Messages[i]
		}
	}
	if user == nil || user.Role != llm.User || !strings.Contains(user.Content, "what is this?") {
		t.Errorf("the image is not in the user's message: %+v", user)
	}

	e := runStarted(t, c, id)
	want := server.ImageRef{MIME: "image/png", SHA256: hashOf(pic), Width: 8, Height: 6, Name: "red.png"}
	if e.Text != "what is this?" || len(e.Images) != 1 || e.Images[0] != want {
		t.Fatalf("run_started: text %q images %+v, want %+v", e.Text, e.Images, want)
	}
	var im imageResult
	c.call("zero/image", map[string]any{"sessionId": id, "sha256": want.SHA256}, &im)
	data, err := base64.StdEncoding.DecodeString(im.Data)
	if err != nil || !bytes.Equal(data, pic) || im.MimeType != "image/png" || im.Width != 8 || im.Height != 6 || im.Name != "red.png" {
		t.Errorf("zero/image: %s %d×%d %q, %d bytes (%v)", im.MimeType, im.Width, im.Height, im.Name, len(data), err)
	}
}

// A picture named by its path in the workspace is read by the server; a
// message of pictures only needs no text. Through executeCommand too.
func TestPromptAttachmentPath(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Content: answer("a blue one")},
		llmtest.Reply{Match: "two pictures", Content: answer("green and blue")})
	blue, green := imagetest.Solid(6, 4, color.RGBA{0, 0, 255, 255}), imagetest.Solid(3, 3, color.RGBA{0, 255, 0, 255})
	if err := os.MkdirAll(filepath.Join(env.Workspace, "pics"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"pics/blue.png": blue, "green.png": green} {
		if err := os.WriteFile(filepath.Join(env.Workspace, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	var res PromptResult
	c.call("zero/prompt", map[string]any{"sessionId": id, "attachments": []any{map[string]any{"path": "pics/blue.png"}}}, &res)
	if res.Response != "a blue one" {
		t.Fatalf("prompt of a picture only: %+v", res)
	}
	e := runStarted(t, c, id)
	if e.Text != "" || len(e.Images) != 1 || e.Images[0].SHA256 != hashOf(blue) || e.Images[0].Name != "pics/blue.png" {
		t.Errorf("run_started: %q %+v", e.Text, e.Images)
	}
	c.call("workspace/executeCommand", map[string]any{"command": cmdPrompt, "arguments": []any{map[string]any{
		"sessionId": id, "message": "two pictures", "attachments": []any{
			map[string]any{"path": filepath.Join(env.Workspace, "green.png"), "name": "green"},
			map[string]any{"data": "data:image/png;base64," + b64(blue)},
		}}}}, &res)
	if res.Response != "green and blue" {
		t.Fatalf("executeCommand prompt: %+v", res)
	}
	reqs := env.Model.Requests()
	last := sentImages(reqs[len(reqs)-1:])
	var hashes []string
	for _, im := range last {
		hashes = append(hashes, im.Hash)
	}
	// The second request holds the first message's picture and the two new ones.
	if want := []string{hashOf(blue), hashOf(green), hashOf(blue)}; strings.Join(hashes, ",") != strings.Join(want, ",") {
		t.Errorf("the last request's images are %v, want %v", hashes, want)
	}
}

// Every bad attachment is an InvalidParams that names the item and why,
// and nothing runs: no event, no model request.
func TestPromptAttachmentErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	pic := imagetest.Solid(2, 2, color.Black)
	outside := filepath.Join(t.TempDir(), "outside.png")
	if err := os.WriteFile(outside, pic, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Workspace, "notes.txt"), []byte("just text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(env.Workspace, "link.png")); err != nil {
		t.Fatal(err)
	}
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	good := map[string]any{"name": "ok.png", "data": b64(pic)}
	many := make([]any, loop.MaxInputImages+1)
	for i := range many {
		many[i] = good
	}
	tests := []struct {
		name string
		atts any
		msg  []string // all in the error's message
	}{
		{"bad base64", []any{good, map[string]any{"name": "x.png", "data": "not*base64!"}}, []string{"attachments[1].data", "x.png", "not base64"}},
		{"not an image", []any{map[string]any{"name": "notes.txt", "data": b64([]byte("just some text\n"))}}, []string{"attachments", "notes.txt", "not an image"}},
		{"a text file by path", []any{map[string]any{"path": "notes.txt"}}, []string{"attachments", "notes.txt", "not an image"}},
		{"outside the workspace", []any{map[string]any{"path": outside}}, []string{"attachments[0].path", "outside the workspace"}},
		{"up and out", []any{map[string]any{"path": "../outside.png"}}, []string{"attachments[0].path", "outside the workspace"}},
		{"a link out", []any{map[string]any{"path": "link.png"}}, []string{"attachments[0].path", "outside the workspace"}},
		{"no such file", []any{map[string]any{"path": "nope.png"}}, []string{"attachments[0].path", "no such file"}},
		{"too many", many, []string{"attachments", "11 attachments, at most 10"}},
		{"neither data nor path", []any{map[string]any{"name": "x.png"}}, []string{"attachments[0]", "needs data"}},
		{"both data and path", []any{map[string]any{"data": b64(pic), "path": "x.png"}}, []string{"attachments[0]", "not both"}},
		{"empty data", []any{map[string]any{"data": ""}}, []string{"attachments[0].data", "empty"}},
		{"a corrupt PNG", []any{map[string]any{"name": "cut.png", "data": b64(pic[:len(pic)-20])}}, []string{"attachments", "cut.png"}},
		// Data over 32 MiB is refused before it is decoded (TestDecodeData:
		// 43 MB through the test's JSON-RPC client would take a minute).
		{"too many pixels", []any{map[string]any{"name": "bomb.png", "data": b64(bomb(t, 10000, 10000))}}, []string{"attachments[0]", "too large", "bomb.png", "10000×10000"}},
		{"not an array", "x.png", []string{"attachments", "must be an array"}},
		{"an item not an object", []any{"x.png"}, []string{"attachments", "must be an object"}},
	}
	for _, tt := range tests {
		for _, method := range []string{"zero/prompt", "zero/intervene"} {
			e := c.rpcErr(method, map[string]any{"sessionId": id, "message": "look", "attachments": tt.atts})
			if e.Code != jsonrpc2.CodeInvalidParams {
				t.Errorf("%s, %s: code %d (%s), want InvalidParams", tt.name, method, e.Code, e.Message)
			}
			for _, m := range tt.msg {
				if !strings.Contains(e.Message, m) {
					t.Errorf("%s, %s: %q does not say %q", tt.name, method, e.Message, m)
				}
			}
		}
	}
	if e := c.rpcErr("zero/prompt", map[string]any{"sessionId": id, "attachments": []any{}}); e.Code != jsonrpc2.CodeInvalidParams || !strings.Contains(e.Message, "message: required") {
		t.Errorf("no text, no attachments: %d %q", e.Code, e.Message)
	}
	if reqs := env.Model.Requests(); len(reqs) != 0 {
		t.Errorf("the model was asked %d times", len(reqs))
	}
	if evs := events(c.snapshot(), id); len(evs) != 0 {
		t.Errorf("events after refused prompts: %s", summary(c.snapshot()))
	}
	// The session still works.
	if e := c.rpcErr("zero/intervene", map[string]any{"sessionId": id, "message": "look", "attachments": []any{good}}); e.Code != codeRequestFailed {
		t.Errorf("zero/intervene with a good picture and no run: %d %q", e.Code, e.Message)
	}
}

// bomb is a PNG whose header declares w×h pixels its few bytes do not
// hold: a picture refused before it is decoded.
func bomb(t *testing.T, w, h uint32) []byte {
	t.Helper()
	b := imagetest.Solid(1, 1, color.White)
	// The IHDR chunk: length (4), "IHDR" (4), width (4), height (4), …, CRC.
	const at = 8
	if string(b[at+4:at+8]) != "IHDR" {
		t.Fatal("no IHDR where PNG puts it")
	}
	binary.BigEndian.PutUint32(b[at+8:], w)
	binary.BigEndian.PutUint32(b[at+12:], h)
	binary.BigEndian.PutUint32(b[at+8+13:], crc32.ChecksumIEEE(b[at+4:at+8+13]))
	return b
}

// A picture sent during a run is an intervention the run takes, picture
// and all.
func TestInterveneAttachment(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil,
		llmtest.Reply{Match: "long task", Content: command("working slowly", "echo slow"), ChunkSize: 4, HoldAfter: 12},
		llmtest.Reply{Match: "look at this too", Content: answer("seen it")})
	pic := imagetest.Solid(4, 4, color.RGBA{9, 9, 9, 255})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	first := c.promptAsync("p1", map[string]any{"sessionId": id, "message": "long task"})
	c.waitFor("the run to stream", hasEvent(id, ofType(loop.EventThoughtsDelta)))
	c.call("zero/intervene", map[string]any{"sessionId": id, "message": "look at this too", "attachments": []any{
		map[string]any{"name": "grey.png", "data": b64(pic)}}}, nil)
	if o := wait(t, first, "the prompt"); o.err != nil || o.res.Response != "seen it" {
		t.Fatalf("prompt: %+v %v", o.res, o.err)
	}
	var iv *server.Event
	for _, e := range events(c.snapshot(), id) {
		if e.Type == loop.EventIntervention {
			iv = &e
		}
	}
	if iv == nil || len(iv.Images) != 1 || iv.Images[0].SHA256 != hashOf(pic) || iv.Images[0].Name != "grey.png" {
		t.Fatalf("intervention event: %+v", iv)
	}
	reqs := env.Model.Requests()
	if got := sentImages(reqs[len(reqs)-1:]); len(got) != 1 || got[0].Hash != hashOf(pic) {
		t.Errorf("the last request holds %d images, want the intervention's", len(got))
	}
}

// zero/image: what it refuses, and a picture the session does not have.
func TestImageErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t, nil)
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	hash := hashOf([]byte("nothing"))
	tests := []struct {
		name   string
		params any
		code   int64
		msg    string
	}{
		{"no sha256", map[string]any{"sessionId": id}, jsonrpc2.CodeInvalidParams, "sha256: required"},
		{"not hex", map[string]any{"sessionId": id, "sha256": "xyz"}, jsonrpc2.CodeInvalidParams, "sha256: not a SHA-256"},
		{"too short", map[string]any{"sessionId": id, "sha256": hash[:10]}, jsonrpc2.CodeInvalidParams, "sha256: not a SHA-256"},
		{"no session", map[string]any{"sha256": hash}, jsonrpc2.CodeInvalidParams, "sessionId: required"},
		{"unknown session", map[string]any{"sessionId": "nope", "sha256": hash}, jsonrpc2.CodeInvalidParams, "unknown session"},
		{"unknown image", map[string]any{"sessionId": id, "sha256": hash}, codeRequestFailed, "no image " + hash},
	}
	for _, tt := range tests {
		e := c.rpcErr("zero/image", tt.params)
		if e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: %d %q, want %d with %q", tt.name, e.Code, e.Message, tt.code, tt.msg)
		}
	}
}

// A stored session loaded by the next Zero replays its run_started with
// the picture's reference, and zero/image gives the picture from the store.
func TestImageReplayStored(t *testing.T) {
	t.Parallel()
	env := servertest.New(t, servertest.Options{Store: true, Replies: []llmtest.Reply{{Content: answer("green")}}})
	pic := imagetest.Solid(5, 5, color.RGBA{0, 255, 0, 255})
	c := start(t, env, clientOpts{})
	c.initialize(env.Workspace)
	id := c.newSession()
	c.call("zero/prompt", map[string]any{"sessionId": id, "message": "colour?", "attachments": []any{
		map[string]any{"name": "green.png", "data": b64(pic)}}}, nil)
	home, ws := env.Home, env.Workspace
	env.Close()

	env2 := servertest.New(t, servertest.Options{Store: true, Home: home, Workspace: ws})
	c2 := start(t, env2, clientOpts{})
	c2.initialize(ws)
	c2.call("zero/loadSession", map[string]any{"sessionId": id}, nil)
	e := runStarted(t, c2, id)
	if len(e.Images) != 1 || e.Images[0].SHA256 != hashOf(pic) || e.Images[0].Name != "green.png" {
		t.Fatalf("replayed run_started: %+v", e.Images)
	}
	var im imageResult
	c2.call("zero/image", map[string]any{"sessionId": id, "sha256": e.Images[0].SHA256}, &im)
	if data, err := base64.StdEncoding.DecodeString(im.Data); err != nil || !bytes.Equal(data, pic) || im.MimeType != "image/png" {
		t.Errorf("zero/image after a restart: %s, %d bytes (%v)", im.MimeType, len(data), err)
	}
}

// Decoding is bounded before it starts, and data: URLs are taken.
func TestDecodeData(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		data, mime, wantMIME, err string
	}{
		{"aGk=", "", "", ""},
		{"data:image/png;base64,aGk=", "", "image/png", ""},
		{"data:image/png;base64,aGk=", "image/gif", "image/gif", ""},
		{"aG\nk=", "", "", ""},
		{"data:image/png,hi", "", "", "not base64"},
		{"a", "", "", "not base64"},
		{strings.Repeat("A", maxDataLen+1), "", "", "too large"},
	} {
		b, mime, err := decodeData(tt.data, tt.mime)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("decodeData(%.20q): %v, want %q", tt.data, err, tt.err)
		case tt.err == "" && (err != nil || string(b) != "hi" || mime != tt.wantMIME):
			t.Errorf("decodeData(%.20q) = %q %q %v", tt.data, b, mime, err)
		}
	}
}
