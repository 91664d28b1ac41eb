package host

import (
	"testing"
)

// TestArgShape: the audit log keeps the keys and JSON types of the
// arguments, sorted, each key once with its last value; never a value.
func TestArgShape(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{``, `{}`},
		{`{}`, `{}`},
		{` { } `, `{}`},
		{`{"path":"/etc/passwd","recursive":true,"depth":3}`, `{"depth":"number","path":"string","recursive":"boolean"}`},
		{`{"a":null,"b":[1],"c":{"secret":"x"}}`, `{"a":"null","b":"array","c":"object"}`},
		{`{"k":"first","k":2}`, `{"k":"number"}`},
		{`{"\u0071uote\"d":1}`, `{"quote\"d":"number"}`},
		{`[1,2]`, `(not an object)`},
		{`{"a":1} trailing`, `(not an object)`},
		{`{"a":`, `(not an object)`},
	}
	for _, tt := range tests {
		if got := argShape([]byte(tt.args)); got != tt.want {
			t.Errorf("argShape(%s) = %s, want %s", tt.args, got, tt.want)
		}
	}
}
