// Package vision prepares pictures for a model that sees: a file the
// vision_load tool reads, an image an editor pastes, an MCP tool's image.
// [Load] checks one picture and returns it as an [llm.Image] the model
// takes: its format found from its bytes (never from a name or a claimed
// MIME type), its size checked from its header before a pixel is decoded,
// scaled down to Agent Zero's 768,000 pixels and re-encoded as JPEG when
// it is larger, or kept byte for byte when it is small and of a format
// every vision endpoint reads.
//
// Memory is bounded: the bytes are at most [MaxSourceBytes], the header
// must declare at most [MaxSourcePixels] before the decoder allocates
// anything (and, for PNG and BMP, no more than the bytes can hold), and
// decodes run one at a time, so concurrent tool calls hold at most one
// large bitmap between them. Scaling adds buffers that depend on the size
// sent, not on the source's: a 12-megapixel JPEG loads in about 80 MB.
package vision

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/image/bmp"
	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/zeroagent/zero/cut"
	"github.com/zeroagent/zero/llm"
)

// Limits of [Load].
const (
	// MaxSourceBytes is the largest encoded picture Load takes.
	MaxSourceBytes = 32 << 20
	// MaxSourcePixels is the most pixels a picture's header may declare:
	// a 40-megapixel photo decodes; a 200-megapixel scan or an image bomb
	// (a few kilobytes declaring a huge bitmap) is refused before its
	// bitmap is allocated.
	MaxSourcePixels = 40_000_000
	// MaxPixels is what a picture is scaled down to, width×height, its
	// aspect ratio kept: Agent Zero's limit, about what the vision
	// endpoints scale a picture to themselves.
	MaxPixels = 768_000
	// MaxSide bounds each side of the picture sent, whatever its pixel
	// count: endpoints refuse sides of more than 8,000 pixels, and JPEG
	// holds at most 65,535.
	MaxSide = 8000
	// MaxKeepBytes is the largest picture kept as it is (when it needs no
	// scaling and its format is PNG, JPEG, GIF or WebP); a larger one is
	// re-encoded as JPEG, which is smaller.
	MaxKeepBytes = 1 << 20
	// JPEGQuality is the quality of a re-encoded picture: Agent Zero's.
	JPEGQuality = 75
)

// Errors of [Load], wrapped with the picture's name and what is wrong:
// test them with errors.Is.
var (
	// ErrNotImage is the error of data that is not a picture Load takes:
	// text, a PDF, an unknown format, or ErrUnsupported's formats.
	ErrNotImage = errors.New("not an image")
	// ErrUnsupported is the error of a picture in a format Load does not
	// read (TIFF, HEIC, AVIF, SVG, an animated WebP...). It matches
	// ErrNotImage too.
	ErrUnsupported error = &kindError{"image format not supported", ErrNotImage}
	// ErrTooLarge is the error of a picture of more than MaxSourceBytes
	// bytes or MaxSourcePixels pixels.
	ErrTooLarge = errors.New("image too large")
	// ErrCorrupt is the error of a picture its decoder refuses: truncated,
	// damaged, or declaring what its bytes cannot hold.
	ErrCorrupt = errors.New("corrupt image")
)

// kindError is a sentinel that matches a broader one.
type kindError struct {
	msg    string
	parent error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.parent }

// format is a picture format Load reads.
type format struct {
	name string // for messages: "PNG"
	mime string
	// keep: every vision endpoint reads it, so a small picture is sent
	// as it is.
	keep   bool
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var (
	formatPNG  = &format{"PNG", "image/png", true, png.DecodeConfig, png.Decode}
	formatJPEG = &format{"JPEG", "image/jpeg", true, jpeg.DecodeConfig, jpeg.Decode}
	formatGIF  = &format{"GIF", "image/gif", true, gif.DecodeConfig, gif.Decode} // gif.Decode: the first frame
	formatWebP = &format{"WebP", "image/webp", true, webp.DecodeConfig, webp.Decode}
	formatBMP  = &format{"BMP", "image/bmp", false, bmp.DecodeConfig, bmp.Decode}
)

// sniff is the format of data by its first bytes, or nil.
func sniff(b []byte) *format {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return formatJPEG
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return formatGIF
	case len(b) >= 16 && string(b[:4]) == "RIFF" && string(b[8:15]) == "WEBPVP8":
		return formatWebP
	case isBMP(b):
		return formatBMP
	}
	return nil
}

// isBMP reports whether b starts as a Windows bitmap does: "BM", four
// reserved zero bytes, and a known size of the info header. "BM" alone
// starts too much text.
func isBMP(b []byte) bool {
	if len(b) < 18 || string(b[:2]) != "BM" || binary.LittleEndian.Uint32(b[6:10]) != 0 {
		return false
	}
	switch binary.LittleEndian.Uint32(b[14:18]) {
	case 12, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// others are picture formats Load does not read, by their signature.
var others = []struct {
	prefix string
	at     int
	mime   string
}{
	{"II*\x00", 0, "image/tiff"},
	{"MM\x00*", 0, "image/tiff"},
	{"8BPS", 0, "image/vnd.adobe.photoshop"},
	{"\xff\x0a", 0, "image/jxl"},
	{"\x00\x00\x00\x0cJXL \r\n\x87\n", 0, "image/jxl"},
	{"\x00\x00\x00\x0cjP  \r\n\x87\n", 0, "image/jp2"},
	{"qoif", 0, "image/qoi"},
	{"\x00\x00\x01\x00", 0, "image/x-icon"},
	{"ftypavif", 4, "image/avif"},
	{"ftypavis", 4, "image/avif"},
	{"ftypheic", 4, "image/heic"},
	{"ftypheix", 4, "image/heic"},
	{"ftypmif1", 4, "image/heif"},
	{"ftypmsf1", 4, "image/heif"},
}

// Sniff tells what data is from its bytes: mime is the picture's MIME type
// and ok is true when Load reads it (PNG, JPEG, GIF, WebP, BMP); otherwise
// mime is what the bytes look like ("image/tiff", "text/plain",
// "application/pdf", "application/octet-stream" when nothing is known)
// and ok is false. It is for callers handed bytes with a claimed type,
// which is not to be trusted.
func Sniff(data []byte) (mime string, ok bool) {
	if f := sniff(data); f != nil {
		return f.mime, true
	}
	return describe(data), false
}

// describe is the MIME type of data that is no format Load reads.
func describe(b []byte) string {
	for _, o := range others {
		if len(b) >= o.at+len(o.prefix) && string(b[o.at:o.at+len(o.prefix)]) == o.prefix {
			return o.mime
		}
	}
	head := b[:min(len(b), 1024)]
	if isSVG(head) {
		return "image/svg+xml"
	}
	mime, _, _ := strings.Cut(http.DetectContentType(head), ";")
	if mime == "image/bmp" { // "BM" and no bitmap header: isBMP said no
		mime = "application/octet-stream"
		if utf8.Valid(head) && !bytes.ContainsFunc(head, func(r rune) bool { return r < ' ' && r != '\n' && r != '\r' && r != '\t' }) {
			mime = "text/plain"
		}
	}
	return strings.TrimSpace(mime)
}

// isSVG reports whether head starts an SVG document: its first element,
// after an XML declaration, comments and a doctype, is <svg.
func isSVG(head []byte) bool {
	t := bytes.ToLower(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	for {
		t = bytes.TrimLeft(t, " \t\r\n")
		switch {
		case bytes.HasPrefix(t, []byte("<svg")):
			return true
		case bytes.HasPrefix(t, []byte("<?")), bytes.HasPrefix(t, []byte("<!doctype")):
			i := bytes.IndexByte(t, '>')
			if i < 0 {
				return false
			}
			t = t[i+1:]
		case bytes.HasPrefix(t, []byte("<!--")):
			i := bytes.Index(t, []byte("-->"))
			if i < 0 {
				return false
			}
			t = t[i+3:]
		default:
			return false
		}
	}
}

// notImage is ErrNotImage (or ErrUnsupported) for data named name.
func notImage(data []byte, name string) error {
	if len(data) == 0 {
		return fmt.Errorf("%w: %s is empty", ErrNotImage, name)
	}
	mime := describe(data)
	switch {
	case strings.HasPrefix(mime, "image/"):
		return fmt.Errorf("%w: %s is %s; PNG, JPEG, GIF, WebP and BMP are loaded, so convert it to PNG first", ErrUnsupported, name, mime)
	case mime == "application/octet-stream":
		return fmt.Errorf("%w: %s is of an unknown format", ErrNotImage, name)
	}
	return fmt.Errorf("%w: %s is %s", ErrNotImage, name, mime)
}

// decoding holds the one decode that may run at a time.
var decoding = make(chan struct{}, 1)

// Load checks data, a picture named name (a path, "pasted image"), and
// prepares it for a model: see the package documentation. The image's
// Name is name. Errors match ErrNotImage, ErrUnsupported, ErrTooLarge or
// ErrCorrupt and say what is wrong in words for the model and the user.
func Load(data []byte, name string) (llm.Image, error) {
	return LoadContext(context.Background(), data, name)
}

// LoadContext is Load that gives up, with ctx's error, while it waits for
// another decode to end.
func LoadContext(ctx context.Context, data []byte, name string) (llm.Image, error) {
	img, err := load(ctx, data, cmp.Or(name, "the picture"))
	if err != nil {
		return llm.Image{}, err
	}
	img.Name = name
	return img, nil
}

// load is LoadContext with a name for messages.

func load(ctx context.Context, data []byte, name string) (llm.Image, error) {
	if len(data) > MaxSourceBytes {
		return llm.Image{}, fmt.Errorf("%w: %s is %s; at most %d MiB is loaded", ErrTooLarge, name, mib(int64(len(data))), MaxSourceBytes>>20)
	}
	f := sniff(data)
	if f == nil {
		return llm.Image{}, notImage(data, name)
	}
	if f == formatWebP && animatedWebP(data) {
		return llm.Image{}, fmt.Errorf("%w: %s is an animated WebP; save the frame to look at as PNG first", ErrUnsupported, name)
	}
	// The header first: nothing of the bitmap is allocated yet.
	cfg, err := f.config(bytes.NewReader(data))
	if err != nil {
		return llm.Image{}, corrupt(f, name, err)
	}
	w, h := cfg.Width, cfg.Height
	if w <= 0 || h <= 0 {
		return llm.Image{}, fmt.Errorf("%w: %s, a %s, declares a picture of %d×%d pixels", ErrCorrupt, name, f.name, w, h)
	}
	if px := int64(w) * int64(h); px > MaxSourcePixels {
		return llm.Image{}, fmt.Errorf("%w: %s is %d×%d pixels (%s megapixels); at most %d megapixels are loaded, so scale it down or crop it first",
			ErrTooLarge, name, w, h, megapixels(px), MaxSourcePixels/1_000_000)
	}
	if f == formatPNG && !pngCanHold(data, w, h) || f == formatBMP && !bmpCanHold(data, w, h) {
		return llm.Image{}, fmt.Errorf("%w: %s, a %s, declares %d×%d pixels, which its %d bytes cannot hold: it is truncated or forged", ErrCorrupt, name, f.name, w, h, len(data))
	}

	select {
	case decoding <- struct{}{}:
	case <-ctx.Done():
		return llm.Image{}, context.Cause(ctx)
	}
	defer func() { <-decoding }()

	m, err := f.decode(bytes.NewReader(data))
	if err != nil {
		return llm.Image{}, corrupt(f, name, err)
	}
	orientation := 1
	if f == formatJPEG {
		orientation = exifOrientation(data)
	}
	// Some endpoints read neither an animation nor a CMYK JPEG: they are
	// sent as a JPEG of the first frame, in RGB.
	animated := f == formatGIF && gifFrames(data, 2) > 1
	_, cmyk := m.(*image.CMYK)
	tw, th := Fit(w, h)
	if tw == w && th == h && f.keep && len(data) <= MaxKeepBytes && orientation == 1 && !animated && !cmyk {
		return llm.NewImage(f.mime, bytes.Clone(data), w, h, name), nil
	}
	if b := m.Bounds(); b != image.Rect(0, 0, w, h) {
		// A GIF's first frame may cover part of its screen.
		canvas := image.NewNRGBA(image.Rect(0, 0, w, h))
		draw.Draw(canvas, b, m, b.Min, draw.Src)
		m = canvas
	}
	out := orient(flatten(resize(m, tw, th)), orientation)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return llm.Image{}, fmt.Errorf("vision: encode %s as JPEG: %w", name, err)
	}
	b := out.Bounds()
	return llm.NewImage("image/jpeg", buf.Bytes(), b.Dx(), b.Dy(), name), nil
}

// corrupt is ErrCorrupt for the decoder's err, or ErrUnsupported when
// the decoder does not read a variant of its format (a compressed BMP, a
// 12-bit JPEG).
func corrupt(f *format, name string, err error) error {
	why := err.Error()
	var pu png.UnsupportedError
	var ju jpeg.UnsupportedError
	if errors.As(err, &pu) || errors.As(err, &ju) || errors.Is(err, bmp.ErrUnsupported) {
		return fmt.Errorf("%w: %s is a %s of a kind not read here (%s); convert it to PNG first", ErrUnsupported, name, f.name, trimPrefixes(why))
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		why = "the data ends too early (the file is truncated)"
	default:
		why = cut.Clip(trimPrefixes(why), 200)
	}
	return fmt.Errorf("%w: %s does not decode as a %s: %s", ErrCorrupt, name, f.name, why)
}

// trimPrefixes drops the decoders' package names from an error text.
func trimPrefixes(why string) string {
	for _, p := range []string{"png: ", "jpeg: ", "gif: ", "webp: ", "bmp: ", "vp8: ", "vp8l: ", "riff: "} {
		why = strings.TrimPrefix(why, p)
	}
	return why
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func megapixels(px int64) string {
	if px >= 10_000_000 {
		return fmt.Sprintf("%d", (px+500_000)/1_000_000)
	}
	return fmt.Sprintf("%.1f", float64(px)/1e6)
}

// Fit is the size a picture of w×h pixels is sent at: itself when it has
// at most MaxPixels pixels and no side over MaxSide, else scaled down,
// its aspect ratio kept, to fit both (as Agent Zero does: each side times
// the square root of MaxPixels over the pixels, rounded down).
func Fit(w, h int) (int, int) {
	if w <= 0 || h <= 0 || int64(w)*int64(h) <= MaxPixels && w <= MaxSide && h <= MaxSide {
		return w, h
	}
	s := min(1, math.Sqrt(MaxPixels/(float64(w)*float64(h))), MaxSide/float64(max(w, h)))
	nw := min(max(1, int(float64(w)*s)), MaxSide)
	nh := min(max(1, int(float64(h)*s)), MaxSide)
	// A side rounded up to 1 leaves the other the pixels left.
	nw = min(nw, MaxPixels/nh)
	nh = min(nh, MaxPixels/nw)
	return nw, nh
}

// pngCanHold reports whether data, a PNG declaring w×h pixels, is long
// enough to hold them: deflate packs at most 1,032 bytes into one, so a
// few hundred bytes declaring 36 megapixels are refused before the
// decoder allocates the bitmap.
func pngCanHold(data []byte, w, h int) bool {
	if len(data) < 33 || string(data[12:16]) != "IHDR" {
		return true // the decoder says what is wrong
	}
	depth := int64(data[24])
	channels := int64(1)
	switch data[25] {
	case 2:
		channels = 3
	case 4:
		channels = 2
	case 6:
		channels = 4
	}
	raw := int64(h) * (1 + (int64(w)*depth*channels+7)/8)
	return int64(len(data))*1032 >= raw
}

// bmpCanHold reports whether data, a BMP declaring w×h pixels, is long
// enough to hold them: the decoder reads uncompressed rows only.
func bmpCanHold(data []byte, w, h int) bool {
	if len(data) < 30 {
		return true
	}
	bpp := int64(binary.LittleEndian.Uint16(data[28:30]))
	return int64(len(data)) >= int64(h)*((int64(w)*bpp+31)/32*4)
}

// animatedWebP reports whether data, a WebP, declares an animation in its
// VP8X header: the decoder reads none.
func animatedWebP(b []byte) bool {
	return len(b) >= 21 && string(b[12:16]) == "VP8X" && b[20]&0x02 != 0
}

// gifFrames counts the frames of a GIF, up to limit.
func gifFrames(b []byte, limit int) int {
	if len(b) < 13 {
		return 0
	}
	p := 13
	if flags := b[10]; flags&0x80 != 0 {
		p += 3 << (flags&7 + 1)
	}
	skip := func(p int) int { // data sub-blocks, up to the empty one
		for p < len(b) {
			n := int(b[p])
			p++
			if n == 0 {
				break
			}
			p += n
		}
		return p
	}
	n := 0
	for p < len(b) {
		switch b[p] {
		case 0x21: // extension: introducer, label, sub-blocks
			p = skip(p + 2)
		case 0x2c: // image descriptor, local colour table, LZW code size, sub-blocks
			if n++; n >= limit || p+10 > len(b) {
				return n
			}
			flags := b[p+9]
			p += 10
			if flags&0x80 != 0 {
				p += 3 << (flags&7 + 1)
			}
			p = skip(p + 1)
		default: // the trailer, or garbage after the frames
			return n
		}
	}
	return n
}

// exifOrientation is the Exif orientation (1 to 8) of a JPEG, 1 when it
// has none.
func exifOrientation(b []byte) int {
	p := 2
	for p+4 <= len(b) {
		if b[p] != 0xff {
			return 1
		}
		marker := b[p+1]
		switch {
		case marker == 0xff: // fill
			p++
			continue
		case marker == 0xda || marker == 0xd9: // start of scan, end of image
			return 1
		case marker == 0x01 || marker >= 0xd0 && marker <= 0xd7: // no length
			p += 2
			continue
		}
		size := int(b[p+2])<<8 | int(b[p+3])
		if size < 2 || p+2+size > len(b) {
			return 1
		}
		if seg := b[p+4 : p+2+size]; marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		p += 2 + size
	}
	return 1
}

// tiffOrientation reads the orientation tag of a TIFF header's first IFD.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int64(bo.Uint32(t[4:8]))
	if off+2 > int64(len(t)) {
		return 1
	}
	n := int64(bo.Uint16(t[off:]))
	for i := range n {
		e := off + 2 + 12*i
		if e+12 > int64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[e+2:]) != 3 { // SHORT
			return 1
		}
		if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// reducingGap is how much larger than the target a box filter leaves a
// picture before Catmull-Rom scales it (Pillow's reducing_gap): on a
// 12-megapixel photo, 1.5 halves the time of Catmull-Rom alone and
// stays as close to Lanczos (Agent Zero's filter), where 1.0 or a
// bilinear second step alias visibly.
const reducingGap = 1.5

// resize is m at w×h as an *image.RGBA: copied when it is that size,
// else scaled with Catmull-Rom, after a box filter has brought it down to
// between reducingGap and twice that times the size.
func resize(m image.Image, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sr := m.Bounds()
	if sr.Dx() == w && sr.Dy() == h {
		draw.Draw(dst, dst.Rect, m, sr.Min, draw.Src)
		return dst
	}
	if k := int(min(float64(sr.Dx())/float64(w), float64(sr.Dy())/float64(h)) / reducingGap); k >= 2 {
		m = boxReduce(m, (sr.Dx()+k-1)/k, (sr.Dy()+k-1)/k)
		sr = m.Bounds()
	}
	draw.CatmullRom.Scale(dst, dst.Rect, m, sr, draw.Src, nil)
	return dst
}

// flatten puts m, premultiplied, onto white: JPEG has no transparency.
func flatten(m *image.RGBA) *image.RGBA {
	for i := 0; i+3 < len(m.Pix); i += 4 {
		a := m.Pix[i+3]
		if a == 0xff {
			continue
		}
		add := 0xff - uint16(a)
		for c := range 3 {
			m.Pix[i+c] = uint8(min(0xff, uint16(m.Pix[i+c])+add))
		}
		m.Pix[i+3] = 0xff
	}
	return m
}

// orient turns m upright by its Exif orientation o.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range h {
		for x := range w {
			var dx, dy int
			switch o {
			case 2: // mirrored
				dx, dy = w-1-x, y
			case 3: // upside down
				dx, dy = w-1-x, h-1-y
			case 4: // mirrored upside down
				dx, dy = x, h-1-y
			case 5: // transposed
				dx, dy = y, x
			case 6: // turned a quarter clockwise to stand upright
				dx, dy = h-1-y, x
			case 7: // transversed
				dx, dy = h-1-y, w-1-x
			case 8: // turned a quarter anticlockwise to stand upright
				dx, dy = y, w-1-x
			}
			copy(out.Pix[out.PixOffset(dx, dy):][:4], m.Pix[m.PixOffset(x, y):][:4])
		}
	}
	return out
}

// boxReduce is m shrunk to w×h by averaging the source pixels each
// destination pixel covers (blocks of whole pixels, their edges spread
// evenly), in premultiplied RGBA.
func boxReduce(m image.Image, w, h int) *image.RGBA {
	r := m.Bounds()
	sw := r.Dx()
	row := make([]uint8, 4*sw) // one source row, premultiplied RGBA
	read := rowReader(m)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	reduce(dst.Pix, dst.Stride, w, h, sw, r.Dy(), func(y int) []uint8 {
		read(row, r.Min.Y+y)
		return row
	})
	return dst
}

// reduce averages rows of sw pixels of 4 bytes, sh of them given by
// row, into dst: h rows of w pixels, dstStride bytes apart.
func reduce(dst []uint8, dstStride, w, h, sw, sh int, row func(y int) []uint8) {
	// colOf is the destination pixel of each source pixel; colN how many
	// source pixels each destination one averages.
	colOf := make([]int32, sw)
	colN := make([]uint32, w)
	for x := range sw {
		c := int32(int64(x) * int64(w) / int64(sw))
		colOf[x] = 4 * c
		colN[c]++
	}
	acc := make([]uint32, 4*w)
	y := 0
	for dy := range h {
		clear(acc)
		end := int((int64(dy) + 1) * int64(sh) / int64(h))
		rows := uint32(end - y)
		for ; y < end; y++ {
			s := row(y)[:4*sw]
			for x, c := range colOf {
				p := s[4*x : 4*x+4 : 4*x+4]
				a := acc[c : c+4 : c+4]
				a[0] += uint32(p[0])
				a[1] += uint32(p[1])
				a[2] += uint32(p[2])
				a[3] += uint32(p[3])
			}
		}
		out := dst[dy*dstStride : dy*dstStride+4*w]
		for i := range out {
			d := colN[i/4] * rows
			out[i] = uint8((acc[i] + d/2) / d)
		}
	}
}

// rowReader returns a function that writes the row y of m into row as
// premultiplied 8-bit RGBA: directly for the decoders' usual bitmaps,
// through RGBA64At or At for the others.
func rowReader(m image.Image) func(row []uint8, y int) {
	r := m.Bounds()
	switch m := m.(type) {
	case *image.RGBA:
		return func(row []uint8, y int) {
			copy(row, m.Pix[m.PixOffset(r.Min.X, y):])
		}
	case *image.NRGBA:
		return func(row []uint8, y int) {
			src := m.Pix[m.PixOffset(r.Min.X, y):][:len(row)]
			for i := 0; i < len(row); i += 4 {
				a := uint32(src[i+3])
				row[i] = uint8((uint32(src[i])*a + 127) / 255)
				row[i+1] = uint8((uint32(src[i+1])*a + 127) / 255)
				row[i+2] = uint8((uint32(src[i+2])*a + 127) / 255)
				row[i+3] = uint8(a)
			}
		}
	case *image.Gray:
		return func(row []uint8, y int) {
			src := m.Pix[m.PixOffset(r.Min.X, y):][:len(row)/4]
			for x, g := range src {
				row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = g, g, g, 0xff
			}
		}
	case *image.Paletted:
		var pal [256][4]uint8
		for i, c := range m.Palette {
			cr, cg, cb, ca := c.RGBA()
			pal[i] = [4]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8), uint8(ca >> 8)}
		}
		return func(row []uint8, y int) {
			src := m.Pix[m.PixOffset(r.Min.X, y):][:len(row)/4]
			for x, i := range src {
				copy(row[4*x:4*x+4], pal[i][:])
			}
		}
	case *image.YCbCr:
		hs, vs, ok := subsampleShifts(m.SubsampleRatio)
		if !ok || m.Rect.Min.X < 0 || m.Rect.Min.Y < 0 {
			break
		}
		return func(row []uint8, y int) {
			ys := m.Y[m.YOffset(r.Min.X, y):][:len(row)/4]
			c0 := (y>>vs-m.Rect.Min.Y>>vs)*m.CStride - m.Rect.Min.X>>hs
			for x, yy := range ys {
				ci := c0 + (r.Min.X+x)>>hs
				row[4*x], row[4*x+1], row[4*x+2] = ycbcrToRGB(yy, m.Cb[ci], m.Cr[ci])
				row[4*x+3] = 0xff
			}
		}
	}
	if m, ok := m.(image.RGBA64Image); ok {
		return func(row []uint8, y int) {
			for x := range len(row) / 4 {
				c := m.RGBA64At(r.Min.X+x, y)
				row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = uint8(c.R>>8), uint8(c.G>>8), uint8(c.B>>8), uint8(c.A>>8)
			}
		}
	}
	return func(row []uint8, y int) {
		for x := range len(row) / 4 {
			cr, cg, cb, ca := m.At(r.Min.X+x, y).RGBA()
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = uint8(cr>>8), uint8(cg>>8), uint8(cb>>8), uint8(ca>>8)
		}
	}
}

// subsampleShifts are the shifts from a pixel's column and row to its
// chroma sample's.
func subsampleShifts(r image.YCbCrSubsampleRatio) (hs, vs uint, ok bool) {
	switch r {
	case image.YCbCrSubsampleRatio444:
		return 0, 0, true
	case image.YCbCrSubsampleRatio422:
		return 1, 0, true
	case image.YCbCrSubsampleRatio420:
		return 1, 1, true
	case image.YCbCrSubsampleRatio440:
		return 0, 1, true
	case image.YCbCrSubsampleRatio411:
		return 2, 0, true
	case image.YCbCrSubsampleRatio410:
		return 2, 1, true
	}
	return 0, 0, false
}

// ycbcrToRGB is color.YCbCrToRGB, small enough to be inlined.
func ycbcrToRGB(y, cb, cr uint8) (uint8, uint8, uint8) {
	yy := int32(y) * 0x10101
	cb1, cr1 := int32(cb)-128, int32(cr)-128
	return clamp(yy + 91881*cr1), clamp(yy - 22554*cb1 - 46802*cr1), clamp(yy + 116130*cb1)
}

// clamp is v>>16 held to 0..255.
func clamp(v int32) uint8 {
	if uint32(v)&0xff000000 == 0 {
		return uint8(v >> 16)
	}
	return uint8(^(v >> 31))
}
