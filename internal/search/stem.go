package search

// This file is a light English stemmer: Porter's steps 1 to 3 and 5
// (M. F. Porter, "An algorithm for suffix stripping", 1980), plus only two
// of step 4's suffixes, -ion after s or t and -ment, so that "deletion",
// "selection" and "deployment" meet "delete", "select" and "deploy". The rest
// of step 4 (-er, -al, -ic, -able, -ive, ...) is left out on purpose: it is
// where Porter conflates words that mean different things ("general" and
// "generate"), and tool descriptions are short enough that those misses
// matter less than false matches. The same function runs over documents
// and queries, so a stem only has to be consistent, not a real word.

// stem returns the stem of a lower-case word. Words that are shorter than
// three bytes or hold anything but ASCII letters are returned unchanged.
func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	s := stemmer{b: []byte(w)}
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

type stemmer struct {
	b []byte
	j int // end of the stem being considered by the last ends call (exclusive)
}

// cons reports whether b[i] is a consonant; y is one at the start of a word
// or after a vowel.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// m measures b[:j], the number of vowel-consonant sequences in [C](VC)^m[V].
func (s *stemmer) m(j int) int {
	n, i := 0, 0
	for i < j && s.cons(i) {
		i++
	}
	for i < j {
		for i < j && !s.cons(i) {
			i++
		}
		if i >= j {
			break
		}
		n++
		for i < j && s.cons(i) {
			i++
		}
	}
	return n
}

// vowelIn reports whether b[:j] holds a vowel.
func (s *stemmer) vowelIn(j int) bool {
	for i := 0; i < j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleC reports whether b[j-2:j] is a double consonant.
func (s *stemmer) doubleC(j int) bool {
	return j >= 2 && s.b[j-1] == s.b[j-2] && s.cons(j-1)
}

// cvc reports whether b[:j] ends consonant-vowel-consonant with the last
// consonant not w, x or y ("hop" but not "snow").
func (s *stemmer) cvc(j int) bool {
	if j < 3 || !s.cons(j-1) || s.cons(j-2) || !s.cons(j-3) {
		return false
	}
	switch s.b[j-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether the word ends with suf, and sets j to where suf begins.
func (s *stemmer) ends(suf string) bool {
	if len(suf) > len(s.b) || string(s.b[len(s.b)-len(suf):]) != suf {
		return false
	}
	s.j = len(s.b) - len(suf)
	return true
}

// setTo replaces the suffix that begins at j with r.
func (s *stemmer) setTo(r string) { s.b = append(s.b[:s.j], r...) }

// replaceIf replaces the suffix found by ends with r when m(stem) > min.
func (s *stemmer) replaceIf(r string, min int) {
	if s.m(s.j) > min {
		s.setTo(r)
	}
}

func (s *stemmer) step1a() {
	switch {
	case s.ends("sses"):
		s.setTo("ss")
	case s.ends("ies"):
		s.setTo("i")
	case s.ends("ss"), s.ends("us"):
		// Not Porter: "status" and "statuses" would part otherwise.
	case s.ends("uses"):
		s.setTo("us")
	case s.ends("s"):
		s.setTo("")
	}
}

func (s *stemmer) step1b() {
	if s.ends("eed") {
		s.replaceIf("ee", 0)
		return
	}
	if !(s.ends("ed") || s.ends("ing")) || !s.vowelIn(s.j) {
		return
	}
	s.setTo("")
	switch n := len(s.b); {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.b = append(s.b, 'e')
	case s.doubleC(n):
		if c := s.b[n-1]; c != 'l' && c != 's' && c != 'z' {
			s.b = s.b[:n-1]
		}
	case s.m(n) == 1 && s.cvc(n):
		s.b = append(s.b, 'e')
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelIn(s.j) {
		s.b[len(s.b)-1] = 'i'
	}
}

// step2 maps double suffixes to single ones, keyed by the penultimate letter.
func (s *stemmer) step2() {
	if len(s.b) < 3 {
		return
	}
	var rules [][2]string
	switch s.b[len(s.b)-2] {
	case 'a':
		rules = [][2]string{{"ational", "ate"}, {"tional", "tion"}}
	case 'c':
		rules = [][2]string{{"enci", "ence"}, {"anci", "ance"}}
	case 'e':
		rules = [][2]string{{"izer", "ize"}}
	case 'l':
		rules = [][2]string{{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}}
	case 'o':
		rules = [][2]string{{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}}
	case 's':
		rules = [][2]string{{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}}
	case 't':
		rules = [][2]string{{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}}
	case 'g':
		rules = [][2]string{{"logi", "log"}}
	}
	for _, r := range rules {
		if s.ends(r[0]) {
			s.replaceIf(r[1], 0)
			return
		}
	}
}

func (s *stemmer) step3() {
	for _, r := range [...][2]string{
		{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
		{"ical", "ic"}, {"ful", ""}, {"ness", ""},
	} {
		if s.ends(r[0]) {
			s.replaceIf(r[1], 0)
			return
		}
	}
}

// step4 removes only -ment (m > 1) and -ion after s or t (m > 0; Porter
// asks for m > 1, which leaves "creation" apart from "create").
func (s *stemmer) step4() {
	switch {
	case s.ends("ment"):
		s.replaceIf("", 1)
		// Step 1c has made "deploy" "deploi" already; "deployment" must
		// meet it.
		if n := len(s.b); s.b[n-1] == 'y' && s.vowelIn(n-1) {
			s.b[n-1] = 'i'
		}
	case s.ends("ion"):
		if s.j > 0 && (s.b[s.j-1] == 's' || s.b[s.j-1] == 't') {
			s.replaceIf("", 0)
		}
	}
}

func (s *stemmer) step5() {
	if s.ends("e") {
		if a := s.m(s.j); a > 1 || a == 1 && !s.cvc(s.j) {
			s.setTo("")
		}
	}
	if n := len(s.b); n > 1 && s.b[n-1] == 'l' && s.doubleC(n) && s.m(n) > 1 {
		s.b = s.b[:n-1]
	}
}
