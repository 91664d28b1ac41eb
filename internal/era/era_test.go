package era

import "testing"

func TestEra(t *testing.T) {
	tests := []struct {
		v                     string
		modern, legacy, known bool
	}{
		{"2026-07-28", true, false, false},
		{"2027-01-01", true, false, false}, // unknown, after the boundary: the sessionless era goes on
		{"2099-12-31", true, false, false},
		{"v999.0.0", true, false, false}, // not a date: sorts after the boundary
		{"2025-11-25", false, true, true},
		{"2025-06-18", false, true, true},
		{"2025-03-26", false, true, true},
		{"2024-11-05", false, true, true},
		{"2024-01-01", false, true, false}, // unknown, before the boundary
		{"2026-07-27", false, true, false},
		{"1.0", false, true, false},
		{"", false, false, false}, // no version named
	}
	for _, tt := range tests {
		if got := Modern(tt.v); got != tt.modern {
			t.Errorf("Modern(%q) = %v, want %v", tt.v, got, tt.modern)
		}
		if got := Legacy(tt.v); got != tt.legacy {
			t.Errorf("Legacy(%q) = %v, want %v", tt.v, got, tt.legacy)
		}
		if got := KnownLegacy(tt.v); got != tt.known {
			t.Errorf("KnownLegacy(%q) = %v, want %v", tt.v, got, tt.known)
		}
	}
}

func TestLegacyVersionsAreLegacy(t *testing.T) {
	vs := LegacyVersions()
	if len(vs) != 4 || vs[0] != LatestLegacy {
		t.Fatalf("LegacyVersions() = %v, want four, %s first", vs, LatestLegacy)
	}
	for _, v := range vs {
		if !Legacy(v) || Modern(v) {
			t.Errorf("%s: Legacy %v, Modern %v", v, Legacy(v), Modern(v))
		}
	}
	vs[0] = "changed"
	if LegacyVersions()[0] != LatestLegacy {
		t.Error("LegacyVersions shares its slice with the caller")
	}
}

func TestRequested(t *testing.T) {
	tests := []struct{ meta, header, want string }{
		{"2026-07-28", "", "2026-07-28"},
		{"", "2026-07-28", "2026-07-28"},
		{"2026-07-28", "2025-11-25", "2026-07-28"}, // _meta wins
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Requested(tt.meta, tt.header); got != tt.want {
			t.Errorf("Requested(%q, %q) = %q, want %q", tt.meta, tt.header, got, tt.want)
		}
	}
}
