//go:build unix

package launcher

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// pattern is an endless reader repeating a line of n bytes ('a'... then
// '\n' when newline is set); it allocates nothing however much is read.
type pattern struct {
	n       int
	newline bool
	pos     int
}

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		if p.newline && p.pos == p.n-1 {
			b[i] = '\n'
		} else {
			b[i] = 'a'
		}
		p.pos = (p.pos + 1) % p.n
	}
	return len(b), nil
}

var errTest = errors.New("test: frame too large")

func TestFrameGuardStopsAtCap(t *testing.T) {
	faults := 0
	g := &frameGuard{r: &pattern{n: 1 << 30}, max: 1 << 20, fault: func() error { faults++; return errTest }}
	n, err := io.Copy(io.Discard, g)
	if !errors.Is(err, errTest) {
		t.Fatalf("Copy error = %v, want the fault", err)
	}
	if n != 1<<20 {
		t.Errorf("passed %d bytes, want exactly the cap %d", n, 1<<20)
	}
	if _, err := g.Read(make([]byte, 10)); !errors.Is(err, errTest) || faults != 1 {
		t.Errorf("Read after fault = %v (faults %d), want the same sticky error, one fault", err, faults)
	}
}

func TestFrameGuardAllowsLinesUpToCap(t *testing.T) {
	// Lines of exactly max bytes plus the newline, for 16 MiB.
	const max = 1000
	g := &frameGuard{r: &pattern{n: max + 1, newline: true}, max: max, fault: func() error { return errTest }}
	if n, err := io.Copy(io.Discard, io.LimitReader(g, 16<<20)); err != nil || n != 16<<20 {
		t.Fatalf("Copy = %d, %v; want 16 MiB without error", n, err)
	}
	// One more byte per line is too many.
	g = &frameGuard{r: &pattern{n: max + 2, newline: true}, max: max, fault: func() error { return errTest }}
	if _, err := io.Copy(io.Discard, g); !errors.Is(err, errTest) {
		t.Fatalf("Copy error = %v, want the fault", err)
	}
}

func TestFrameGuardPassesData(t *testing.T) {
	in := strings.Repeat("{\"a\":1}\n", 1000)
	g := &frameGuard{r: strings.NewReader(in), max: 10, fault: func() error { return errTest }}
	got, err := io.ReadAll(g)
	if err != nil || string(got) != in {
		t.Fatalf("ReadAll = %d bytes, %v; want the input unchanged", len(got), err)
	}
}
