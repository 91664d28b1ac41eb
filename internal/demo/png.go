package demo

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// Sizes of the generated pictures, in pixels a side.
const (
	imageSize = 16 // the image tool's picture
	logoSize  = 32 // demo://logo.png
)

// The pictures are generated once, on first use, and shared: callers must
// not modify the returned bytes.
var (
	imagePNG = sync.OnceValue(func() []byte { return gradientPNG(imageSize) })
	logoPNG  = sync.OnceValue(func() []byte { return gradientPNG(logoSize) })
)

// gradientPNG returns a size×size PNG whose red grows to the right, green
// grows downwards, and blue is constant.
func gradientPNG(size int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	last := max(size-1, 1)
	for y := range size {
		for x := range size {
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(x * 255 / last),
				G: uint8(y * 255 / last),
				B: 0xa0,
				A: 0xff,
			})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		// Encoding an in-memory NRGBA image into a bytes.Buffer cannot fail.
		panic("demo: encoding PNG: " + err.Error())
	}
	return buf.Bytes()
}
