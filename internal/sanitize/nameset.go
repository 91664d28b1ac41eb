package sanitize

import "hash/maphash"

// nameSet is the set of other servers' names that a Scanner looks for,
// ignoring case. A Go map would need every name lower-cased into a new
// string; here a name costs one pass over its bytes, and only one with
// upper case is lower-cased, into a buffer on the stack, to be hashed.
type nameSet struct {
	seed maphash.Seed // random per set, so crafted names cannot collide
	// keys are the names trimmed to their words: ASCII in any case, or
	// folded; equalASCIIFold compares them with folded text.
	keys   []string
	slots  []int32  // open addressing: 0 is empty, else an index into keys plus 1
	shapes shapeSet // of the keys: most words of a text fail this test and are never hashed
	minLen int      // shortest key, in bytes
	maxLen int      // longest key, in bytes
}

func (s *nameSet) len() int { return len(s.keys) }

// init sizes the set for n names, with at most half the slots in use.
func (s *nameSet) init(n int) {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	s.seed = maphash.MakeSeed()
	s.keys = make([]string, 0, n)
	s.slots = make([]int32, size)
}

// add adds name, trimmed of non-word characters at either end, and returns
// its number of words. It adds nothing and returns 0 for a name that
// CheckName rejects, that is shorter than minNameLen or has more than
// maxNameRuns words.
func (s *nameSet) add(name string) int {
	key, n, upper := nameKey(name)
	if n == 0 || n > maxNameRuns || len(key) < minNameLen {
		return 0
	}
	if s.slots == nil {
		s.init(0)
	}
	if 2*(len(s.keys)+1) > len(s.slots) {
		s.grow()
	}
	var h uint64
	if upper {
		h = s.hashLower(key)
	} else {
		h = maphash.String(s.seed, key)
	}
	i := s.find(h, key)
	if s.slots[i] != 0 {
		return n
	}
	s.keys = append(s.keys, key)
	s.slots[i] = int32(len(s.keys))
	s.shapes.set(shapeOf(key))
	if len(s.keys) == 1 || len(key) < s.minLen {
		s.minLen = len(key)
	}
	s.maxLen = max(s.maxLen, len(key))
	return n
}

// grow doubles the slots and puts the keys back.
func (s *nameSet) grow() {
	s.slots = make([]int32, 2*len(s.slots))
	for k, key := range s.keys {
		// hashLower is the hash add used: keys are ASCII or folded.
		s.slots[s.find(s.hashLower(key), key)] = int32(k + 1)
	}
}

// has reports whether the folded string low is in the set.
func (s *nameSet) has(low string) bool {
	if len(low) < s.minLen || len(low) > s.maxLen || len(s.keys) == 0 || !s.shapes.has(shapeOf(low)) {
		return false
	}
	return s.slots[s.find(maphash.String(s.seed, low), low)] != 0
}

// find returns the slot that holds key, or the empty slot where it belongs.
func (s *nameSet) find(h uint64, key string) int {
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		k := s.slots[i]
		if k == 0 || equalASCIIFold(s.keys[k-1], key) {
			return int(i)
		}
	}
}

// hashLower hashes key with ASCII lower-cased, as has hashes its folded
// argument.
func (s *nameSet) hashLower(key string) uint64 {
	var buf [64]byte
	if len(key) > len(buf) {
		return maphash.String(s.seed, fold(key))
	}
	b := buf[:len(key)]
	for i := range b {
		b[i] = lowerByte[key[i]]
	}
	return maphash.Bytes(s.seed, b)
}

// nameKey returns name trimmed to its words, the number of words, and
// whether key has ASCII upper case; "", 0 if CheckName rejects name. Names
// are nearly always printable ASCII: their key is a substring of name, not
// lower-cased, to save an allocation. Other keys are folded.
func nameKey(name string) (key string, n int, upper bool) {
	var all uint8 // the flags of all bytes
	i := 0
	for ; i+4 <= len(name); i += 4 { // four at a time: this is most of NewScanner's work
		all |= nameByte[name[i]] | nameByte[name[i+1]] | nameByte[name[i+2]] | nameByte[name[i+3]]
	}
	for ; i < len(name); i++ {
		all |= nameByte[name[i]]
	}
	switch {
	case all&nbSlow != 0:
		// Control characters or non-ASCII: a name must pass CheckName, so
		// there is nothing to strip, only to fold.
		if CheckName(name) != nil {
			return "", 0, false
		}
		key = fold(name)
		_, words := tokenize(key, true)
		if len(words) == 0 {
			return "", 0, false
		}
		return key[words[0].start:words[len(words)-1].end], len(words), false
	case all&nbSep == 0:
		return name, min(len(name), 1), all&nbUpper != 0
	}
	// Separators: trim them at the ends and count the words between.
	start, end := 0, len(name)
	for start < end && nameByte[name[start]]&nbSep != 0 {
		start++
	}
	for end > start && nameByte[name[end-1]]&nbSep != 0 {
		end--
	}
	key = name[start:end]
	if key == "" {
		return "", 0, false
	}
	n = 1
	for i := 1; i < len(key); i++ {
		if nameByte[key[i-1]]&nbSep != 0 && nameByte[key[i]]&nbSep == 0 {
			n++
		}
	}
	return key, n, all&nbUpper != 0
}

// Flags of the bytes of a name, for nameKey.
const (
	nbSep   = 1 << iota // printable ASCII that separates words
	nbUpper             // ASCII upper case
	nbSlow              // a control character or a byte of a non-ASCII rune
)

var nameByte = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c < 0x20 || c >= 0x7f:
			t[c] = nbSlow
		case byteClass[c]&cClass == cSep:
			t[c] = nbSep
		case 'A' <= c && c <= 'Z':
			t[c] = nbUpper
		}
	}
	return t
}()

// lowerByte maps ASCII upper case to lower case and every other byte to
// itself.
var lowerByte = func() (t [256]byte) {
	for c := range 256 {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] += 'a' - 'A'
		}
	}
	return t
}()

// equalASCIIFold reports whether a and b are equal ignoring ASCII case.
func equalASCIIFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerByte[a[i]] != lowerByte[b[i]] {
			return false
		}
	}
	return true
}

// shapeSet is a Bloom filter of one hash over the length and last byte
// of strings, folded. It costs a few instructions to test, and tells
// apart most names from most words.
type shapeSet [1 << 12 / 64]uint64

// shapeOf returns the bit of s in a shapeSet.
func shapeOf(s string) uint {
	return (uint(len(s))*0x9e3779b1 ^ uint(lowerByte[s[len(s)-1]])) % (1 << 12)
}

func (f *shapeSet) set(bit uint)      { f[bit/64] |= 1 << (bit % 64) }
func (f *shapeSet) has(bit uint) bool { return f[bit/64]&(1<<(bit%64)) != 0 }

// mentionFilter rules out, for one text, most names that cannot be
// mentioned in it, by looking at five bytes of each. It is a Bloom filter
// over a fingerprint of every run of up to maxNameRuns names of the text.
type mentionFilter struct {
	bits []uint64
}

// newMentionFilter returns a filter for the folded text low whose names are
// idents.
func newMentionFilter(low string, idents []span, others []string) *mentionFilter {
	maxLen := 0 // no run longer than the longest name can match
	for _, name := range others {
		maxLen = max(maxLen, len(name))
	}
	size := 64
	for size < 16*len(idents) { // for a quarter of the bits set, at most two per run
		size <<= 1
	}
	f := &mentionFilter{bits: make([]uint64, size/64)}
	for i, w := range idents {
		for _, last := range idents[i:min(len(idents), i+maxNameRuns)] {
			if n := last.end - w.start; n > maxLen {
				break
			} else if n >= minNameLen {
				f.set(fingerprint(low[w.start:last.end]))
			}
		}
	}
	return f
}

// mayMatch reports whether name may be mentioned in the text. It can rule
// out only a name whose fingerprint is that of its key: one that starts and
// ends with a word byte (nothing to trim) and whose fingerprint bytes are
// ASCII (folding changes no length, only non-ASCII bytes). An invisible
// character elsewhere may make it rule out a name wrongly, but such a name
// is ignored anyway, as CheckName rejects it.
func (f *mentionFilter) mayMatch(name string) bool {
	n := len(name)
	if n < minNameLen {
		return false
	}
	first, last := nameByte[name[0]], nameByte[name[n-1]]
	if first&^nbUpper != 0 || last&^nbUpper != 0 || (name[1]|name[n/2]|name[n-2])&0x80 != 0 {
		return true
	}
	return f.has(fingerprint(name))
}

// fingerprint hashes the length of s, at least 2 bytes long, and five of
// its bytes, ASCII-lower-cased: first, second, middle, second-last, last.
func fingerprint(s string) uint64 {
	n := len(s)
	x := uint64(n) | uint64(lowerByte[s[0]])<<16 | uint64(lowerByte[s[1]])<<24 |
		uint64(lowerByte[s[n/2]])<<32 | uint64(lowerByte[s[n-2]])<<40 | uint64(lowerByte[s[n-1]])<<48
	return x * 0x9e3779b97f4a7c15 // Fibonacci hashing: the high bits mix all of x
}

// bitsOf returns the two bits of h in f.
func (f *mentionFilter) bitsOf(h uint64) (uint64, uint64) {
	mask := uint64(len(f.bits)*64 - 1)
	return h >> 40 & mask, h >> 20 & mask
}

func (f *mentionFilter) set(h uint64) {
	a, b := f.bitsOf(h)
	f.bits[a/64] |= 1 << (a % 64)
	f.bits[b/64] |= 1 << (b % 64)
}

func (f *mentionFilter) has(h uint64) bool {
	a, b := f.bitsOf(h)
	return f.bits[a/64]&(1<<(a%64)) != 0 && f.bits[b/64]&(1<<(b%64)) != 0
}
