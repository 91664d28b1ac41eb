//go:build unix

package launcher

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// A filter that returns nothing drops the frame: the reader goes on to the
// next one and never returns an empty read.
func TestFilterReaderDrops(t *testing.T) {
	src := io.NopCloser(strings.NewReader("keep 1\ndrop\ndrop\nkeep 2\nlast"))
	f := &filterReader{ReadCloser: src, br: bufio.NewReaderSize(src, 16), filter: func(b []byte) []byte {
		if bytes.HasPrefix(b, []byte("drop")) {
			return nil
		}
		return b
	}}
	var out []byte
	buf := make([]byte, 3)
	for {
		n, err := f.Read(buf)
		if n == 0 && err == nil {
			t.Fatal("empty read")
		}
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := string(out), "keep 1\nkeep 2\nlast"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
