package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func rawKey() []byte {
	b := make([]byte, KeySize)
	rand.Read(b) //nolint:errcheck
	return b
}

func TestSealOpenRotate(t *testing.T) {
	oldK, newK := rawKey(), rawKey()
	old, err := Parse(base64.StdEncoding.EncodeToString(oldK))
	if err != nil {
		t.Fatal(err)
	}
	sealed := old.Seal([]byte("grant"), []byte("ann"))
	if bytes.Contains(sealed, []byte("grant")) {
		t.Fatal("the sealed value holds the plain text")
	}
	for _, tt := range []struct {
		name    string
		ring    string
		context string
		want    error
	}{
		{"same key", base64.StdEncoding.EncodeToString(oldK), "ann", nil},
		{"rotated, old kept second", base64.RawURLEncoding.EncodeToString(newK) + ", " + base64.StdEncoding.EncodeToString(oldK), "ann", nil},
		{"another context", base64.StdEncoding.EncodeToString(oldK), "bob", ErrOpen},
		{"old key dropped", base64.StdEncoding.EncodeToString(newK), "ann", ErrUnknownKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Parse(tt.ring)
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.Open(sealed, []byte(tt.context))
			if !errors.Is(err, tt.want) || (err == nil && string(got) != "grant") {
				t.Fatalf("Open = %q, %v; want %v", got, err, tt.want)
			}
		})
	}
	both, _ := New(newK, oldK)
	if both.Current(sealed) || !old.Current(sealed) || !both.Current(both.Seal(nil, nil)) {
		t.Fatal("Current does not tell the sealing key")
	}
}

func TestParseRefuses(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, s := range []string{"", " , ", "not base64!", short} {
		_, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		} else if s == short && strings.Contains(err.Error(), short) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	k, _ := New(make([]byte, KeySize))
	f.Add(k.Seal([]byte("x"), nil))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		k.Open(b, nil) //nolint:errcheck // must not panic
	})
}
