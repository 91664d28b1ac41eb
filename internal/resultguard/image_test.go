package resultguard

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"testing"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func testImage(w, h int) image.Image {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		m.Set(x, 0, color.RGBA{R: uint8(x * 40), A: 255})
	}
	return m
}

func encodePNG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a PNG signature and an IHDR chunk with a valid CRC claiming
// w×h truecolor pixels, and no pixel data at all: what a decompression bomb
// looks like to a header check.
func pngHeader(w, h uint32) []byte {
	chunk := []byte("IHDR")
	chunk = binary.BigEndian.AppendUint32(chunk, w)
	chunk = binary.BigEndian.AppendUint32(chunk, h)
	chunk = append(chunk, 8, 2, 0, 0, 0) // 8-bit truecolor, no interlace
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// webp wraps one chunk in a RIFF WEBP header.
func webp(fourCC string, payload []byte) []byte {
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(payload)))
	b = append(b, "WEBP"+fourCC...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

func webpVP8(w, h uint16) []byte {
	p := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a} // key frame tag, start code
	p = binary.LittleEndian.AppendUint16(p, w)
	p = binary.LittleEndian.AppendUint16(p, h)
	return webp("VP8 ", append(p, make([]byte, 8)...))
}

func webpVP8L(w, h uint32) []byte {
	p := binary.LittleEndian.AppendUint32([]byte{0x2f}, (w-1)|(h-1)<<14)
	return webp("VP8L", append(p, 0, 0, 0))
}

func webpVP8X(w, h uint32) []byte {
	p := []byte{0x10, 0, 0, 0}
	p = append(p, byte(w-1), byte((w-1)>>8), byte((w-1)>>16))
	p = append(p, byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	return webp("VP8X", p)
}

// jpegWithAPP puts an APP1 segment of about size bytes between the SOI
// marker and the rest of a real JPEG, pushing its frame header back.
func jpegWithAPP(t testing.TB, size int) []byte {
	j := encodeJPEG(t, 3, 2)
	out := bytes.Clone(j[:2])
	for size > 0 {
		n := min(size, 65533)
		out = append(out, 0xff, 0xe1, byte((n+2)>>8), byte(n+2))
		out = append(out, make([]byte, n)...)
		size -= n
	}
	return append(out, j[2:]...)
}

func TestImage(t *testing.T) {
	lim := Default()
	tests := []struct {
		name   string
		data   string
		mime   string
		l      Limits
		w, h   int
		reason string
	}{
		{"png", b64(encodePNG(t, 3, 2)), "image/png", lim, 3, 2, ""},
		{"gif", b64(encodeGIF(t, 5, 4)), "image/gif", lim, 5, 4, ""},
		{"jpeg", b64(encodeJPEG(t, 7, 6)), "image/jpeg", lim, 7, 6, ""},
		{"mime case and params", b64(encodePNG(t, 3, 2)), " Image/PNG; q=1", lim, 3, 2, ""},
		{"base64 with newlines", strings.Join(strings.SplitAfter(b64(encodePNG(t, 3, 2)), "AAA"), "\r\n"), "image/png", lim, 3, 2, ""},
		{"webp VP8", b64(webpVP8(640, 480)), "image/webp", lim, 640, 480, ""},
		{"webp VP8 scale bits ignored", b64(webpVP8(0xc000|640, 0x4000|480)), "image/webp", lim, 640, 480, ""},
		{"webp VP8L", b64(webpVP8L(16383, 2)), "image/webp", lim, 0, 0, ReasonTooWide},
		{"webp VP8L small", b64(webpVP8L(300, 200)), "image/webp", lim, 300, 200, ""},
		{"webp VP8X", b64(webpVP8X(4000, 3000)), "image/webp", lim, 4000, 3000, ""},
		{"webp VP8X huge canvas", b64(webpVP8X(1<<24, 1<<24)), "image/webp", lim, 0, 0, ReasonTooWide},
		{"webp VP8 not key frame", b64(func() []byte { b := webpVP8(8, 8); b[20] |= 1; return b }()), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"webp VP8 bad start code", b64(func() []byte { b := webpVP8(8, 8); b[23] = 0; return b }()), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"webp VP8L version", b64(func() []byte { b := webpVP8L(8, 8); b[24] |= 0x20; return b }()), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"webp unknown chunk", b64(webp("ALPH", make([]byte, 10))), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"webp short chunk", b64(webp("VP8X", make([]byte, 4))), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"webp truncated", b64(webpVP8X(8, 8)[:24]), "image/webp", lim, 0, 0, ReasonBadHeader},
		{"png bomb", b64(pngHeader(100000, 100000)), "image/png", lim, 0, 0, ReasonTooWide},
		{"png 1x70M", b64(pngHeader(1, 70_000_000)), "image/png", lim, 0, 0, ReasonTooWide},
		{"png 1x70M wide sides", b64(pngHeader(1, 70_000_000)), "image/png", Limits{ImageSide: 1 << 30}, 0, 0, ReasonTooManyPixels},
		{"png 8192x8192", b64(pngHeader(8192, 8192)), "image/png", lim, 0, 0, ReasonTooManyPixels},
		{"png 8192x7812", b64(pngHeader(8192, 7812)), "image/png", lim, 8192, 7812, ""},
		{"png bad crc", b64(func() []byte { b := pngHeader(8, 8); b[len(b)-1]++; return b }()), "image/png", lim, 0, 0, ReasonBadHeader},
		{"png truncated", b64(pngHeader(8, 8)[:20]), "image/png", lim, 0, 0, ReasonBadHeader},
		{"png zero width", b64(pngHeader(0, 8)), "image/png", lim, 0, 0, ReasonBadHeader},
		{"png labelled jpeg", b64(encodePNG(t, 3, 2)), "image/jpeg", lim, 0, 0, ReasonMIMEMismatch},
		{"text labelled png", b64([]byte("hello, world, not an image")), "image/png", lim, 0, 0, ReasonMIMEMismatch},
		{"svg", b64([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)), "image/svg+xml", lim, 0, 0, ReasonUnsupportedType},
		{"no mime", b64(encodePNG(t, 3, 2)), "", lim, 0, 0, ReasonUnsupportedType},
		{"bmp", b64([]byte("BM")), "image/bmp", lim, 0, 0, ReasonUnsupportedType},
		{"empty", "", "image/png", lim, 0, 0, ReasonBadHeader},
		{"bad base64", "iVBORw0KGgo!", "image/png", lim, 0, 0, ReasonBadBase64},
		{"url base64", "iVBORw0KGgo_", "image/png", lim, 0, 0, ReasonBadBase64},
		{"unpadded base64", "iVBORw0KGgo", "image/png", lim, 0, 0, ReasonBadBase64},
		{"data after padding", "iVBO==AA", "image/png", lim, 0, 0, ReasonBadBase64},
		{"too large", b64(encodePNG(t, 30, 30)), "image/png", Limits{ImageBytes: 50}, 0, 0, ReasonTooLarge},
		{"jpeg header after 60 KiB", b64(jpegWithAPP(t, 60<<10)), "image/jpeg", lim, 3, 2, ""},
		{"jpeg header after 64 KiB", b64(jpegWithAPP(t, 70<<10)), "image/jpeg", lim, 0, 0, ReasonBadHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, h, err := Image(tt.data, tt.mime, tt.l)
			var ie *ImageError
			if tt.reason == "" {
				if err != nil || w != tt.w || h != tt.h {
					t.Fatalf("Image = %d×%d, %v; want %d×%d", w, h, err, tt.w, tt.h)
				}
				return
			}
			if !errors.As(err, &ie) || ie.Reason != tt.reason {
				t.Fatalf("Image = %d×%d, %v; want reason %s", w, h, err, tt.reason)
			}
		})
	}
}

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// maxRead is the most base64 text a header check may consume: the window,
// encoded, plus the base64 decoder's read-ahead.
const maxRead = HeaderWindow/3*4 + 2048

// checkReads runs checkImage over data and fails if it read more than
// maxRead bytes of it.
func checkReads(t *testing.T, data, mime string, l Limits) error {
	t.Helper()
	size, ok := base64Size(data)
	src := &countingReader{r: strings.NewReader(data)}
	_, _, err := checkImage(size, ok, src, mime, l.WithDefaults())
	if src.n > maxRead {
		t.Fatalf("read %d bytes of base64, limit %d", src.n, maxRead)
	}
	return err
}

func TestImageReadsOnlyHeaders(t *testing.T) {
	// A real bomb: a valid header claiming 100000×100000 followed by a
	// large IDAT. Only the header may be read.
	bomb := append(pngHeader(100000, 100000), make([]byte, 3<<20)...)
	if err := checkReads(t, b64(bomb), "image/png", Limits{ImageSide: 1 << 20, ImagePixels: 1 << 40}); err != nil {
		t.Fatalf("bomb with raised limits: %v", err)
	}
	big := jpegWithAPP(t, 1<<20)
	if err := checkReads(t, b64(big), "image/jpeg", Limits{}); err == nil {
		t.Fatal("a JPEG whose header is past the window was accepted")
	}
}

func TestBase64Size(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 100, 1000} {
		data := b64(make([]byte, n))
		if size, ok := base64Size(data); size != n || !ok {
			t.Errorf("base64Size(%d bytes) = %d, %v", n, size, ok)
		}
		if size, ok := base64Size([]byte(data)); size != n || !ok {
			t.Errorf("base64Size([]byte, %d bytes) = %d, %v", n, size, ok)
		}
	}
}

func FuzzImage(f *testing.F) {
	f.Add(b64(encodePNG(f, 3, 2)), "image/png")
	f.Add(b64(encodeGIF(f, 3, 2)), "image/gif")
	f.Add(b64(encodeJPEG(f, 3, 2)), "image/jpeg")
	f.Add(b64(pngHeader(100000, 100000)), "image/png")
	f.Add(b64(webpVP8(8, 8)), "image/webp")
	f.Add(b64(webpVP8L(8, 8)), "image/webp")
	f.Add(b64(webpVP8X(8, 8)), "image/webp")
	f.Add("iVBORw0KGgo=", "image/png")
	f.Fuzz(func(t *testing.T, data, mime string) {
		err := checkReads(t, data, mime, Limits{})
		var ie *ImageError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("error %v is not an *ImageError", err)
		}
		// An accepted image is within the default limits.
		w, h, err := Image(data, mime, Limits{})
		if err == nil {
			if w <= 0 || h <= 0 || w > 8192 || h > 8192 || w*h > 64_000_000 {
				t.Fatalf("accepted %d×%d", w, h)
			}
		}
	})
}
