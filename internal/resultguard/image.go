package resultguard

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
)

// Image rejection reasons. They are stable.
const (
	ReasonMIMEMismatch    = "mime_mismatch"    // the bytes are not the declared type
	ReasonUnsupportedType = "unsupported_type" // not PNG, JPEG, GIF or WebP
	ReasonTooLarge        = "too_large"        // decoded size over Limits.ImageBytes
	ReasonTooManyPixels   = "too_many_pixels"  // width × height over Limits.ImagePixels
	ReasonTooWide         = "too_wide"         // width or height over Limits.ImageSide
	ReasonBadHeader       = "bad_header"       // no readable header in the first HeaderWindow bytes
	ReasonBadBase64       = "bad_base64"       // not standard, padded base64
)

// ImageError is an image rejected by [Image].
type ImageError struct {
	Reason string // one of the Reason constants
	Detail string // never quotes the data or the declared type
}

func (e *ImageError) Error() string { return "resultguard: image rejected: " + e.reason() }

func (e *ImageError) reason() string { return e.Reason + ": " + e.Detail }

func imageError(reason, format string, args ...any) *ImageError {
	return &ImageError{reason, fmt.Sprintf(format, args...)}
}

// HeaderWindow is how much of an image, decoded, the header checks may
// read. JPEG needs the most: its frame header can follow large metadata
// segments (EXIF, ICC profiles), and an image whose header is not within
// the window is rejected as bad_header.
const HeaderWindow = 64 << 10

// The supported types, in their canonical spelling.
const (
	mimePNG  = "image/png"
	mimeJPEG = "image/jpeg"
	mimeGIF  = "image/gif"
	mimeWebP = "image/webp"
)

// Image checks one image, given as base64 (standard alphabet, padded, as
// MCP sends it) and its declared MIME type, under the image limits of l
// (with defaults applied). It reads headers only and never decodes pixels:
// it works out the decoded size from the base64 length, then base64-decodes
// at most [HeaderWindow] bytes to read the dimensions. The leading bytes
// must be the signature of the declared type, one of image/png,
// image/jpeg, image/gif and image/webp. It returns the dimensions, or an
// *ImageError.
//
// Animated GIF and WebP are bounded by their byte size and canvas only:
// their frame count is not checked.
func Image(data, mimeType string, l Limits) (w, h int, err error) {
	size, ok := base64Size(data)
	return checkImage(size, ok, strings.NewReader(data), mimeType, l.WithDefaults())
}

// checkImage is Image over any source of the base64 text, whose size and
// well-formedness base64Size has already found. The guard passes the bytes
// of its input here, so it never copies an image.
func checkImage(size int, ok bool, src io.Reader, mimeType string, l Limits) (w, h int, err error) {
	want := canonicalMIME(mimeType)
	if want == "" {
		return 0, 0, imageError(ReasonUnsupportedType, "declared type is not image/png, image/jpeg, image/gif or image/webp")
	}
	if !ok {
		return 0, 0, imageError(ReasonBadBase64, "data is not standard padded base64")
	}
	if size > l.ImageBytes {
		return 0, 0, imageError(ReasonTooLarge, "%d bytes, limit %d", size, l.ImageBytes)
	}
	r := io.LimitReader(base64.NewDecoder(base64.StdEncoding, src), HeaderWindow)
	var head [12]byte
	n, _ := io.ReadFull(r, head[:]) // base64Size has vouched for the encoding
	if n == 0 {
		return 0, 0, imageError(ReasonBadHeader, "no data")
	}
	if got := sniff(head[:n]); got != want {
		if got == "" {
			return 0, 0, imageError(ReasonMIMEMismatch, "declared %s, but the data has no known image signature", want)
		}
		return 0, 0, imageError(ReasonMIMEMismatch, "declared %s, but the data is %s", want, got)
	}
	hr := io.MultiReader(bytes.NewReader(head[:n]), r)
	switch want {
	case mimePNG:
		w, h, err = config(png.DecodeConfig(hr))
	case mimeJPEG:
		w, h, err = config(jpeg.DecodeConfig(hr))
	case mimeGIF:
		w, h, err = config(gif.DecodeConfig(hr))
	case mimeWebP:
		w, h, err = webpConfig(hr)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return 0, 0, imageError(ReasonBadHeader, "no complete header in the first %d bytes", min(size, HeaderWindow))
	case err != nil:
		// The image packages' messages are fixed strings, safe to show.
		return 0, 0, imageError(ReasonBadHeader, "%v", err)
	case w <= 0 || h <= 0:
		return 0, 0, imageError(ReasonBadHeader, "empty dimensions %d×%d", w, h)
	case w > l.ImageSide || h > l.ImageSide:
		return w, h, imageError(ReasonTooWide, "%d×%d px, limit %d px per side", w, h, l.ImageSide)
	case int64(w)*int64(h) > int64(l.ImagePixels):
		return w, h, imageError(ReasonTooManyPixels, "%d×%d px, limit %d pixels", w, h, l.ImagePixels)
	}
	return w, h, nil
}

// config adapts the image packages' DecodeConfig results.
func config(c image.Config, err error) (int, int, error) { return c.Width, c.Height, err }

// canonicalMIME returns the supported type that s declares, ignoring case
// and parameters, or "".
func canonicalMIME(s string) string {
	s, _, _ = strings.Cut(s, ";")
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case mimePNG, mimeJPEG, mimeGIF, mimeWebP:
		return s
	}
	return ""
}

// sniff returns the type whose signature starts b, or "".
func sniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return mimePNG
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return mimeJPEG
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return mimeGIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return mimeWebP
	}
	return ""
}

// webpConfig reads the dimensions from a WebP header (RFC 9649). The first
// chunk after the RIFF header is VP8 (lossy), VP8L (lossless) or VP8X
// (extended, whose canvas size bounds every frame; decoders reject a
// bitstream that disagrees with it).
func webpConfig(r io.Reader) (w, h int, err error) {
	var b [30]byte
	if _, err := io.ReadFull(r, b[:20]); err != nil {
		return 0, 0, err
	}
	size := binary.LittleEndian.Uint32(b[16:20])
	fourCC := string(b[12:16])
	var need int
	switch fourCC {
	case "VP8 ", "VP8X":
		need = 10
	case "VP8L":
		need = 5
	default:
		return 0, 0, errors.New("webp: first chunk is not VP8, VP8L or VP8X")
	}
	if size < uint32(need) {
		return 0, 0, errors.New("webp: first chunk too short")
	}
	p := b[20 : 20+need]
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, 0, err
	}
	switch fourCC {
	case "VP8 ":
		// RFC 6386 §9.1: a 3-byte frame tag whose low bit is 0 for a key
		// frame, the start code 9d 01 2a, then 14-bit width and height
		// (the top two bits are a scaling hint).
		if p[0]&1 != 0 {
			return 0, 0, errors.New("webp: VP8 frame is not a key frame")
		}
		if p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			return 0, 0, errors.New("webp: bad VP8 start code")
		}
		w = int(binary.LittleEndian.Uint16(p[6:]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(p[8:]) & 0x3fff)
	case "VP8L":
		// Signature 0x2f, then 14 bits width-1, 14 bits height-1, one
		// alpha bit and a 3-bit version that must be 0.
		if p[0] != 0x2f {
			return 0, 0, errors.New("webp: bad VP8L signature")
		}
		bits := binary.LittleEndian.Uint32(p[1:])
		if bits>>29 != 0 {
			return 0, 0, errors.New("webp: unknown VP8L version")
		}
		w = int(bits&0x3fff) + 1
		h = int(bits>>14&0x3fff) + 1
	case "VP8X":
		// Flags, 3 reserved bytes, then 24-bit canvas width-1 and
		// height-1.
		w = int(uint32(p[4])|uint32(p[5])<<8|uint32(p[6])<<16) + 1
		h = int(uint32(p[7])|uint32(p[8])<<8|uint32(p[9])<<16) + 1
	}
	return w, h, nil
}

// base64Size returns the decoded size of base64 text without decoding it,
// and whether it is standard padded base64 as encoding/json and Go's
// decoder (which skips '\r' and '\n') accept it. The size is right for
// malformed text too, as far as that means anything, so that a pure size
// cap (audio, blobs) can use it.
func base64Size[T ~string | ~[]byte](s T) (size int, ok bool) {
	n, pad := 0, 0
	ok = true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\r' || c == '\n':
			continue
		case c == '=':
			pad++
		case pad > 0 || !isBase64[c]:
			ok = false
		}
		n++
	}
	ok = ok && n%4 == 0 && pad <= 2
	return (n - pad) * 6 / 8, ok
}

var isBase64 = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = true
	}
	return t
}()
