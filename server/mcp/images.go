package mcp

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/server"
	"github.com/zeroagent/zero/vision"
)

// imageArg is a picture as zero_start's and zero_run's images argument
// takes it: MCP image content, its type optional. The claimed mimeType is
// not trusted: the bytes say what they are.
type imageArg struct {
	Type     string `json:"type,omitempty" jsonschema:"\"image\" (may be left out)."`
	Data     string `json:"data" jsonschema:"The picture, base64."`
	MIMEType string `json:"mimeType,omitempty" jsonschema:"Its type: image/png, image/jpeg, image/gif, image/webp or image/bmp."`
}

// maxImageBase64 is the longest base64 text of one picture: vision's
// MaxSourceBytes, padded. A longer one is refused before it is decoded.
const maxImageBase64 = vision.MaxSourceBytes*4/3 + 4

// checkImageArgs refuses more pictures than a message may attach, before
// anything is decoded or read.
func checkImageArgs(a startArgs) error {
	if n := len(a.Images) + len(a.Attach); n > loop.MaxInputImages {
		field := "images"
		if len(a.Attach) > 0 {
			field = "attach"
		}
		return badArg(field, "%d pictures (images and attach together); at most %d", n, loop.MaxInputImages)
	}
	return nil
}

// decodeImages decodes the pictures of the images argument, each checked
// for its length before it is decoded, strictly: an item that is not a
// picture's base64 is an error naming it.
func decodeImages(images []imageArg) ([]server.Attachment, error) {
	atts := make([]server.Attachment, 0, len(images))
	for i, im := range images {
		field := fmt.Sprintf("images[%d]", i)
		if im.Type != "" && im.Type != "image" {
			return nil, badArg(field, "type must be \"image\", not %q", clip(im.Type))
		}
		data := im.Data
		// A data: URL is the base64 after its ";base64,".
		if rest, ok := strings.CutPrefix(data, "data:"); ok {
			if j := strings.Index(rest[:min(len(rest), 256)], ";base64,"); j >= 0 {
				data = rest[j+len(";base64,"):]
			}
		}
		switch {
		case data == "":
			return nil, badArg(field, "data is required: the picture, base64")
		case len(data) > maxImageBase64:
			return nil, badArg(field, "%.1f MiB of base64; a picture may have at most %d MiB", float64(len(data))/(1<<20), vision.MaxSourceBytes>>20)
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(data)
		if err != nil {
			return nil, badArg(field, "data is not valid base64 (%v)", err)
		}
		// Named for the errors of vision.Load, which follow the field.
		atts = append(atts, server.Attachment{Name: "the picture", MIME: im.MIMEType, Data: raw})
	}
	return atts, nil
}

// clip is a client's string fit to be quoted in an error.
func clip(s string) string { return cut.Clip(s, 64) }

// input makes the run's message of a's text and pictures: the images
// argument's, then the files attach names in the session's folders
// (roots), read through them (a link out is refused). Each picture is
// checked, scaled down and re-encoded (server.Attach); one that is not
// taken is an error naming it, and nothing is sent.
func input(a startArgs, inline []server.Attachment, roots []string) (loop.Input, error) {
	in := loop.Input{Text: a.Message}
	for i, att := range inline {
		one, err := server.Attach("", []server.Attachment{att})
		if err != nil {
			return in, badArg(fmt.Sprintf("images[%d]", i), "%v", unwrapAttach(err))
		}
		im := one.Images[0]
		im.Name = fmt.Sprintf("image %d", i+1)
		in.Images = append(in.Images, im)
	}
	for i, p := range a.Attach {
		field := fmt.Sprintf("attach[%d]", i)
		att, err := server.AttachFile(roots, p)
		if err != nil {
			return in, badArg(field, "%v", err)
		}
		one, err := server.Attach("", []server.Attachment{att})
		if err != nil {
			return in, badArg(field, "%v", unwrapAttach(err))
		}
		in.Images = append(in.Images, one.Images...)
	}
	return in, nil
}

// unwrapAttach drops server.Attach's "attachment 1 (name): " before the
// reason, which names the picture itself.
func unwrapAttach(err error) string {
	s := err.Error()
	if strings.HasPrefix(s, "attachment ") {
		if i := strings.Index(s, "): "); i >= 0 {
			return s[i+3:]
		}
	}
	return s
}

// toolImages gathers the pictures of the tool results a zero_run call
// saw, to return them with its result: each once, at most
// loop.MaxToolImages.
type toolImages struct {
	refs []server.ImageRef
	seen map[string]bool
	left int
}

func (t *toolImages) add(e server.Event) {
	if e.Type != loop.EventToolResult {
		return
	}
	for _, ref := range e.Images {
		if t.seen[ref.SHA256] {
			continue
		}
		if t.seen == nil {
			t.seen = map[string]bool{}
		}
		t.seen[ref.SHA256] = true
		if len(t.refs) == loop.MaxToolImages {
			t.left++
			continue
		}
		t.refs = append(t.refs, ref)
	}
}

// content is what a zero_run result carries of the pictures: their
// references (for the structured result), a line saying what they are
// (and what was left out), and their image content, in the same order. A
// picture the session no longer has is named in the line only.
func (t *toolImages) content(s *server.Session) (refs []server.ImageRef, line string, blocks []mcp.Content) {
	if t == nil || len(t.refs) == 0 {
		return nil, "", nil
	}
	var names []string
	for _, ref := range t.refs {
		im, ok := s.Image(ref.SHA256)
		if !ok {
			names = append(names, describe(ref)+" (no longer kept)")
			continue
		}
		refs = append(refs, ref)
		blocks = append(blocks, mcp.NewImageContent(base64.StdEncoding.EncodeToString(im.Data), im.MIME))
		names = append(names, describe(ref))
	}
	line = fmt.Sprintf("\nImages from the run's tools (after this text): %s.", strings.Join(names, "; "))
	if t.left > 0 {
		line += fmt.Sprintf(" %d more were left out: at most %d are returned.", t.left, loop.MaxToolImages)
	}
	return refs, line, blocks
}

func describe(ref server.ImageRef) string {
	s := ref.MIME
	if ref.Width > 0 && ref.Height > 0 {
		s += fmt.Sprintf(" %d×%d", ref.Width, ref.Height)
	}
	if ref.Name != "" {
		s = ref.Name + ", " + s
	}
	return s
}
