package term

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/vision"
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The @words of a message: at its start or after a space, quoted for a
// name with spaces; an address is none.
func TestImagesAtWords(t *testing.T) {
	t.Parallel()
	got := atWords("@a.png look at @\"my shot.png\" and @'b c.gif', mail me@example.com @ @x.png. @\"open")
	want := []atWord{
		{word: "@a.png", path: "a.png", bare: true},
		{word: `@"my shot.png"`, path: "my shot.png"},
		{word: "@'b c.gif'", path: "b c.gif"},
		{word: "@x.png.", path: "x.png.", bare: true},
		{word: `@"open`, path: `"open`, bare: true},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(atWord{})); diff != "" {
		t.Errorf("atWords (-want +got):\n%s", diff)
	}
}

// Which @words attach: an image file by its extension (whatever it holds:
// loading it says what is wrong), a picture without one by its bytes; a
// mention, a text file, a folder are left alone; an image's name that is
// no file is noted as sent as text.
func TestImagesChatImages(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "shot.png"), imagetest.PNG(4, 3))
	writeFile(t, filepath.Join(ws, "my shot.png"), imagetest.PNG(4, 3))
	writeFile(t, filepath.Join(ws, "bad.png"), []byte("not a picture\n"))
	writeFile(t, filepath.Join(ws, "noext"), imagetest.PNG(2, 2))
	writeFile(t, filepath.Join(ws, "main.go"), []byte("package main\n"))
	if err := os.Mkdir(filepath.Join(ws, "pics.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	paths, notes := chatImages([]string{ws}, `see @shot.png, @"my shot.png" @bad.png @noext @main.go @pics.png @someone @gone.png and @shot.png again`)
	if want := []string{"shot.png", "my shot.png", "bad.png", "noext"}; !slices.Equal(paths, want) {
		t.Errorf("attached %q, want %q", paths, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "@gone.png") || !strings.Contains(notes[0], "sent as text") {
		t.Errorf("notes %q: want one about @gone.png", notes)
	}

	in, err := attachImages([]string{ws}, "see @shot.png", []string{"shot.png"})
	want, _ := vision.Load(imagetest.PNG(4, 3), "shot.png")
	if err != nil || in.Text != "see @shot.png" || len(in.Images) != 1 || in.Images[0].Hash != want.Hash || in.Images[0].Name != "shot.png" {
		t.Errorf("attachImages: %+v, %v", in, err)
	}
	for path, why := range map[string]string{"bad.png": "not an image", "../outside.png": "outside the workspace", "gone.png": "no such file"} {
		if _, err := attachImages([]string{ws}, "x", []string{path}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), why) {
			t.Errorf("attachImages(%s) = %v, want an error naming it: %s", path, err, why)
		}
	}
	// Nothing outside the workspace is looked into: a picture there
	// (named as one) is attached and so refused, anything else is text.
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "noext"), imagetest.PNG(2, 2))
	writeFile(t, filepath.Join(outside, "out.png"), imagetest.PNG(2, 2))
	paths, _ = chatImages([]string{ws}, "@"+filepath.Join(outside, "noext")+" @"+filepath.Join(outside, "out.png"))
	if want := []string{filepath.Join(outside, "out.png")}; !slices.Equal(paths, want) {
		t.Errorf("outside the workspace: attached %q, want %q (to be refused)", paths, want)
	}
	if _, err := attachImages([]string{ws}, "x", paths); err == nil || !strings.Contains(err.Error(), "outside the workspace") {
		t.Errorf("a picture outside the workspace: %v", err)
	}
	many := make([]string, loop.MaxInputImages+1)
	for i := range many {
		many[i] = "shot.png"
	}
	if _, err := attachImages([]string{ws}, "x", many); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("too many images: %v", err)
	}
}

// Tab after an @word completes image files and folders only.
func TestImagesComplete(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "shots", "login.png"), imagetest.PNG(2, 2))
	writeFile(t, filepath.Join(ws, "shots", "logout.jpg"), []byte("x"))
	writeFile(t, filepath.Join(ws, "shots", "log.txt"), []byte("x"))
	writeFile(t, filepath.Join(ws, "screen one.png"), []byte("x"))
	for _, tc := range []struct {
		text, want string
		matches    []string
	}{
		{"look at @sh", "look at @shots/", nil},
		{"look at @shots/lo", "look at @shots/log", []string{"login.png", "logout.jpg"}},
		{"look at @shots/logi", "look at @shots/login.png ", nil},
		{"@scr", `@"screen one.png" `, nil},
	} {
		got, matches, ok := completeImage(ws, tc.text)
		if !ok || got != tc.want || !slices.Equal(matches, tc.matches) {
			t.Errorf("complete %q = %q %q %v, want %q %q", tc.text, got, matches, ok, tc.want, tc.matches)
		}
	}
	for _, text := range []string{"look at @nothing", "no word", "@shots/log.t"} {
		if got, _, ok := completeImage(ws, text); ok {
			t.Errorf("complete %q = %q, want nothing", text, got)
		}
	}
}

// The pictures of a message and of a tool's result are said by name and
// size, live and in a replay: a terminal cannot show them. Their names
// cannot act on the terminal.
func TestImagesShown(t *testing.T) {
	t.Parallel()
	refs := []server.ImageRef{{MIME: "image/png", SHA256: "aa", Width: 1280, Height: 720, Name: "shot.png"}}
	evs := []server.Event{
		{Type: loop.EventRunStarted, Text: "what is in @shot.png", Images: refs},
		{Type: loop.EventToolCall, Item: "tool-1", Tool: "vision_load", Title: "Looking", Args: []byte(`{"paths":["a.png"]}`)},
		{Type: loop.EventToolResult, Item: "tool-1", Tool: "vision_load", Status: loop.ToolCompleted, Text: "loaded",
			Images: []server.ImageRef{{MIME: "image/jpeg", Width: 800, Height: 600, Name: "a.png"}, {MIME: "image/png", Name: "x\x1b[2Jy"}}},
		{Type: loop.EventIntervention, Text: "and this", Images: []server.ImageRef{{MIME: "image/gif"}}},
	}
	var b strings.Builder
	r := newRenderer(&b, false)
	for _, e := range evs {
		r.event(e)
	}
	want := `  attached: shot.png (1280×720)
● Looking  vision_load {"paths":["a.png"]}
loaded
  images: a.png (800×600), x␛[2Jy (image/png)
  attached: an image (image/gif)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("live view (-want +got):\n%s", diff)
	}

	m := newChatUI(context.Background(), Chat{})
	got := strings.Join(m.transcript(server.Info{ID: "s1", Runs: 1}, evs), "\n")
	for _, w := range []string{"› what is in @shot.png\n  attached: shot.png (1280×720)", "  images: a.png (800×600)", "› and this\n  attached: an image (image/gif)"} {
		if !strings.Contains(got, w) {
			t.Errorf("the replay lacks %q:\n%s", w, got)
		}
	}
}
