//go:build unix

package launcher

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRing(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"empty", 4, nil, ""},
		{"under", 4, []string{"ab"}, "ab"},
		{"exact", 4, []string{"ab", "cd"}, "abcd"},
		{"wrap", 4, []string{"abc", "def"}, "cdef"},
		{"wrap twice", 4, []string{"abc", "def", "ghi"}, "fghi"},
		{"big write", 4, []string{"ab", "0123456789"}, "6789"},
		{"big after wrap", 4, []string{"abc", "de", "wxyz"}, "wxyz"},
		{"trim cut rune", 3, []string{"a世b"}, "b"}, // keeps "\xb8\x96b"
		{"keep whole rune", 4, []string{"a世b"}, "世b"},
		{"nothing dropped, nothing trimmed", 8, []string{"\x96ab"}, "\x96ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.limit)
			for _, w := range tt.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			got, total := r.Bytes()
			if string(got) != tt.want {
				t.Errorf("Bytes() = %q, want %q", got, tt.want)
			}
			if written := int64(len(strings.Join(tt.writes, ""))); total != written {
				t.Errorf("Bytes() total %d, want %d", total, written)
			}
		})
	}
}

// TestRingMatchesNaive compares the ring with "keep the last limit bytes"
// over random writes.
func TestRingMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		limit := 1 + rng.IntN(64)
		r := newRing(limit)
		var all []byte
		for range rng.IntN(20) {
			w := make([]byte, rng.IntN(100))
			for i := range w {
				w[i] = 'a' + byte(rng.IntN(26)) // ASCII: no rune trimming
			}
			r.Write(w)
			all = append(all, w...)
		}
		want := all[max(0, len(all)-limit):]
		if got, _ := r.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("limit %d: Bytes() = %q, want %q", limit, got, want)
		}
	}
}

// TestFromFirstLine: a tail cut in the middle of a line (perhaps of a
// secret) starts at its first whole line when it is masked.
func TestFromFirstLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cret-value leaked\nnext line\n", "next line\n"},
		{"no newline at all", "no newline at all"},
		{"only the last line\n", "only the last line\n"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(fromFirstLine([]byte(tt.in))); got != tt.want {
			t.Errorf("fromFirstLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	r := newRing(8)
	r.Write([]byte("1234567"))
	if b, total := r.Bytes(); total != int64(len(b)) {
		t.Errorf("before the limit: %d bytes kept of %d", len(b), total)
	}
	r.Write([]byte("89"))
	if b, total := r.Bytes(); total <= int64(len(b)) {
		t.Errorf("past the limit: %d bytes kept of %d", len(b), total)
	}
}

// TestStderrTailMaskedOnce: the tail is escaped and masked again only
// when the server wrote since the last read, and a read after a write
// shows the new text, masked.
func TestStderrTailMaskedOnce(t *testing.T) {
	masks := 0
	p := &Process{tail: newRing(64), spec: Spec{Mask: func(s string) string {
		masks++
		return strings.ReplaceAll(s, "hunter2xx", "***")
	}}}
	if got := p.StderrTail(); got != "" || masks != 0 {
		t.Fatalf("empty tail: %q after %d masks", got, masks)
	}
	p.tail.Write([]byte("token hunter2xx\n"))
	for range 3 {
		if got := p.StderrTail(); got != "token ***\n" {
			t.Fatalf("tail %q", got)
		}
	}
	if masks != 1 {
		t.Errorf("3 reads of an unchanged tail masked it %d times, want 1", masks)
	}
	p.tail.Write([]byte("again hunter2xx\n"))
	if got := p.StderrTail(); got != "token ***\nagain ***\n" || masks != 2 {
		t.Errorf("after a write: %q, %d masks", got, masks)
	}
}
