package bytesize

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 1000: "1000 bytes", 1536: "1536 bytes",
		64 << 10: "64 KiB", 1 << 20: "1 MiB", 16 << 20: "16 MiB", (1 << 20) + 1: "1048577 bytes", 3 << 30: "3072 MiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReadAll(t *testing.T) {
	tests := []struct {
		in      string
		limit   int64
		want    string
		wantErr string
	}{
		{"", 4, "", ""},
		{"abc", 4, "abc", ""},
		{"abcd", 4, "abcd", ""},                     // exactly the limit
		{"abcde", 4, "abcd", "larger than 4 bytes"}, // one byte more
		{strings.Repeat("x", 2049), 2048, strings.Repeat("x", 2048), "larger than 2 KiB"},
		{"a", 0, "", "larger than 0 bytes"},
	}
	for _, tt := range tests {
		got, err := ReadAll(strings.NewReader(tt.in), tt.limit)
		if string(got) != tt.want {
			t.Errorf("ReadAll(%d bytes, %d) read %d bytes, want %d", len(tt.in), tt.limit, len(got), len(tt.want))
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ReadAll(%d bytes, %d): %v", len(tt.in), tt.limit, err)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrTooLarge)):
			t.Errorf("ReadAll(%d bytes, %d): %v, want %q", len(tt.in), tt.limit, err, tt.wantErr)
		}
	}
}

func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadFile at the limit: %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(p, 4); !errors.As(err, &tl) || tl.Limit != 4 {
		t.Errorf("ReadFile past the limit: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing"), 4); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v", err)
	}
}
