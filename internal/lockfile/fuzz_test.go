package lockfile

import "testing"

// FuzzRead: Read never panics, and accepts nothing without a key's
// signature.
func FuzzRead(f *testing.F) {
	_, pub, err := NewKey()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"version": 1, "servers": {}, "signature": "eyJhbGciOiJFZERTQSJ9..AAAA"}`))
	f.Add([]byte(`{"version": 1, "servers": {"a": {"launch": "x", "tools": {"t": "h"}}}, "signature": ""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if l, err := Read(data, pub); err == nil {
			t.Fatalf("Read accepted %q without the key's signature: %+v", data, l)
		}
	})
}
