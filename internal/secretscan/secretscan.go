// Package secretscan finds credentials in text: the documented token
// formats of the big providers, PEM private keys, JWTs and the passwords
// of URLs and connection strings. It is the module's one classifier of
// what a secret looks like: config asks it about the values in a server's
// configuration, and the host about tool-call arguments and results.
//
// [Scan] returns each credential's byte range and the [Rule] that found
// it, and says whether the finding is verified (a checksum, a decoded
// structure or a whole PEM block confirms it) or only shaped (its prefix,
// alphabet and length fit). Rules derive from the formats their owners
// document (GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, AWS, Google,
// npm, PyPI, Twilio, SendGrid, Hugging Face; RFC 7468, RFC 7519, RFC
// 3986).
//
// The work is bounded: a text is scanned up to [MaxScan] bytes, every rule
// is a linear-time regular expression run only when its keyword occurs in
// the text, and a text with no keyword costs a few substring searches.
//
// It does no I/O and imports the standard library only.
package secretscan

import (
	"regexp"
	"sort"
	"strings"
)

// MaxScan is how many bytes of a text Scan reads; the rest is not scanned.
// Results are capped well below it upstream.
const MaxScan = 4 << 20

// Finding is one credential found in a text.
type Finding struct {
	Rule       string // the rule's name, e.g. "github-token"
	Start, End int    // byte range of the credential in the text
	// Verified: a checksum, a decoded structure or a whole PEM block
	// confirms the finding; otherwise only its shape does.
	Verified bool
}

// Rule describes one kind of credential, for documentation and metric
// labels.
type Rule struct {
	Name string
	What string // what it finds
	// Verifiable: findings of this rule can be verified (see
	// Finding.Verified).
	Verifiable bool
}

type rule struct {
	Rule
	keywords []string       // the rule runs only around these (see windows)
	re       *regexp.Regexp // the credential is the first group, else the match
	// check, when set, decides a match: keep it or not, where it ends,
	// and whether it is verified. text is the whole text, for rules that
	// look around.
	check func(text string, start, end int) (newEnd int, keep, verified bool)
	// back is how far before a keyword a match may start, and reach how
	// much further than usual after it a match may end (see extents).
	back, reach int
	// free: a match needs no boundary before it (a URL, a PEM block
	// after an escaped \n); the others must not continue a word.
	free bool
}

// extents are the rules whose matches start before their keyword (a
// URL's scheme, a PEM label's words, Stripe's s or r) or end far after it
// (an AWS secret key after its key ID).
var extents = map[string][2]int{
	"slack-webhook":  {len("https://"), 0},
	"stripe-key":     {1, 0},
	"private-key":    {len("-----BEGIN ") + 24, 0},
	"url-password":   {0, 0},
	"aws-secret-key": {0, awsNear},
}

func init() {
	for i := range rules {
		e := extents[rules[i].Name]
		rules[i].back, rules[i].reach = e[0], e[1]
		switch rules[i].Name {
		case "slack-webhook", "private-key", "url-password", "pypi-token":
			rules[i].free = true
		}
	}
}

var rules = []rule{
	{Rule{"github-token", "GitHub classic tokens: personal (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server (ghs_), refresh (ghr_); verified by their CRC32 checksum", true},
		[]string{"gh"}, regexp.MustCompile(`(gh[pousr]_[A-Za-z0-9]{36})(?:[^A-Za-z0-9_]|$)`), checkGitHub, 0, 0, false},
	{Rule{"github-fine-grained-token", "GitHub fine-grained personal access tokens (github_pat_)", false},
		[]string{"github_pat_"}, regexp.MustCompile(`(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?:[^A-Za-z0-9_]|$)`), random(0), 0, 0, false},
	{Rule{"gitlab-token", "GitLab personal, project and group access tokens (glpat-)", false},
		[]string{"glpat-"}, regexp.MustCompile(`(glpat-[A-Za-z0-9_\-]{20,})`), random(6), 0, 0, false},
	{Rule{"slack-token", "Slack bot, user, app and refresh tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xapp-)", false},
		[]string{"xox", "xapp-"}, regexp.MustCompile(`((?:xox[abprs]-[0-9]{8,}-[0-9A-Za-z\-]{8,})|(?:xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]{20,}))`), random(0), 0, 0, false},
	{Rule{"slack-webhook", "Slack incoming-webhook URLs", false},
		[]string{"hooks.slack.com"}, regexp.MustCompile(`(https://hooks\.slack\.com/(?:services|workflows)/T[A-Z0-9]+/[A-Z0-9]+/[A-Za-z0-9]{20,})`), nil, 0, 0, false},
	{Rule{"stripe-key", "Stripe live secret and restricted keys (sk_live_, rk_live_)", false},
		[]string{"k_live_"}, regexp.MustCompile(`([sr]k_live_[A-Za-z0-9]{20,})`), random(8), 0, 0, false},
	{Rule{"openai-key", "OpenAI API keys: project (sk-proj-), service account (sk-svcacct-), admin (sk-admin-) and legacy keys; verified by the T3BlbkFJ marker where the key has it", true},
		[]string{"sk-"}, regexp.MustCompile(`(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48}))(?:[^A-Za-z0-9_\-]|$)`), checkOpenAI, 0, 0, false},
	{Rule{"anthropic-key", "Anthropic API and admin keys (sk-ant-api03-, sk-ant-admin01-)", false},
		[]string{"sk-ant-"}, regexp.MustCompile(`(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,}AA)(?:[^A-Za-z0-9_\-]|$)`), random(0), 0, 0, false},
	{Rule{"aws-access-key-id", "AWS access key IDs (AKIA, ASIA, ABIA, ACCA), the documentation's …EXAMPLE aside", false},
		[]string{"AKIA", "ASIA", "ABIA", "ACCA"}, idRE, checkAWSID, 0, 0, false},
	{Rule{"aws-secret-key", "AWS secret access keys: 40 characters named as one, or near an access key ID", false},
		[]string{"AKIA", "ASIA", "ws_secret", "WS_SECRET", "SecretAccessKey", "secretAccessKey"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), checkAWSSecret, 0, 0, false},
	{Rule{"google-api-key", "Google API keys (AIza)", false},
		[]string{"AIza"}, regexp.MustCompile(`(AIza[0-9A-Za-z_\-]{35})(?:[^A-Za-z0-9_\-]|$)`), random(0), 0, 0, false},
	{Rule{"npm-token", "npm access tokens (npm_); verified by their CRC32 checksum", true},
		[]string{"npm_"}, regexp.MustCompile(`(npm_[A-Za-z0-9]{36})(?:[^A-Za-z0-9_]|$)`), checkGitHub, 0, 0, false},
	{Rule{"pypi-token", "PyPI API tokens (pypi-); verified: the macaroon names pypi.org", true},
		[]string{"pypi-AgE"}, regexp.MustCompile(`(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})`), verified, 0, 0, false},
	{Rule{"twilio-api-key", "Twilio API key SIDs (SK + 32 hex digits), which travel with their secret", false},
		[]string{"SK"}, regexp.MustCompile(`(SK[0-9a-fA-F]{32})(?:[^A-Za-z0-9]|$)`), random(8), 0, 0, false},
	{Rule{"sendgrid-key", "SendGrid API keys (SG.)", false},
		[]string{"SG."}, regexp.MustCompile(`(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)`), random(0), 0, 0, false},
	{Rule{"huggingface-token", "Hugging Face access tokens (hf_)", false},
		[]string{"hf_"}, regexp.MustCompile(`(hf_[A-Za-z]{34})(?:[^A-Za-z0-9_]|$)`), random(10), 0, 0, false},
	{Rule{"private-key", "PEM private keys (RSA, EC, DSA, OpenSSH, PKCS #8, encrypted); verified when the whole block is there", true},
		[]string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN (?:[A-Z0-9 ]{0,20})PRIVATE KEY(?: BLOCK)?-----`), checkPEM, 0, 0, false},
	{Rule{"jwt", "JSON Web Tokens; verified: the header decodes to JSON naming an alg", true},
		[]string{"eyJ"}, regexp.MustCompile(`(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,})`), checkJWT, 0, 0, false},
	{Rule{"url-password", "Passwords in URLs and connection strings (scheme://user:PASSWORD@host)", false},
		[]string{"://"}, regexp.MustCompile(`://[^\s:/@"'<>]*:([^\s/@"'<>]+)@[A-Za-z0-9\[]`), checkURLPassword, 0, 0, false},
}

// Rules lists the rules, in the order Scan tries them.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = r.Rule
	}
	return out
}

// Scan returns the credentials in text, in order of their start; where
// two overlap, the one found first by the rules' order is kept.
func Scan(text string) []Finding {
	if len(text) > MaxScan {
		text = text[:MaxScan]
	}
	var out []Finding
	hits := keywordHits(text)
	if hits == nil {
		return nil
	}
	for i := range rules {
		r := &rules[i]
		if len(hits[i]) == 0 {
			continue
		}
		for _, w := range windows(text, r, hits[i]) {
			for _, m := range r.re.FindAllStringSubmatchIndex(text[w.lo:w.hi], -1) {
				start, end := m[0], m[1]
				if len(m) >= 4 && m[2] >= 0 {
					start, end = m[2], m[3]
				}
				start, end = start+w.lo, end+w.lo
				if !r.free && start > 0 && tokenByte(text[start-1]) {
					continue // inside a longer word: not this token
				}
				keep, ver := true, false
				if r.check != nil {
					end, keep, ver = r.check(text, start, end)
				}
				if keep && !overlaps(out, start, end) {
					out = append(out, Finding{Rule: r.Name, Start: start, End: end, Verified: ver})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// A rule's pattern runs only over windows of the text around its
// keywords: from back bytes before a keyword to reach bytes after it,
// stretched to the next byte that no token holds (a blank, a quote), so
// that a token is never cut. Windows that touch are merged, so a text is
// read by each rule at most once, whatever it holds.

type window struct{ lo, hi int }

// reach is how far after a keyword a rule's window goes at least.
const reach = 256

func windows(text string, r *rule, hits []hit) []window {
	ws := make([]window, 0, len(hits))
	for _, h := range hits {
		lo := max(0, h.at-r.back-1)
		hi := min(len(text), h.at+h.n+r.reach+reach)
		if n := len(ws); n > 0 && ws[n-1].hi > hi {
			hi = ws[n-1].hi // stretched already
		}
		for hi < len(text) && !stopByte(text[hi]) {
			hi++
		}
		ws = append(ws, window{lo, hi})
	}
	if len(ws) < 2 {
		return ws
	}
	out := ws[:1]
	for _, w := range ws[1:] {
		if last := &out[len(out)-1]; w.lo <= last.hi {
			last.hi = max(last.hi, w.hi)
		} else {
			out = append(out, w)
		}
	}
	return out
}

// hit is where a keyword occurs: at, n bytes long.
type hit struct{ at, n int }

type keywordRef struct {
	rule int
	kw   string
}

// byFirst lists the keywords by their first byte, and pairs holds a bit
// for each keyword's first two bytes: most bytes of a text are passed over
// after one bit test.
var (
	byFirst [256][]keywordRef
	pairs   [1 << 16 / 64]uint64
)

func init() {
	for i, r := range rules {
		for _, k := range r.keywords {
			byFirst[k[0]] = append(byFirst[k[0]], keywordRef{i, k})
			p := uint16(k[0])<<8 | uint16(k[1])
			pairs[p/64] |= 1 << (p % 64)
		}
	}
}

// keywordHits finds every rule's keywords in text in one pass, in order
// of their offsets: hits[i] are rule i's; nil when there are none.
func keywordHits(text string) [][]hit {
	var hits [][]hit
	for i := 0; i+1 < len(text); i++ {
		if p := uint16(text[i])<<8 | uint16(text[i+1]); pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, ref := range byFirst[text[i]] {
			if strings.HasPrefix(text[i:], ref.kw) {
				if hits == nil {
					hits = make([][]hit, len(rules))
				}
				hits[ref.rule] = append(hits[ref.rule], hit{i, len(ref.kw)})
			}
		}
	}
	return hits
}

// tokenByte reports whether c may continue a token.
func tokenByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// stopByte reports whether c ends every token and URL.
func stopByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`':
		return true
	}
	return false
}

// Redact returns text with each finding for which redact returns true
// replaced by a marker naming its rule ("[redacted: github-token]").
// findings must be Scan's for text.
func Redact(text string, findings []Finding, redact func(Finding) bool) string {
	var b strings.Builder
	last := 0
	for _, f := range findings {
		if !redact(f) || f.Start < last {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:f.Start])
		b.WriteString(Marker(f.Rule))
		last = f.End
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// Marker is what replaces a redacted credential found by rule.
func Marker(rule string) string { return "[redacted: " + rule + "]" }

func overlaps(fs []Finding, start, end int) bool {
	for _, f := range fs {
		if start < f.End && f.Start < end {
			return true
		}
	}
	return false
}

// tokenPrefixes start values that are credentials whatever they are
// called: the prefixes of the formats above, and of Stripe's publishable
// keys, which configurations should not hold in the clear either.
var tokenPrefixes = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xapp-", "glpat-", "AKIA", "ASIA", "pk_live_", "sk_live_", "rk_live_", "eyJ", "AIza", "npm_", "pypi-", "hf_"}

// HasTokenPrefix reports whether a whole value v starts as a well-known
// kind of token (sk-…, ghp_…, xoxb-…, a JWT's eyJ…) and is longer than
// its prefix by at least 8 bytes. It judges a value by itself, as a
// configuration holds it; Scan judges text.
func HasTokenPrefix(v string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return true
		}
	}
	return false
}

// URLPassword finds the password in the user information of a URL that
// s holds (scheme://user:PASSWORD@host...), as its byte range in s.
func URLPassword(s string) (start, end int, ok bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return 0, 0, false
	}
	auth := s[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return 0, 0, false
	}
	c := strings.IndexByte(auth[:at], ':')
	if c < 0 || c+1 == at {
		return 0, 0, false
	}
	return i + 3 + c + 1, i + 3 + at, true
}
