package resultguard

import (
	"encoding/json"
	"strings"
	"testing"
)

func benchResult(b *testing.B, raw json.RawMessage, wantChange bool) {
	l := Default()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := Result(raw, l, Options{})
		if err != nil || (len(out) == len(raw) && &out[0] == &raw[0]) == wantChange {
			b.Fatalf("unexpected result: %v", err)
		}
	}
}

func textResult(size int) json.RawMessage {
	// Prose with the escapes real text has, so that the scanner's slow
	// path is exercised now and then.
	unit := `Lorem ipsum dolor sit amet, \"consectetur\" adipiscing elit.\n`
	body := strings.Repeat(unit, size/len(unit)+1)[:size]
	body = strings.TrimRight(body, `\`)
	return json.RawMessage(`{"content":[{"type":"text","text":"` + body + `"}],"isError":false}`)
}

// The fast path: nothing changes.
func BenchmarkResult100B(b *testing.B)  { benchResult(b, textResult(50), false) }
func BenchmarkResult100KB(b *testing.B) { benchResult(b, textResult(99_000), false) }

// The slow path: one 2 MB text cut to 100 KB.
func BenchmarkResultTruncate2MB(b *testing.B) { benchResult(b, textResult(2<<20), true) }

// For comparison: what a decode of the same results costs.
func BenchmarkDecode100B(b *testing.B)  { benchDecode(b, textResult(50)) }
func BenchmarkDecode100KB(b *testing.B) { benchDecode(b, textResult(99_000)) }

func benchDecode(b *testing.B, raw json.RawMessage) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var r struct {
			Content []struct{ Type, Text string }
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValid100KB(b *testing.B) {
	raw := textResult(99_000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		json.Valid(raw)
	}
}
