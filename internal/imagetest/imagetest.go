// Package imagetest makes the pictures the tests send: small PNGs that
// package vision keeps byte for byte, so the hash a test computes is the one
// the model is sent.
package imagetest

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
)

// PNG is a w×h PNG of a gradient that depends on its size only: the same
// bytes in every process, and different pictures for different sizes.
func PNG(w, h int) []byte {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.NRGBA{uint8(60*x + 7*w), uint8(80*y + 11*h), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		panic(err) // an in-memory encode of a valid image does not fail
	}
	return b.Bytes()
}

// Solid is a w×h PNG of one colour.
func Solid(w, h int, c color.Color) []byte {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(m, m.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		panic(err) // an in-memory encode of a valid image does not fail
	}
	return b.Bytes()
}
