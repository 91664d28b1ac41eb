package confedit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzKeepLayout: written into old's layout, an edit always means exactly
// what the edit wrote; an edit that changes nothing gives old's bytes
// back; and one that sets a member and drops another keeps the rest of
// old's bytes.
func FuzzKeepLayout(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"a": 1, "b": {"c": [1, 2], "d": "x"}}`,
		"{\n    \"mcpServers\": {\n        \"fs\": {\"command\": \"npx\"},\n\n        \"gh\": {\n            \"url\": \"https://h\"\n        }\n    }\n}\n",
		"{\n\t\"a\": \"\\u003c\",\n\t\"b\": 1.50e3\n}",
		`{"a": {"a": {"a": {}}}, "b": null, "c": []}`,
		`{"dup": 1, "dup": 2}`,
		`{"k": "v",}`,
	} {
		f.Add([]byte(seed), "k", `{"x": [true, null]}`)
	}
	f.Fuzz(func(t *testing.T, old []byte, key, value string) {
		o, err := ParseObject(old)
		if err != nil || !json.Valid([]byte(value)) {
			return
		}
		same, err := o.MarshalJSON()
		if err != nil {
			return
		}
		same = append(same, '\n')
		if got := keepLayout(old, same); !meansSame(t, got, same) {
			t.Fatalf("an edit that changes nothing changed the meaning:\n%s\n->\n%s", old, got)
		} else if !bytes.Equal(got, same) && !bytes.Equal(bytes.TrimRight(got, "\n"), bytes.TrimRight(old, "\n")) {
			t.Fatalf("an edit that changes nothing rewrote the file:\n%q\n->\n%q", old, got)
		}
		if len(o.Members) > 0 {
			o.Delete(o.Members[0].Key)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(value)) != nil {
			return
		}
		o.Set(key, compact.Bytes())
		edited, err := o.MarshalJSON()
		if err != nil {
			return
		}
		edited = append(edited, '\n')
		if got := keepLayout(old, edited); !meansSame(t, got, edited) {
			t.Fatalf("the edit's meaning was lost:\n%s\n->\n%s\nwant the meaning of\n%s", old, got, edited)
		}
	})
}

// meansSame reports whether a and b decode to the same value, and that a
// is JSON encoding/json reads.
func meansSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
