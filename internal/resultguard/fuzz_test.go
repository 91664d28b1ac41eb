package resultguard

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// fuzzLimits are small, so that short inputs reach every limit.
var fuzzLimits = Limits{
	TextBytes: MinTextBytes, Blocks: 3, StructuredDepth: 3, StructuredBytes: 64,
	Images: true, ImageBytes: 1 << 10, ImageSide: 64, ImagePixels: 1000, ImagesPerResult: 1,
}

func FuzzResult(f *testing.F) {
	long := strings.Repeat("é", 200)
	png := encodePNG(f, 3, 2)
	for _, s := range []string{
		result(textBlock("hello")),
		result(textBlock(long), `{"type":"text","text":"a\ud800b\udc00","_meta":{}}`, "7"),
		result(textBlock("a"), textBlock("b"), textBlock("c"), textBlock("d")),
		result(imageBlock(png, "image/png"), imageBlock(png, "image/png"), imageBlock(png, "image/jpeg")),
		result(imageBlock(pngHeader(100000, 100000), "image/png"), `{"type":"image","data":1}`),
		result(`{"type":"audio","data":"`+b64(make([]byte, 2000))+`"}`, `{"type":"hologram"}`),
		result(`{"type":"resource","resource":{"uri":"x://y","text":"` + long + `","blob":"AAAA"}}`),
		`{"structuredContent":{"a":{"b":{"c":{"d":1}}}},"isError":true}`,
		`{"content":null,"structuredContent":"` + long + `"}`,
		`{"CONTENT":[{"TYPE":"text","Text":"x","text":"y"}], "_meta" : {"k":[1,2,{}]} }`,
		`{"\u0063ontent":[{"\u0074ype":"\u0069mage","data":"AAAA","mimeType":"image/png"}]}`,
		"{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}",
		`[]`, `{"content":{}}`, `{}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(result(textBlock("x"), textBlock(long))), true)
	f.Fuzz(func(t *testing.T, raw []byte, wrap bool) {
		o := Options{Server: "fz", Wrap: wrap}
		out, findings, err := Result(raw, fuzzLimits, o)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonMalformed {
				t.Fatalf("error %v is not a malformed *Error", err)
			}
			if json.Valid(raw) && len(raw) > 0 && raw[0] == '{' {
				// A valid object is refused only for its content or
				// a repeated key.
				if !strings.Contains(e.Detail, "content") && !strings.Contains(e.Detail, "repeated") {
					t.Fatalf("valid object refused: %v", err)
				}
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q from %q", out, raw)
		}
		if len(findings) == 0 && !wrap && string(out) != string(raw) {
			t.Fatalf("changed without findings: %q", out)
		}
		if wrap {
			return
		}
		again, f2, err := Result(out, fuzzLimits, o)
		if err != nil || len(f2) != 0 || string(again) != string(out) {
			t.Fatalf("not idempotent: %v %v\n%q\n%q", f2, err, out, again)
		}
	})
}

// TestResultRandom guards results built at random from the pieces that
// matter, which byte-level fuzzing reaches only slowly, and checks the same
// invariants as FuzzResult plus the limits themselves.
func TestResultRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	png := encodePNG(t, 3, 2)
	long := strings.Repeat("ab\"é\n", 80)
	longJSON := strings.Repeat(`ab\"é\n`, 80)
	blocks := []string{
		textBlock("short"), textBlock(long), `{"type":"text","text":"x\ud800y","annotations":{}}`,
		"{\"type\":\"text\",\"text\":\"bad \xff byte\"}", `{"type":"text","text":7}`, `{"type":"text"}`,
		imageBlock(png, "image/png"), imageBlock(png, "image/gif"), imageBlock(pngHeader(9000, 9000), "image/png"),
		`{"type":"image","data":"AAAA"}`, `{"type":"audio","data":"` + b64(make([]byte, 1500)) + `"}`,
		`{"type":"audio","data":"AAAA"}`, `{"type":"resource","resource":{"uri":"x://y","text":"` + longJSON + `"}}`,
		`{"type":"resource","resource":{"blob":"` + b64(make([]byte, 1500)) + `"}}`, `{"type":"resource","resource":[]}`,
		`{"type":"resource_link","uri":"x://y","name":"` + longJSON + `"}`, `{"type":"hologram","text":"` + longJSON + `"}`,
		`{"TYPE":"text","Text":"a","text":"b"}`, `null`, `[1]`, `{}`,
	}
	structured := []string{`{}`, `{"a":{"b":{"c":{}}}}`, `{"a":{"b":{"c":{"d":1}}}}`, `"` + longJSON + `"`, `null`, `[1,[2,[3]]]`}
	for range 3000 {
		var b []string
		for range rng.IntN(7) {
			b = append(b, blocks[rng.IntN(len(blocks))])
		}
		members := []string{`"isError":false`, `"_meta":{"k":[1]}`}
		switch rng.IntN(4) {
		case 0:
			members = append(members, `"content":[`+strings.Join(b, ",")+`]`)
		case 1:
			members = append(members, `"content":[`+strings.Join(b, " , ")+`]`, `"content2":1`)
		case 2:
			members = append(members, `"content":null`)
		}
		if rng.IntN(2) == 0 {
			members = append(members, `"structuredContent":`+structured[rng.IntN(len(structured))])
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		raw := "{" + strings.Join(members, ",") + "}"
		l := fuzzLimits
		l.Blocks = 1 + rng.IntN(4)
		l.Images = rng.IntN(4) != 0
		out, _ := guardOK(t, raw, l, Options{Server: "r"})

		var r struct {
			Content []struct {
				Type, Text string
				Resource   struct{ Text string }
			}
			StructuredContent json.RawMessage
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if len(r.Content) > l.Blocks {
			t.Fatalf("%d blocks, limit %d: %s", len(r.Content), l.Blocks, out)
		}
		images := 0
		for _, c := range r.Content {
			if len(c.Text) > l.TextBytes && c.Type == "text" || len(c.Resource.Text) > l.TextBytes {
				t.Fatalf("text over the limit: %s", out)
			}
			if c.Type == "image" {
				images++
			}
		}
		if images > l.ImagesPerResult || images > 0 && !l.Images {
			t.Fatalf("%d images: %s", images, out)
		}
		if len(r.StructuredContent) > l.StructuredBytes {
			t.Fatalf("structured content over the limit: %s", out)
		}
	}
}
