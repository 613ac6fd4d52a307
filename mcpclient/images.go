package mcpclient

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
	"github.com/zeroagent/zero/loop"
	"github.com/zeroagent/zero/vision"
)

// MaxImageBase64 is the longest base64 text of one picture a server may
// send: vision.MaxSourceBytes of picture, padded. A longer one is refused
// before a byte of it is decoded.
const MaxImageBase64 = vision.MaxSourceBytes*4/3 + 4

// pictures collects the pictures of one result (a tool's content, a
// resource's contents): each loaded by package vision (checked, scaled
// down, re-encoded), at most loop.MaxToolImages of them. Each picture
// leaves a line in the result's text, so a model that cannot see knows it
// is there and one that failed says why. Past the bound nothing is
// decoded: the pictures are counted, and one line says how many were left
// out. So a hostile server (invalid base64, a thousand pictures, a string
// of a hundred MiB, a type that lies) costs at most MaxToolImages loads.
type pictures struct {
	ctx    context.Context
	source string // what the pictures are named after: server.tool, a resource's URI
	seen   int    // the pictures met so far
	images []llm.Image
	left   int // the pictures past the bound, not looked at
}

// add loads a picture given as base64 data with the type its server
// claims (not trusted: the bytes say what they are), and returns the line
// that stands for it in the text ("" past the bound).
func (p *pictures) add(data, claimed string) string {
	p.seen++
	n := p.seen
	if n > loop.MaxToolImages {
		p.left++
		return ""
	}
	label := fmt.Sprintf("image %d", n)
	if len(data) > MaxImageBase64 {
		return fmt.Sprintf("[%s (%s): not loaded: %s of base64, more than the %d MiB a picture may have]",
			label, clean(claimed), mib(len(data)), vision.MaxSourceBytes>>20)
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return fmt.Sprintf("[%s (%s): not loaded: its data is not valid base64 (%v)]", label, clean(claimed), err)
	}
	name := label
	if p.source != "" {
		name = p.source + " " + label
	}
	im, err := vision.LoadContext(p.ctx, raw, name)
	if err != nil {
		if p.ctx.Err() != nil {
			return fmt.Sprintf("[%s: not loaded: %v]", label, p.ctx.Err())
		}
		return fmt.Sprintf("[%s (%s): not loaded: %v]", label, clean(claimed), err)
	}
	p.images = append(p.images, im)
	return fmt.Sprintf("[%s: %s %d×%d]", label, im.MIME, im.Width, im.Height)
}

// tail is the line saying how many pictures were left out ("" when none).
func (p *pictures) tail() string {
	if p.left == 0 {
		return ""
	}
	return fmt.Sprintf("[%d more images left out: at most %d are taken from one result]", p.left, loop.MaxToolImages)
}

// isImageType reports whether a claimed MIME type is a picture's.
func isImageType(mime string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(mime)), "image/")
}

// clean is a claimed MIME type fit for a line of text: a server's string,
// cut short and without control characters.
func clean(mime string) string {
	mime = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '[' || r == ']' {
			return ' '
		}
		return r
	}, cut.Head(mime, 256))
	if mime = cut.Line(mime, 64); mime == "" {
		return "no type"
	}
	return mime
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
