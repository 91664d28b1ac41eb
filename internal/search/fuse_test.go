package search

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hits(ids ...string) []Hit {
	out := make([]Hit, len(ids))
	for i, id := range ids {
		out[i] = Hit{ID: id, Score: float64(len(ids) - i)}
	}
	return out
}

func TestFuse(t *testing.T) {
	for _, tt := range []struct {
		name     string
		k        int
		rankings [][]Hit
		want     []string
	}{
		{"one ranking keeps its order", 3, [][]Hit{hits("a", "b", "c", "d")}, []string{"a", "b", "c"}},
		{"agreement beats one first place", 5, [][]Hit{hits("a", "b", "c"), hits("x", "b", "y")}, []string{"b", "a", "x", "c", "y"}},
		{"a tie of first places goes to the earlier ranking", 2, [][]Hit{hits("lex"), hits("sem")}, []string{"lex", "sem"}},
		{"second and third in both beat first in one", 3, [][]Hit{hits("a", "b", "c"), hits("d", "c", "b")}, []string{"b", "c", "a"}},
		{"a duplicate counts once, at its better rank", 3, [][]Hit{hits("a", "b", "a"), hits("b")}, []string{"b", "a"}},
		{"k <= 0 means 5", 0, [][]Hit{hits("a", "b", "c", "d", "e", "f")}, []string{"a", "b", "c", "d", "e"}},
		{"nothing", 5, nil, []string{}},
		{"an empty ranking", 5, [][]Hit{nil, hits("a")}, []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Fuse(tt.k, tt.rankings...)
			ids := []string{}
			for i, h := range got {
				ids = append(ids, h.ID)
				if i > 0 && h.Score > got[i-1].Score {
					t.Errorf("score %d (%v) above score %d (%v)", i, h.Score, i-1, got[i-1].Score)
				}
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("Fuse (-want +got):\n%s", diff)
			}
		})
	}
	got := Fuse(2, hits("a", "b"), hits("b", "a"))
	if want := 1.0/61 + 1.0/62; math.Abs(got[0].Score-want) > 1e-9 || got[0].Score != got[1].Score || got[0].ID != "a" {
		t.Errorf("Fuse of a tool ranked 1 and 2 and one ranked 2 and 1 = %v, want a then b, both 1/61 + 1/62", got)
	}
}
