package policy

import "testing"

func TestEffective(t *testing.T) {
	yes, no := true, false
	hints := []struct {
		name string
		v    *bool
	}{{"absent", nil}, {"false", &no}, {"true", &yes}}

	// want[readOnly][destructive] for a trusted server, indexed like hints.
	type pair struct{ readOnly, destructive bool }
	trusted := [3][3]pair{
		// destructive: absent          false          true
		{{false, true}, {false, false}, {false, true}}, // readOnly absent
		{{false, true}, {false, false}, {false, true}}, // readOnly false
		{{true, false}, {true, false}, {true, false}},  // readOnly true wins
	}
	for _, trust := range []Trust{Trusted, Untrusted, Sandboxed, "", "bogus"} {
		for i, ro := range hints {
			for j, de := range hints {
				for _, other := range hints { // idempotent and openWorld never matter
					a := &Annotations{ReadOnly: ro.v, Destructive: de.v, Idempotent: other.v, OpenWorld: other.v}
					want := pair{false, true} // not trusted: nothing relaxes
					if trust == Trusted {
						want = trusted[i][j]
					}
					gotRO, gotD := Effective(a, trust)
					if (pair{gotRO, gotD}) != want {
						t.Errorf("Effective(readOnly %s, destructive %s, trust %q) = %v, %v; want %v, %v",
							ro.name, de.name, trust, gotRO, gotD, want.readOnly, want.destructive)
					}
				}
			}
		}
		// No annotations at all: the MCP defaults, for every trust.
		if ro, d := Effective(nil, trust); ro || !d {
			t.Errorf("Effective(nil, %q) = %v, %v; want false, true", trust, ro, d)
		}
	}
}
