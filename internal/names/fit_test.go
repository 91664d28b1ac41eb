package names

import (
	"fmt"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/namegold"
)

// TestFitGolden holds model-facing names, which clients and stored pins
// already hold, to the names recorded in testdata/fit.golden, over the
// dev set's real servers and tools, as they are and stretched or
// spoiled so that each takes the hashed form.
func TestFitGolden(t *testing.T) {
	namegold.Check(t, "testdata/fit.golden", func(s namegold.Server) (lines []string) {
		p := Prefix(s.Name)
		long := Prefix(s.Name + "-with-a-rather-long-deployment-name")
		var entries []Entry
		for _, tool := range s.Tools {
			for _, in := range [][2]string{
				{p, tool}, {long, tool + "_and_a_longer_tail_than_fits"}, {p, tool + ".v2"},
				{"", s.Name + ":" + tool}, {s.Name + "__x", tool},
			} {
				lines = append(lines, fmt.Sprintf("ModelName(%q, %q) = %s", in[0], in[1], ModelName(in[0], in[1])))
			}
			// Two servers that derive the same prefix contest every name.
			entries = append(entries, Entry{ID: ID{s.Name, tool}, Prefix: p}, Entry{ID: ID{s.Name + "!", tool}, Prefix: p})
		}
		got, _ := Assign(entries)
		for _, e := range entries {
			lines = append(lines, fmt.Sprintf("Assign %s = %s", e.ID, got[e.ID]))
		}
		return lines
	})
}

func TestFit(t *testing.T) {
	tests := []struct {
		body        string
		max         int
		sep, suffix string
		trim        bool
		want        string
	}{
		{"short", 64, "__", "0123456789", false, "short__0123456789"},
		{"abcdefgh", 12, "_", "123", false, "abcdefgh_123"}, // exactly max
		{"abcdefghi", 12, "_", "123", false, "abcdefgh_123"},
		{"abcdefg_ij", 12, "_", "123", false, "abcdefg__123"},
		{"abcdefg_ij", 12, "_", "123", true, "abcdefg_123"}, // the cut's '_' dropped
		{"abc_", 12, "_", "123", true, "abc__123"},          // no cut, nothing dropped
		{"abc", 3, "_", "123", false, "_123"},               // no room at all
	}
	for _, tt := range tests {
		if got := Fit(tt.body, tt.max, tt.sep, tt.suffix, tt.trim); got != tt.want {
			t.Errorf("Fit(%q, %d, %q, %q, %v) = %q, want %q", tt.body, tt.max, tt.sep, tt.suffix, tt.trim, got, tt.want)
		}
	}
	if h := Hash("abc", 8); h != "ba7816bf" {
		t.Errorf("Hash(abc, 8) = %s", h)
	}
	if h := Hash("abc", 99); len(h) != 64 {
		t.Errorf("Hash(abc, 99) has %d digits", len(h))
	}
}
