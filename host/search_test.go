package host_test

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestSearch: tools are found by what they do, and the index follows the
// aggregate: a tool added by list_changed becomes findable.
func TestSearch(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 4)
	h := openWith(t, parse(t, map[string]any{"s": child(t, testkit.ModeServer, nil)}, nil),
		&host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, OnChange: func() { changed <- struct{}{} }})
	tests := []struct{ query, want string }{
		{"repeat my text back", "s__echo"},
		{"report progress then finish", "s__slow"},
		{"ask the user for their name", "s__ask"},
		{"crash the server", "s__crash"},
	}
	for _, tt := range tests {
		got := h.SearchWords(tt.query, 3)
		if len(got) == 0 || got[0].Name != tt.want {
			t.Errorf("Search(%q) = %v, want %s first", tt.query, names(got), tt.want)
		}
	}
	if got := h.SearchWords("xyzzy plugh", 3); len(got) != 0 {
		t.Errorf("nonsense query found %v", names(got))
	}
	call(t, h, "s__grow", `{}`)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no change event")
	}
	if got := h.SearchWords("grown", 3); len(got) == 0 || got[0].Name != "s__grown" {
		t.Errorf("the added tool is not found: %v", names(got))
	}
}

func names(ts []host.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
