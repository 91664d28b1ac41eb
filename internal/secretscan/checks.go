package secretscan

import (
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"regexp"
	"strings"
)

// The checks that decide a rule's matches: a checksum or decoded
// structure that verifies one, and the filters that keep placeholders
// (ghp_xxxx…, sk-your-key-here, postgres://user:password@…) out.

// distinct counts the distinct bytes of s.
func distinct(s string) int {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return n
}

// looksRandom reports whether s has at least min distinct bytes (12 when
// min is 0): a generated secret has many, a placeholder (xxxx, 0000,
// your_key_here) few.
func looksRandom(s string, min int) bool {
	if min == 0 {
		min = 12
	}
	return distinct(s) >= min
}

// random is a check that keeps a match whose bytes look random (see
// looksRandom); such a finding is shaped.
func random(min int) func(string, int, int) (int, bool, bool) {
	return func(text string, start, end int) (int, bool, bool) {
		return end, looksRandom(text[start:end], min), false
	}
}

// verified keeps every match as verified: the pattern itself is the
// structure (a prefix that decodes to the issuer's name).
func verified(_ string, _, end int) (int, bool, bool) { return end, true, true }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// checksum62 is n in base 62, six digits, as GitHub and npm write the
// CRC32 at the end of their tokens.
func checksum62(n uint32) string {
	var b [6]byte
	for i := 5; i >= 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return string(b[:])
}

// checkGitHub checks a GitHub classic or npm token: PREFIX_, 30 random
// base62 characters, and their CRC32 in six base62 digits. A token whose
// checksum fails is kept as shaped when it still looks random.
func checkGitHub(text string, start, end int) (int, bool, bool) {
	tok := text[start:end]
	body := tok[strings.IndexByte(tok, '_')+1:]
	if len(body) == 36 && checksum62(crc32.ChecksumIEEE([]byte(body[:30]))) == body[30:] {
		return end, true, true
	}
	return end, looksRandom(body, 0), false
}

// checkOpenAI verifies a key that carries the T3BlbkFJ marker (base64 of
// "OpenAI"); other shapes are kept when they look random.
func checkOpenAI(text string, start, end int) (int, bool, bool) {
	tok := text[start:end]
	if strings.Contains(tok, "T3BlbkFJ") {
		return end, true, true
	}
	return end, looksRandom(tok, 0), false
}

// checkAWSID keeps an access key ID that is not AWS's documentation
// example (…EXAMPLE).
func checkAWSID(text string, start, end int) (int, bool, bool) {
	return end, !strings.HasSuffix(text[start:end], "EXAMPLE"), false
}

// awsNear is how far before a secret key its name or key ID may be.
const awsNear = 256

// checkAWSSecret keeps 40 characters of base64 that mix letters of both
// cases and digits, look random, and follow an access key ID or a name
// for a secret access key closely.
func checkAWSSecret(text string, start, end int) (int, bool, bool) {
	s := text[start:end]
	if strings.HasSuffix(s, "EXAMPLEKEY") || !mixed(s) || !looksRandom(s, 20) {
		return end, false, false
	}
	before := text[max(0, start-awsNear):start]
	if idRE.MatchString(before) {
		return end, true, false
	}
	l := strings.ToLower(before)
	return end, strings.Contains(l, "aws_secret") || strings.Contains(l, "secretaccesskey") || strings.Contains(l, "secret_access_key"), false
}

// idRE matches an AWS access key ID.
var idRE = regexp.MustCompile(`((?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?:[^A-Za-z0-9]|$)`)

// mixed reports whether s has an upper-case letter, a lower-case letter
// and a digit.
func mixed(s string) bool {
	var u, l, d bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
			u = true
		case c >= 'a' && c <= 'z':
			l = true
		case c >= '0' && c <= '9':
			d = true
		}
	}
	return u && l && d
}

// pemMax bounds how far a PEM block's end is looked for.
const pemMax = 32 << 10

// checkPEM takes a PEM private key from its BEGIN line through its END
// line, and keeps it when the body holds at least 64 base64 characters
// (a key, not "..."): verified when the END line is there and the body is
// base64 only (headers of an encrypted key aside), shaped when the block
// is cut short. Line breaks may be real or written as \n, as in a JSON
// string.
func checkPEM(text string, start, end int) (int, bool, bool) {
	header := text[start:end]
	label := strings.TrimSuffix(strings.TrimPrefix(header, "-----BEGIN "), "-----")
	rest := text[end:min(len(text), end+pemMax)]
	footer := "-----END " + label + "-----"
	body, whole := rest, false
	if i := strings.Index(rest, footer); i >= 0 {
		body, whole = rest[:i], true
	}
	n, clean, stop := pemBody(body)
	if !whole {
		// Cut short: only the base64 right after the header counts, not
		// whatever text follows a "-----BEGIN … PRIVATE KEY-----..."
		// placeholder.
		n, _, stop = pemBody(body[:stop])
	}
	if n < 64 {
		return end, false, false
	}
	if whole {
		return end + len(body) + len(footer), true, clean
	}
	return end + stop, true, false
}

// pemBody counts the base64 characters of a PEM body, reports whether it
// holds nothing else (line breaks, \n escapes, blanks and header lines
// aside), and where the base64 run ends.
func pemBody(body string) (n int, clean bool, stop int) {
	clean = true
	for _, line := range strings.FieldsFunc(strings.ReplaceAll(body, `\n`, "\n"), func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, ": ") {
			continue
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
				n++
				continue
			}
			clean = false
		}
	}
	stop = len(body)
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("+/=\\\n\r \t", c) >= 0) {
			stop = i
			break
		}
	}
	return n, clean, stop
}

// checkJWT keeps a JWT whose header decodes to a JSON object naming its
// alg (RFC 7515 §4.1.1); such a token is verified, and anything else
// shaped like one is not a JWT.
func checkJWT(text string, start, end int) (int, bool, bool) {
	h, _, _ := strings.Cut(text[start:end], ".")
	if len(h) > 1024 {
		return end, false, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return end, false, false
	}
	var hdr struct {
		Alg *string `json:"alg"`
	}
	if json.Unmarshal(raw, &hdr) != nil || hdr.Alg == nil || *hdr.Alg == "" {
		return end, false, false
	}
	return end, true, true
}

// placeholders are passwords written in documentation and templates.
var placeholders = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true, "changeme": true,
	"guest": true, "user": true, "username": true, "mypassword": true, "yourpassword": true,
	"your-password": true, "your_password": true, "example": true, "redacted": true, "test": true,
}

// checkURLPassword keeps the password of a URL unless it is a reference
// (${VAR}, $VAR, %s, {{…}}), masked (****), bracketed (<password>) or a
// known placeholder.
func checkURLPassword(text string, start, end int) (int, bool, bool) {
	// The match starts at "://": a scheme's letter must come before it.
	k := strings.LastIndex(text[max(0, start-1024):start], "://") + max(0, start-1024)
	if k < 1 || !(text[k-1] >= 'a' && text[k-1] <= 'z' || text[k-1] >= 'A' && text[k-1] <= 'Z' || text[k-1] >= '0' && text[k-1] <= '9') {
		return end, false, false
	}
	return end, URLPasswordLiteral(text[start:end]), false
}

// URLPasswordLiteral reports whether pw, the password of a URL, is a
// literal secret rather than a reference, mask or placeholder.
func URLPasswordLiteral(pw string) bool {
	switch {
	case pw == "",
		strings.ContainsAny(pw, "${}<>"),
		strings.HasPrefix(pw, "%"),
		strings.Trim(pw, "*xX.•") == "",
		placeholders[strings.ToLower(pw)],
		strings.HasPrefix(pw, "[redacted"):
		return false
	}
	return true
}
