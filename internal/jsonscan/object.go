package jsonscan

import "math"

// Member is one member of an object, as [Object] hands it to its caller.
type Member struct {
	// Key is the key decoded exactly as encoding/json decodes it (so
	// "\u0063ontent" is "content", and invalid UTF-8 becomes U+FFFD). When
	// the key needs no decoding, which is nearly always, it is the bytes
	// between the quotes in the document, not a copy; otherwise a fresh
	// decoded copy. Either way it must not be modified.
	Key []byte
	// KeyStart is the index of the key's opening quote: the member is
	// d[KeyStart:] up to the end of its value.
	KeyStart int
	// Value is the index of the first byte of the value, which is not
	// whitespace and is within d.
	Value int
}

// Object scans the object whose '{' is d[i] and returns the index just
// past its '}'. For each member, in document order (duplicates
// included), it calls fn, which scans the value starting at m.Value and
// returns the index just past it, or an error that Object returns as is.
// fn decides how to scan: usually with [Skip] (the value sits inside one
// more container than the object), or by walking into it.
func Object(d []byte, i int, fn func(m Member) (int, error)) (int, error) {
	if i >= len(d) || d[i] != '{' {
		return i, errAt(i, "expected an object")
	}
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		keyStart := i
		v, keyEnd, info, err := scanKey(d, i)
		if err != nil {
			return v, err
		}
		if v >= len(d) {
			return v, errAt(v, "unexpected end of JSON")
		}
		key := d[keyStart+1 : keyEnd-1]
		if !info.Plain() {
			key = AppendUnquote(make([]byte, 0, info.Len), key, math.MaxInt)
		}
		if i, err = fn(Member{Key: key, KeyStart: keyStart, Value: v}); err != nil {
			return i, err
		}
		i = SkipSpace(d, i)
		if i >= len(d) {
			return i, errAt(i, "unexpected end of JSON")
		}
		switch d[i] {
		case ',':
			i = SkipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, errAt(i, "invalid character %q after object member", d[i])
		}
	}
}

// Array scans the array whose '[' is d[i] and returns the index just past
// its ']'. For each element it calls fn with the element's index n and the
// index where it starts (not whitespace, within d); fn scans the element
// and returns the index just past it, or an error that Array returns as
// is.
func Array(d []byte, i int, fn func(n, start int) (int, error)) (int, error) {
	if i >= len(d) || d[i] != '[' {
		return i, errAt(i, "expected an array")
	}
	i = SkipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		if i >= len(d) {
			return i, errAt(i, "unexpected end of JSON")
		}
		end, err := fn(n, i)
		if err != nil {
			return end, err
		}
		i = SkipSpace(d, end)
		if i >= len(d) {
			return i, errAt(i, "unexpected end of JSON")
		}
		switch d[i] {
		case ',':
			i = SkipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, errAt(i, "invalid character %q after array element", d[i])
		}
	}
}
