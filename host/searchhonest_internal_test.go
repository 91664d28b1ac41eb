package host

import (
	"reflect"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/search"
)

// TestWithoutFill: the hits that share no word with the request (the
// index's trigram fill) are left out when some hit shares one, and an
// answer is weak when its best hit answers little of the request.
func TestWithoutFill(t *testing.T) {
	t.Parallel()
	h := func(id string, c float64) search.Hit { return search.Hit{ID: id, Coverage: c} }
	for _, tc := range []struct {
		in   []search.Hit
		ids  []string
		weak bool
	}{
		{nil, nil, true},
		{[]search.Hit{h("a", 1), h("b", 0.5), h("c", 0), h("d", 0)}, []string{"a", "b"}, false},
		{[]search.Hit{h("a", 0.2), h("c", 0)}, []string{"a"}, true},
		{[]search.Hit{h("c", 0), h("d", 0)}, []string{"c", "d"}, true},
		{[]search.Hit{h("a", weakCoverage)}, []string{"a"}, false},
	} {
		out, weak := withoutFill(tc.in)
		var ids []string
		for _, x := range out {
			ids = append(ids, x.ID)
		}
		if !reflect.DeepEqual(ids, tc.ids) || weak != tc.weak {
			t.Errorf("withoutFill(%v) = %v, %v; want %v, %v", tc.in, ids, weak, tc.ids, tc.weak)
		}
	}
}

// TestWithMember: a member added to a compact JSON object, empty or not.
func TestWithMember(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{}`:            `{"defer_loading":true}`,
		`{"name":"a"}`:  `{"name":"a","defer_loading":true}`,
		"{\"a\":1}\n":   `{"a":1,"defer_loading":true}`,
		`["not","obj"]`: `["not","obj"]`,
	} {
		if got := string(withMember([]byte(in), `"defer_loading":true`)); got != want {
			t.Errorf("withMember(%q) = %s, want %s", in, got, want)
		}
	}
}
