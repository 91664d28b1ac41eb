// Package bytesize is the one rule for sizes in bytes: how one is written
// for people and models ([Format]), and the one capped read ([ReadAll],
// [ReadFile]), whose error names the cap. It imports nothing from
// Switchboard.
package bytesize

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Format writes n bytes exactly: "16 MiB" or "64 KiB" for a whole number
// of them, else "1500 bytes". Exact, because a cap named in an error must
// be the cap that was set.
func Format(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// ErrTooLarge is what a *TooLargeError is.
var ErrTooLarge = errors.New("too large")

// TooLargeError is input that held more than Limit bytes.
type TooLargeError struct {
	Limit int64
}

func (e *TooLargeError) Error() string { return "larger than " + Format(e.Limit) }

// Is makes errors.Is(err, ErrTooLarge) hold.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ReadAll reads r to its end, but at most limit bytes: input of exactly
// limit bytes is read whole, one byte more is a *TooLargeError (with the
// first limit bytes, for a caller that shows the start).
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return b[:limit], &TooLargeError{Limit: limit}
	}
	return b, nil
}

// ReadFile is [ReadAll] of the file at path. Errors do not repeat the
// path: the caller names the file as it names it elsewhere.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit)
}
