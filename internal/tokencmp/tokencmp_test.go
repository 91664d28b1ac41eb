package tokencmp

import "testing"

func TestEqual(t *testing.T) {
	tests := []struct {
		got, want string
		ok        bool
	}{
		{"s3cret", "s3cret", true},
		{"s3cret", "s3cre", false},
		{"s3cre", "s3cret", false},
		{"", "s3cret", false},
		{"", "", false}, // an empty secret matches nothing
		{"x", "", false},
		{"S3cret", "s3cret", false},
	}
	for _, tt := range tests {
		if got := Equal(tt.got, tt.want); got != tt.ok {
			t.Errorf("Equal(%q, %q) = %v", tt.got, tt.want, got)
		}
		if tt.want != "" {
			sum := SumOf(tt.want)
			if got := sum.Matches(tt.got); got != tt.ok {
				t.Errorf("SumOf(%q).Matches(%q) = %v", tt.want, tt.got, got)
			}
		}
	}
}
