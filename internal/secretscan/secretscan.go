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
// 3986) and follow the maintained rule set of gitleaks where the owners
// say less.
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
	keywords []string       // the rule runs only when one occurs in the text
	re       *regexp.Regexp // the credential is the first group, else the match
	// check, when set, decides a match: keep it or not, where it ends,
	// and whether it is verified. text is the whole text, for rules that
	// look around.
	check func(text string, start, end int) (newEnd int, keep, verified bool)
}

// boundary before a token: start of text or a byte that cannot be part
// of a token.
const pre = `(?:^|[^A-Za-z0-9_\-])`

var rules = []rule{
	{Rule{"github-token", "GitHub classic tokens: personal (ghp_), OAuth (gho_), user-to-server (ghu_), server-to-server (ghs_), refresh (ghr_); verified by their CRC32 checksum", true},
		[]string{"gh"}, regexp.MustCompile(pre + `(gh[pousr]_[A-Za-z0-9]{36})(?:[^A-Za-z0-9_]|$)`), checkGitHub},
	{Rule{"github-fine-grained-token", "GitHub fine-grained personal access tokens (github_pat_)", false},
		[]string{"github_pat_"}, regexp.MustCompile(pre + `(github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?:[^A-Za-z0-9_]|$)`), random(0)},
	{Rule{"gitlab-token", "GitLab personal, project and group access tokens (glpat-)", false},
		[]string{"glpat-"}, regexp.MustCompile(pre + `(glpat-[A-Za-z0-9_\-]{20,})`), random(6)},
	{Rule{"slack-token", "Slack bot, user, app and refresh tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xapp-)", false},
		[]string{"xox", "xapp-"}, regexp.MustCompile(pre + `((?:xox[abprs]-[0-9]{8,}-[0-9A-Za-z\-]{8,})|(?:xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]{20,}))`), random(0)},
	{Rule{"slack-webhook", "Slack incoming-webhook URLs", false},
		[]string{"hooks.slack.com"}, regexp.MustCompile(`(https://hooks\.slack\.com/(?:services|workflows)/T[A-Z0-9]+/[A-Z0-9]+/[A-Za-z0-9]{20,})`), nil},
	{Rule{"stripe-key", "Stripe live secret and restricted keys (sk_live_, rk_live_)", false},
		[]string{"k_live_"}, regexp.MustCompile(pre + `([sr]k_live_[A-Za-z0-9]{20,})`), random(8)},
	{Rule{"openai-key", "OpenAI API keys: project (sk-proj-), service account (sk-svcacct-), admin (sk-admin-) and legacy keys; verified by the T3BlbkFJ marker where the key has it", true},
		[]string{"sk-"}, regexp.MustCompile(pre + `(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48}))(?:[^A-Za-z0-9_\-]|$)`), checkOpenAI},
	{Rule{"anthropic-key", "Anthropic API and admin keys (sk-ant-api03-, sk-ant-admin01-)", false},
		[]string{"sk-ant-"}, regexp.MustCompile(pre + `(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,}AA)(?:[^A-Za-z0-9_\-]|$)`), random(0)},
	{Rule{"aws-access-key-id", "AWS access key IDs (AKIA, ASIA, ABIA, ACCA): a name, but never shown alone", false},
		[]string{"AKIA", "ASIA", "ABIA", "ACCA"}, idRE, checkAWSID},
	{Rule{"aws-secret-key", "AWS secret access keys: 40 characters named as one, or near an access key ID", false},
		[]string{"AKIA", "ASIA", "ws_secret", "WS_SECRET", "SecretAccessKey", "secretAccessKey"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`), checkAWSSecret},
	{Rule{"google-api-key", "Google API keys (AIza)", false},
		[]string{"AIza"}, regexp.MustCompile(pre + `(AIza[0-9A-Za-z_\-]{35})(?:[^A-Za-z0-9_\-]|$)`), random(0)},
	{Rule{"npm-token", "npm access tokens (npm_); verified by their CRC32 checksum", true},
		[]string{"npm_"}, regexp.MustCompile(pre + `(npm_[A-Za-z0-9]{36})(?:[^A-Za-z0-9_]|$)`), checkGitHub},
	{Rule{"pypi-token", "PyPI API tokens (pypi-); verified: the macaroon names pypi.org", true},
		[]string{"pypi-AgE"}, regexp.MustCompile(`(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})`), verified},
	{Rule{"twilio-api-key", "Twilio API key SIDs with their secrets' prefix (SK + 32 hex digits)", false},
		[]string{"SK"}, regexp.MustCompile(`(?:^|[^A-Za-z0-9])(SK[0-9a-fA-F]{32})(?:[^A-Za-z0-9]|$)`), random(8)},
	{Rule{"sendgrid-key", "SendGrid API keys (SG.)", false},
		[]string{"SG."}, regexp.MustCompile(pre + `(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)`), random(0)},
	{Rule{"huggingface-token", "Hugging Face access tokens (hf_)", false},
		[]string{"hf_"}, regexp.MustCompile(pre + `(hf_[A-Za-z]{34})(?:[^A-Za-z0-9_]|$)`), random(10)},
	{Rule{"private-key", "PEM private keys (RSA, EC, DSA, OpenSSH, PKCS #8, encrypted); verified when the whole block is there", true},
		[]string{"PRIVATE KEY"}, regexp.MustCompile(`-----BEGIN (?:[A-Z0-9 ]{0,20})PRIVATE KEY(?: BLOCK)?-----`), checkPEM},
	{Rule{"jwt", "JSON Web Tokens; verified: the header decodes to JSON naming an alg", true},
		[]string{"eyJ"}, regexp.MustCompile(pre + `(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,})`), checkJWT},
	{Rule{"url-password", "Passwords in URLs and connection strings (scheme://user:PASSWORD@host)", false},
		[]string{"://"}, regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/@"'<>]*:([^\s/@"'<>]+)@[A-Za-z0-9\[]`), checkURLPassword},
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
	for i := range rules {
		r := &rules[i]
		if !anyKeyword(text, r.keywords) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				start, end = m[2], m[3]
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
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
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

func anyKeyword(text string, kws []string) bool {
	for _, k := range kws {
		if strings.Contains(text, k) {
			return true
		}
	}
	return false
}

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
