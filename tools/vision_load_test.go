package tools_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroagent/zero/internal/imagetest"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/tools"
	"github.com/zeroagent/zero/vision"
)

// hugePNG is a PNG header declaring w×h pixels, and a few bytes.
func hugePNG(w, h int) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2
	binary.Write(&buf, binary.BigEndian, uint32(len(ihdr)))
	buf.WriteString("IHDR")
	buf.Write(ihdr)
	binary.Write(&buf, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("IHDR"), ihdr...)))
	buf.WriteString("\x00\x00\x00\x04IDATxxxx")
	return buf.Bytes()
}

func writeBytes(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// visionCall runs vision_load with paths (a JSON value).
func visionCall(t *testing.T, tool *tools.VisionLoad, ws, paths string) loop.ToolResult {
	t.Helper()
	env := newToolEnv(t, ws, []loop.Tool{tool})
	return env.exec(t, tool, `{"paths": `+paths+`}`)
}

func jsonList(paths ...string) string {
	b, _ := json.Marshal(paths)
	return string(b)
}

// loadedText is Agent Zero's result text.
func loadedText(loaded, skipped []string) string {
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, "\n")
	}
	return "Loaded images:\n" + list(loaded) +
		"\n\nSkipped images (max 10 loaded at a time according to model configuration):\n" + list(skipped)
}

func TestVisionLoadLoadsFromTheWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	small := imagetest.Solid(40, 30, color.RGBA{255, 0, 0, 255})
	writeBytes(t, filepath.Join(ws, "shot.png"), small)
	writeBytes(t, filepath.Join(ws, "shots", "big.png"), imagetest.Solid(1600, 1200, color.RGBA{0, 0, 255, 255}))
	if err := os.Symlink("shot.png", filepath.Join(ws, "inside-link.png")); err != nil {
		t.Fatal(err)
	}
	tool := tools.NewVisionLoad(tools.VisionLoadOptions{}) // the session's workspace
	abs := filepath.Join(ws, "shot.png")
	res := visionCall(t, tool, ws, jsonList(abs, "shots/big.png", abs, "inside-link.png"))
	if res.IsError {
		t.Fatalf("error:\n%s", res.Text)
	}
	if want := loadedText([]string{abs, "shots/big.png", "inside-link.png"}, nil); res.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", res.Text, want)
	}
	// The link is the same picture as shot.png: it is sent once.
	if len(res.Images) != 2 {
		t.Fatalf("%d images, want 2", len(res.Images))
	}
	if im := res.Images[0]; im.MIME != "image/png" || !bytes.Equal(im.Data, small) || im.Name != abs || im.Width != 40 {
		t.Errorf("the small PNG is %s %d×%d %q, want itself", im.MIME, im.Width, im.Height, im.Name)
	}
	if im := res.Images[1]; im.MIME != "image/jpeg" || im.Width != 1011 || im.Height != 758 || im.Name != "shots/big.png" {
		t.Errorf("the big PNG is %s %d×%d %q, want a JPEG of 1011×758", im.MIME, im.Width, im.Height, im.Name)
	}
	if tool.Name() != "vision_load" || tool.Kind("") != "read" {
		t.Errorf("name %s, kind %s", tool.Name(), tool.Kind(""))
	}
}

func TestVisionLoadKeepsTheLastTen(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var paths []string
	for i := range 12 {
		name := fmt.Sprintf("p%02d.png", i)
		writeBytes(t, filepath.Join(ws, name), imagetest.Solid(8, 8, color.RGBA{uint8(i * 20), 0, 0, 255}))
		paths = append(paths, name)
	}
	tool := tools.NewVisionLoad(tools.VisionLoadOptions{Roots: []string{ws}})
	res := visionCall(t, tool, ws, jsonList(paths...))
	if res.IsError || len(res.Images) != 10 {
		t.Fatalf("IsError %v, %d images:\n%s", res.IsError, len(res.Images), res.Text)
	}
	if want := loadedText(paths[2:], paths[:2]); res.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", res.Text, want)
	}
	for i, im := range res.Images {
		if im.Name != paths[i+2] {
			t.Errorf("image %d is %s, want %s", i, im.Name, paths[i+2])
		}
	}
}

func TestVisionLoadRefusals(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	writeBytes(t, filepath.Join(outside, "secret.png"), imagetest.Solid(4, 4, color.White))
	writeBytes(t, filepath.Join(ws, "notes.txt"), []byte("not a picture\n"))
	writeBytes(t, filepath.Join(ws, "huge.png"), hugePNG(20000, 10000))
	writeBytes(t, filepath.Join(ws, "ok.png"), imagetest.Solid(4, 4, color.Black))
	if err := os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(ws, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "dirlink")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(ws, "folder"), 0o755)
	var outsideReads []string
	withOutside := tools.NewVisionLoad(tools.VisionLoadOptions{Roots: []string{ws}, ReadOutside: func(_ context.Context, p string, _ int64) ([]byte, error) {
		outsideReads = append(outsideReads, p)
		return nil, os.ErrNotExist
	}})
	strict := tools.NewVisionLoad(tools.VisionLoadOptions{Roots: []string{ws}})
	for _, tt := range []struct {
		name string
		tool *tools.VisionLoad
		path string
		want string
	}{
		{"absolute path outside", strict, filepath.Join(outside, "secret.png"), "is outside the workspace"},
		{"dot-dot out", strict, "../" + filepath.Base(outside) + "/secret.png", "is outside the workspace"},
		{"symlink out", strict, "link.png", "leads outside the workspace through a symlink"},
		{"symlink out, with ReadOutside", withOutside, "link.png", "leads outside the workspace through a symlink"},
		{"symlinked folder out", withOutside, "dirlink/secret.png", "leads outside the workspace through a symlink"},
		{"tilde", strict, "~/secret.png", "not expanded"},
		{"missing", strict, "nope.png", "no such file"},
		{"directory", strict, "folder", "a directory"},
		{"text", strict, "notes.txt", "not an image: notes.txt is text/plain"},
		{"200 megapixels", strict, "huge.png", "image too large: huge.png is 20000×10000 pixels"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := visionCall(t, tt.tool, ws, jsonList(tt.path))
			if !res.IsError || len(res.Images) != 0 {
				t.Fatalf("IsError %v, %d images:\n%s", res.IsError, len(res.Images), res.Text)
			}
			if want := "Error processing image " + tt.path + ": "; !strings.Contains(res.Text, want) || !strings.Contains(res.Text, tt.want) {
				t.Errorf("the result does not say %q after %q:\n%s", tt.want, want, res.Text)
			}
			if !strings.HasPrefix(res.Text, loadedText(nil, nil)) {
				t.Errorf("not Agent Zero's result:\n%s", res.Text)
			}
		})
	}
	if len(outsideReads) != 0 {
		t.Errorf("ReadOutside read %v: the paths are in the workspace", outsideReads)
	}
	t.Run("one bad among good ones", func(t *testing.T) {
		res := visionCall(t, strict, ws, jsonList("ok.png", "notes.txt"))
		if res.IsError || len(res.Images) != 1 || !strings.Contains(res.Text, "Loaded images:\nok.png\n") ||
			!strings.HasSuffix(res.Text, "\n\nError processing image notes.txt: not an image: notes.txt is text/plain") {
			t.Errorf("IsError %v, %d images:\n%s", res.IsError, len(res.Images), res.Text)
		}
	})
	t.Run("arguments", func(t *testing.T) {
		for _, tt := range []struct{ args, want string }{
			{`{}`, "needs tool_args.paths"},
			{`{"paths": []}`, "needs tool_args.paths"},
			{`{"paths": [1]}`, "must be a list of image paths"},
			{`{"paths": {"a": "b"}}`, "must be a list of image paths"},
		} {
			env := newToolEnv(t, ws, []loop.Tool{strict})
			if res := env.exec(t, strict, tt.args); !res.IsError || !strings.Contains(res.Text, tt.want) {
				t.Errorf("%s: IsError %v:\n%s", tt.args, res.IsError, res.Text)
			}
		}
		// One path as a string, and a list sent as a JSON string.
		for _, paths := range []string{`"ok.png"`, `"[\"ok.png\"]"`} {
			if res := visionCall(t, strict, ws, paths); res.IsError || len(res.Images) != 1 {
				t.Errorf("%s: IsError %v:\n%s", paths, res.IsError, res.Text)
			}
		}
	})
}

func TestVisionLoadReadsOutsideThroughReadOutside(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	pic := imagetest.Solid(6, 6, color.RGBA{0, 255, 0, 255})
	type read struct {
		path  string
		limit int64
	}
	var reads []read
	tool := tools.NewVisionLoad(tools.VisionLoadOptions{Roots: []string{ws}, ReadOutside: func(_ context.Context, p string, limit int64) ([]byte, error) {
		reads = append(reads, read{p, limit})
		if p == "/sandbox/tmp/chart.png" {
			return pic, nil
		}
		return nil, fmt.Errorf("open %s: no such file", p)
	}})
	res := visionCall(t, tool, ws, jsonList("/sandbox/tmp/chart.png", "/sandbox/tmp/gone.png"))
	if res.IsError || len(res.Images) != 1 || !bytes.Equal(res.Images[0].Data, pic) || res.Images[0].Name != "/sandbox/tmp/chart.png" {
		t.Fatalf("IsError %v, %d images:\n%s", res.IsError, len(res.Images), res.Text)
	}
	if !strings.Contains(res.Text, "Error processing image /sandbox/tmp/gone.png: open /sandbox/tmp/gone.png: no such file") {
		t.Errorf("the failure is not reported:\n%s", res.Text)
	}
	want := []read{{"/sandbox/tmp/chart.png", vision.MaxSourceBytes}, {"/sandbox/tmp/gone.png", vision.MaxSourceBytes}}
	if fmt.Sprint(reads) != fmt.Sprint(want) {
		t.Errorf("ReadOutside got %v, want %v", reads, want)
	}
}

func TestVisionLoadSchema(t *testing.T) {
	t.Parallel()
	specs := tools.NewVisionLoad(tools.VisionLoadOptions{}).Specs()
	if len(specs) != 1 || specs[0].Method != "" {
		t.Fatalf("specs %+v", specs)
	}
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(specs[0].Parameters, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || fmt.Sprint(s.Required) != "[paths]" || s.Properties["paths"] == nil {
		t.Errorf("schema %s", specs[0].Parameters)
	}
}
