package vision

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/zeroagent/zero/llm"
)

// WebP files of one pixel (Google's feature-detection images): the
// x/image packages decode WebP but do not encode it.
var (
	webpLossy     = mustBase64("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA")
	webpLossless  = mustBase64("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
	webpAlpha     = mustBase64("UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==")
	webpAnimation = mustBase64("UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA")
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// pngChunk appends a PNG chunk to buf.
func pngChunk(buf *bytes.Buffer, typ string, data []byte) {
	binary.Write(buf, binary.BigEndian, uint32(len(data)))
	buf.WriteString(typ)
	buf.Write(data)
	binary.Write(buf, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
}

// pngHeader is a PNG signature and IHDR declaring w×h pixels of 8-bit
// colorType (0 grey, 2 RGB, 6 RGBA).
func pngHeader(w, h int, colorType byte) *bytes.Buffer {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, colorType
	pngChunk(&buf, "IHDR", ihdr)
	return &buf
}

// streamPNG writes a PNG row by row, without its bitmap in memory: row
// fills each row's pixel bytes.
func streamPNG(t testing.TB, w, h int, colorType byte, level int, row func(y int, line []byte)) []byte {
	t.Helper()
	buf := pngHeader(w, h, colorType)
	channels := map[byte]int{0: 1, 2: 3, 6: 4}[colorType]
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, level)
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 1+w*channels)
	for y := range h {
		row(y, line[1:])
		zw.Write(line)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	pngChunk(buf, "IDAT", z.Bytes())
	pngChunk(buf, "IEND", nil)
	return buf.Bytes()
}

func encode(t testing.TB, m image.Image, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := enc(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNG(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }
func encodeJPEG(b *bytes.Buffer, m image.Image) error {
	return jpeg.Encode(b, m, &jpeg.Options{Quality: 90})
}
func encodeGIF(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) }
func encodeBMP(b *bytes.Buffer, m image.Image) error { return bmp.Encode(b, m) }

// gradient is an opaque w×h picture.
func gradient(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(w-1, 1)), uint8(y * 255 / max(h-1, 1)), 128, 255})
		}
	}
	return m
}

func decodeResult(t *testing.T, data []byte, mime string) image.Image {
	t.Helper()
	m, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the result does not decode: %v", err)
	}
	if "image/"+format != mime {
		t.Errorf("the result is %s, its MIME type says %s", format, mime)
	}
	return m
}

func TestSmallPictureIsKeptByteForByte(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		data []byte
		mime string
		w, h int
	}{
		{"png", encode(t, gradient(64, 48), encodePNG), "image/png", 64, 48},
		{"jpeg", encode(t, gradient(640, 480), encodeJPEG), "image/jpeg", 640, 480},
		{"gif", encode(t, gradient(50, 30), encodeGIF), "image/gif", 50, 30},
		{"webp lossy", webpLossy, "image/webp", 1, 1},
		{"webp lossless", webpLossless, "image/webp", 1, 1},
		{"webp with alpha", webpAlpha, "image/webp", 1, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			img, err := Load(tt.data, "pic")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img.Data, tt.data) || img.MIME != tt.mime || img.Width != tt.w || img.Height != tt.h || img.Name != "pic" {
				t.Errorf("got %s %d×%d %q (%d bytes, same %v), want %s %d×%d kept", img.MIME, img.Width, img.Height, img.Name,
					len(img.Data), bytes.Equal(img.Data, tt.data), tt.mime, tt.w, tt.h)
			}
			if img.Hash == "" {
				t.Error("no hash")
			}
			if mime, ok := Sniff(tt.data); !ok || mime != tt.mime {
				t.Errorf("Sniff = %s, %v", mime, ok)
			}
		})
	}
}

func TestLargePNGIsScaledToJPEG(t *testing.T) {
	t.Parallel()
	w, h := 4000, 3000
	if raceEnabled {
		w, h = 1600, 1200 // scaled to the same size
	}
	data := streamPNG(t, w, h, 2, zlib.BestSpeed, func(y int, line []byte) {
		for x := range len(line) / 3 {
			line[3*x], line[3*x+1], line[3*x+2] = uint8(x), uint8(y), uint8(x^y)
		}
	})
	img, err := Load(data, "big.png")
	if err != nil {
		t.Fatal(err)
	}
	if img.MIME != "image/jpeg" || img.Width*img.Height > MaxPixels || img.Width != 1011 || img.Height != 758 {
		t.Errorf("got %s %d×%d, want a JPEG of 1011×758 (at most %d pixels, 4:3)", img.MIME, img.Width, img.Height, MaxPixels)
	}
	m := decodeResult(t, img.Data, img.MIME)
	if b := m.Bounds(); b.Dx() != img.Width || b.Dy() != img.Height {
		t.Errorf("the JPEG is %v, the image says %d×%d", b, img.Width, img.Height)
	}
}

func TestReencodedFormats(t *testing.T) {
	t.Parallel()
	anim := &gif.GIF{Image: []*image.Paletted{paletted(20, 10, 1), paletted(20, 10, 2)}, Delay: []int{10, 10}}
	var animated bytes.Buffer
	if err := gif.EncodeAll(&animated, anim); err != nil {
		t.Fatal(err)
	}
	big := streamPNG(t, 1000, 1000, 2, zlib.NoCompression, func(y int, line []byte) {
		for i := range line {
			line[i] = uint8(i*7 + y*13)
		}
	})
	cmyk := image.NewCMYK(image.Rect(0, 0, 30, 20))
	for _, tt := range []struct {
		name string
		data []byte
		w, h int
	}{
		{"bmp", encode(t, gradient(40, 30), encodeBMP), 40, 30},
		{"animated gif: its first frame", animated.Bytes(), 20, 10},
		{"png of more than MaxKeepBytes", big, 876, 876},
		{"cmyk jpeg", encode(t, cmyk, encodeJPEG), 30, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			img, err := Load(tt.data, "x")
			if err != nil {
				t.Fatal(err)
			}
			if img.MIME != "image/jpeg" || img.Width != tt.w || img.Height != tt.h {
				t.Errorf("got %s %d×%d, want image/jpeg %d×%d", img.MIME, img.Width, img.Height, tt.w, tt.h)
			}
			decodeResult(t, img.Data, img.MIME)
		})
	}
	if n := gifFrames(animated.Bytes(), 10); n != 2 {
		t.Errorf("gifFrames = %d, want 2", n)
	}
}

func paletted(w, h int, c uint8) *image.Paletted {
	m := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White, color.RGBA{255, 0, 0, 255}})
	for i := range m.Pix {
		m.Pix[i] = c
	}
	return m
}

func TestTransparencyIsFlattenedOntoWhite(t *testing.T) {
	t.Parallel()
	// 1200×1000 needs scaling: left half transparent, right half black at
	// half opacity.
	data := streamPNG(t, 1200, 1000, 6, zlib.BestSpeed, func(_ int, line []byte) {
		for x := range len(line) / 4 {
			if x >= 600 {
				line[4*x+3] = 128
			}
		}
	})
	img, err := Load(data, "alpha.png")
	if err != nil {
		t.Fatal(err)
	}
	if img.MIME != "image/jpeg" {
		t.Fatalf("got %s", img.MIME)
	}
	out := decodeResult(t, img.Data, img.MIME)
	b := out.Bounds()
	if r, g, bl, _ := out.At(b.Dx()/4, b.Dy()/2).RGBA(); r>>8 < 250 || g>>8 < 250 || bl>>8 < 250 {
		t.Errorf("the transparent half is %d,%d,%d, want white", r>>8, g>>8, bl>>8)
	}
	if r, _, _, _ := out.At(3*b.Dx()/4, b.Dy()/2).RGBA(); r>>8 < 117 || r>>8 > 137 {
		t.Errorf("the half-opaque black half is %d, want about 127", r>>8)
	}
}

// withOrientation inserts an Exif APP1 segment of orientation o after a
// JPEG's SOI marker.
func withOrientation(jpg []byte, o uint16) []byte {
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00")
	binary.BigEndian.PutUint16(tiff[18:], o)
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := []byte{0xff, 0xe1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, app1...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func TestExifOrientationIsApplied(t *testing.T) {
	t.Parallel()
	// 200×100, red in the top-left corner.
	m := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for y := range 100 {
		for x := range 200 {
			c := color.RGBA{0, 0, 255, 255}
			if x < 40 && y < 40 {
				c = color.RGBA{255, 0, 0, 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	data := withOrientation(encode(t, m, encodeJPEG), 6)
	if o := exifOrientation(data); o != 6 {
		t.Fatalf("exifOrientation = %d", o)
	}
	img, err := Load(data, "phone.jpg")
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 100 || img.Height != 200 || bytes.Equal(img.Data, data) {
		t.Fatalf("got %d×%d (kept %v), want it turned upright: 100×200", img.Width, img.Height, bytes.Equal(img.Data, data))
	}
	// Turned a quarter clockwise, the top-left corner is the top-right.
	out := decodeResult(t, img.Data, img.MIME)
	if r, _, b, _ := out.At(90, 10).RGBA(); r>>8 < 200 || b>>8 > 60 {
		t.Errorf("the top-right corner is not red: %d,_,%d", r>>8, b>>8)
	}
	if r, _, _, _ := out.At(10, 10).RGBA(); r>>8 > 60 {
		t.Errorf("the top-left corner is red")
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	noisy := streamPNG(t, 300, 300, 2, zlib.BestSpeed, func(y int, line []byte) {
		for i := range line {
			line[i] = uint8(i*i + y*7)
		}
	})
	tests := []struct {
		name string
		data []byte
		is   []error
		says []string
	}{
		{"text", []byte("just some notes\nabout nothing\n"), []error{ErrNotImage}, []string{"not an image: f is text/plain"}},
		{"empty", nil, []error{ErrNotImage}, []string{"f is empty"}},
		{"binary", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xfe}, []error{ErrNotImage}, []string{"f is of an unknown format"}},
		{"pdf", []byte("%PDF-1.7\n%âãÏÓ\n1 0 obj\n"), []error{ErrNotImage}, []string{"application/pdf"}},
		{"tiff", []byte("II*\x00\x08\x00\x00\x00junk"), []error{ErrUnsupported, ErrNotImage}, []string{"image/tiff", "convert it"}},
		{"svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), []error{ErrUnsupported}, []string{"image/svg+xml"}},
		{"animated webp", webpAnimation, []error{ErrUnsupported}, []string{"animated WebP"}},
		{"truncated png", noisy[:len(noisy)/2], []error{ErrCorrupt}, []string{"f does not decode as a PNG"}},
		{"garbled png", append(bytes.Clone(noisy[:60]), bytes.Repeat([]byte{0x55}, 3000)...), []error{ErrCorrupt}, nil},
		{"png declaring nothing", pngHeader(0, 10, 2).Bytes(), []error{ErrCorrupt}, nil},
		{"bytes over MaxSourceBytes", append(bytes.Clone(noisy), make([]byte, MaxSourceBytes)...), []error{ErrTooLarge}, []string{"at most 32 MiB"}},
		{"200 megapixels", append(pngHeader(20000, 10000, 2).Bytes(), "IDATxxxx"...), []error{ErrTooLarge}, []string{"20000×10000 pixels (200 megapixels)", "at most 40 megapixels"}},
		{"100000×100000", append(pngHeader(100000, 100000, 6).Bytes(), "IDATxxxx"...), []error{ErrTooLarge}, []string{"100000×100000"}},
		{"36 megapixels in 200 bytes", append(pngHeader(6000, 6000, 2).Bytes(), "IDATxxxx"...), []error{ErrCorrupt}, []string{"cannot hold"}},
		{"jpeg declaring 60000×60000", jpegHeader(t, 60000, 60000), []error{ErrTooLarge}, []string{"3600 megapixels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tt.data, "f")
			if err == nil {
				t.Fatal("loaded")
			}
			for _, want := range tt.is {
				if !errors.Is(err, want) {
					t.Errorf("%v is not %v", err, want)
				}
			}
			for _, want := range tt.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

// jpegHeader is a small baseline JPEG whose header declares w×h pixels.
func jpegHeader(t testing.TB, w, h int) []byte {
	b := encode(t, gradient(8, 8), encodeJPEG)
	i := bytes.Index(b, []byte{0xff, 0xc0})
	binary.BigEndian.PutUint16(b[i+5:], uint16(h))
	binary.BigEndian.PutUint16(b[i+7:], uint16(w))
	return b
}

// allocated is how many bytes f allocates. The tests that call it are not
// parallel, so nothing else runs meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A header declaring 200 megapixels is refused before the bitmap (600 MB
// of RGB) is allocated.
func TestHugeHeaderIsRefusedWithoutDecoding(t *testing.T) {
	for _, data := range [][]byte{
		append(pngHeader(20000, 10000, 2).Bytes(), "IDATxxxx"...),
		append(pngHeader(100000, 100000, 6).Bytes(), bytes.Repeat([]byte{1}, 100)...),
		jpegHeader(t, 60000, 60000),
	} {
		var err error
		n := allocated(func() { _, err = Load(data, "huge") })
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
		if n > 8<<20 {
			t.Errorf("refusing it allocated %d bytes", n)
		}
	}
}

// A bomb: 36 megapixels of one colour in a few tens of kilobytes. It is
// within MaxSourcePixels, so it loads, scaled, in memory bounded by its
// bitmap (36 MB of grey) and the scaler's buffers (which depend on the
// size sent, not on the source's).
func TestBombLoadsInBoundedMemory(t *testing.T) {
	side := 6000
	if raceEnabled {
		side = 3000 // scaled to the same size
	}
	data := streamPNG(t, side, side, 0, zlib.BestCompression, func(y int, line []byte) {
		for i := range line {
			line[i] = 200
		}
	})
	if len(data) > 100<<10 {
		t.Fatalf("the bomb is %d bytes", len(data))
	}
	var img llm.Image
	var err error
	n := allocated(func() { img, err = Load(data, "bomb.png") })
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 876 || img.Height != 876 || img.MIME != "image/jpeg" {
		t.Errorf("got %s %d×%d", img.MIME, img.Width, img.Height)
	}
	bitmap := uint64(side * side)
	t.Logf("%d bytes of PNG; loading allocated %d MB", len(data), n>>20)
	if n > bitmap+64<<20 {
		t.Errorf("loading allocated %d bytes, more than the bitmap and 64 MiB", n)
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ w, h, ww, wh int }{
		{640, 480, 640, 480},
		{1200, 640, 1200, 640}, // 768,000 exactly
		{4000, 3000, 1011, 758},
		{6000, 6000, 876, 876},
		{1, 40_000_000, 1, MaxSide},
		{40_000, 1000, 5542, 138},
		{20_000, 100, MaxSide, 40},
		{100_000, 10, MaxSide, 1},
		{9000, 10, MaxSide, 8},
	} {
		w, h := Fit(tt.w, tt.h)
		if w != tt.ww || h != tt.wh {
			t.Errorf("Fit(%d, %d) = %d, %d, want %d, %d", tt.w, tt.h, w, h, tt.ww, tt.wh)
		}
		if w*h > MaxPixels || w > MaxSide || h > MaxSide {
			t.Errorf("Fit(%d, %d) = %d, %d: too large", tt.w, tt.h, w, h)
		}
		if tt.w*tt.h <= MaxPixels && tt.w <= MaxSide && tt.h <= MaxSide {
			continue
		}
		if ar, got := float64(tt.w)/float64(tt.h), float64(w)/float64(h); w > 10 && h > 10 && math.Abs(ar-got)/ar > 0.01 {
			t.Errorf("Fit(%d, %d) = %d, %d: aspect %.3f, want %.3f", tt.w, tt.h, w, h, got, ar)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		data []byte
		mime string
		ok   bool
	}{
		{"png", encode(t, gradient(2, 2), encodePNG), "image/png", true},
		{"jpeg", encode(t, gradient(2, 2), encodeJPEG), "image/jpeg", true},
		{"gif", encode(t, gradient(2, 2), encodeGIF), "image/gif", true},
		{"webp", webpLossless, "image/webp", true},
		{"bmp", encode(t, gradient(2, 2), encodeBMP), "image/bmp", true},
		{"text starting BM", []byte("BMW cars and other things of the sort"), "text/plain", false},
		{"html with an svg", []byte("<!DOCTYPE html><html><body><svg></svg></body></html>"), "text/html", false},
		{"svg", []byte("<!-- drawn by hand -->\n<svg viewBox='0 0 1 1'/>"), "image/svg+xml", false},
		{"heic", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), "image/heic", false},
		{"nothing", nil, "text/plain", false},
	} {
		mime, ok := Sniff(tt.data)
		if mime != tt.mime || ok != tt.ok {
			t.Errorf("%s: Sniff = %s, %v, want %s, %v", tt.name, mime, ok, tt.mime, tt.ok)
		}
	}
}

func TestConcurrentLoads(t *testing.T) {
	t.Parallel()
	data := encode(t, gradient(900, 900), encodePNG)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if img, err := Load(data, "x"); err != nil || img.Width != 876 {
				t.Errorf("%v, %d", err, img.Width)
			}
		})
	}
	wg.Wait()
}

func TestLoadContextGivesUpWaiting(t *testing.T) {
	// Not parallel: it holds the decode.
	decoding <- struct{}{}
	defer func() { <-decoding }()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := LoadContext(ctx, encode(t, gradient(4, 4), encodePNG), "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func BenchmarkLoad12MP(b *testing.B) {
	m := image.NewYCbCr(image.Rect(0, 0, 4000, 3000), image.YCbCrSubsampleRatio420)
	for y := range 3000 {
		for x := range 4000 {
			fx, fy := float64(x), float64(y)
			m.Y[m.YOffset(x, y)] = uint8(127 + 100*math.Sin(fx*fx/40000+fy/50))
			ci := m.COffset(x, y)
			m.Cb[ci] = uint8(128 + 60*math.Sin(fx/300))
			m.Cr[ci] = uint8(128 + 60*math.Cos(fy/200))
		}
	}
	data := encode(b, m, encodeJPEG)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Load(data, "photo.jpg"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUnnamedPicture(t *testing.T) {
	t.Parallel()
	if _, err := Load([]byte("hello"), ""); err == nil || err.Error() != "not an image: the picture is text/plain" {
		t.Errorf("err = %v", err)
	}
	if img, err := Load(webpLossless, ""); err != nil || img.Name != "" {
		t.Errorf("%v, name %q", err, img.Name)
	}
}

func TestBMPVariants(t *testing.T) {
	t.Parallel()
	good := encode(t, gradient(40, 30), encodeBMP)
	rle := bytes.Clone(good)
	binary.LittleEndian.PutUint32(rle[30:], 1) // BI_RLE8
	_, err := Load(rle, "rle.bmp")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "rle.bmp is a BMP of a kind not read here") {
		t.Errorf("compressed BMP: %v", err)
	}
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge[18:], 6000)
	binary.LittleEndian.PutUint32(huge[22:], 6000)
	if _, err := Load(huge, "huge.bmp"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cannot hold") {
		t.Errorf("36 megapixels in a small BMP: %v", err)
	}
}
