package cli

import (
	"os"
	"testing"
)

// TestDevNullIsNoTerminal: /dev/null is a character device but no
// terminal, so a run with its input from /dev/null (cron, CI) is never
// asked anything.
func TestDevNullIsNoTerminal(t *testing.T) {
	t.Parallel()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	p, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if isTerminal(p) {
		t.Error("a regular file is taken for a terminal")
	}
}
