package resultguard

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTextTotal: the measured size is the decoded size of every text plus
// structuredContent's JSON, whether or not anything is cut.
func TestTextTotal(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name string
		raw  string
		want int
	}{
		{"none", `{"content":[]}`, 0},
		{"text", `{"content":[{"type":"text","text":"héllo"}]}`, 6},
		{"escapes decoded", `{"content":[{"type":"text","text":"a\nb\u00e9"}]}`, 5},
		{"cut text counts whole", `{"content":[{"type":"text","text":"` + long + `"}]}`, 5000},
		{"embedded resource", `{"content":[{"type":"resource","resource":{"uri":"x:y","text":"abc"}}]}`, 3},
		{"structured", `{"content":[{"type":"text","text":"ab"}],"structuredContent":{"n":1}}`, 2 + len(`{"n":1}`)},
		{"image not text", `{"content":[{"type":"image","data":"","mimeType":"image/png"}]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var total int
			if _, _, err := Result(json.RawMessage(tt.raw), Limits{TextBytes: 1000}, Options{TextTotal: &total}); err != nil {
				t.Fatal(err)
			}
			if total != tt.want {
				t.Errorf("TextTotal = %d, want %d", total, tt.want)
			}
		})
	}
}
