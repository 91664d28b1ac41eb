package config

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// What a server writes to its stderr, and the errors it fails with, often
// echo its command line, URL or environment. Mask hides in such free text
// what [SecretKey], [SecretArg] and the URL rule (redactURL) call secret.

// Masked replaces each secret that [Mask] hides.
const Masked = "***"

// MinSecretLen is the shortest configured value [Mask] hides wherever it
// occurs: shorter values ("1", "true", "debug") are too common in text to
// be told apart from it.
const MinSecretLen = 6

// maxMaskPasses bounds Mask's passes: a pass that replaces a secret by
// Masked may join the text around it into another match.
const maxMaskPasses = 8

var (
	// textURLRE finds URLs in free text: a scheme, "://", and what
	// follows up to a space or a quote.
	textURLRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>\x60]+`)
	// bearerRE finds "Bearer TOKEN" (RFC 6750's b64token).
	bearerRE = regexp.MustCompile(`(?i)\bbearer(\s+)[A-Za-z0-9\-._~+/]+=*`)
	// authHeaderRE finds an Authorization header or field and its value up
	// to the end of the line or of a quoted string.
	authHeaderRE = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization"?\s*[:=]\s*"?)[^\r\n"]*`)
	// wordRE finds the words of text that may be token-shaped.
	wordRE = regexp.MustCompile(`[A-Za-z0-9_\-.]+`)
)

// SecretValues returns the literal secrets of s as it is launched (values
// substituted from ${env:…} and ${input:…} included), each at least
// MinSecretLen long, longest first: the values of its secret-named env
// variables, its header values (all of Authorization, and the token after
// its scheme), its secret arguments ([SecretArg]), its URL's password and
// secret query values, and its OAuth client secret, private key and assertion.
func (s *Server) SecretValues() []string {
	if s == nil {
		return nil
	}
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= MinSecretLen && v != Masked {
			out = append(out, v)
		}
	}
	for k, v := range s.Env {
		if SecretKey(k) || LooksLikeToken(v) {
			add(v)
		} else if start, end, ok := urlPassword(v); ok {
			add(v[start:end])
		}
	}
	for k, v := range s.Headers {
		if SecretKey(k) || strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Proxy-Authorization") || LooksLikeToken(v) {
			add(v)
			if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				add(tok)
			}
		}
	}
	for i := range s.Args {
		if v, ok := secretArgValue(s.Args, i); ok {
			add(v)
		}
	}
	for _, v := range urlSecrets(s.URL) {
		add(v)
	}
	if s.OAuth != nil {
		add(s.OAuth.ClientSecret)
		add(s.OAuth.PrivateKey)
		add(s.OAuth.Assertion)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return slices.Compact(out)
}

// secretArgValue is SecretArg on launched (expanded) arguments, where
// "${" is text, not a reference. It returns the secret's value.
func secretArgValue(args []string, i int) (value string, ok bool) {
	if strings.Contains(args[i], "${") {
		// SecretArg keeps references; an expanded value holding "${"
		// is still a value.
		a := slices.Clone(args)
		for j := range a {
			a[j] = strings.ReplaceAll(a[j], "${", "$_")
		}
		_, before, _, after, ok := SecretArg(a, i)
		if ok {
			value = args[i][len(before) : len(args[i])-len(after)]
		}
		return value, ok
	}
	_, _, value, _, ok = SecretArg(args, i)
	return value, ok
}

// urlSecrets returns the literal secrets of a URL by the rule of
// redactURL: its user information's password (or lone user name) and its
// secret query values.
func urlSecrets(u string) []string {
	if u == "" {
		return nil
	}
	var out []string
	rest, _, _ := strings.Cut(u, "#")
	base, query, _ := strings.Cut(rest, "?")
	if _, after, ok := strings.Cut(base, "://"); ok {
		if end := strings.IndexByte(after, '/'); end >= 0 {
			after = after[:end]
		}
		if at := strings.LastIndexByte(after, '@'); at >= 0 {
			user := after[:at]
			if _, pw, ok := strings.Cut(user, ":"); ok {
				out = append(out, pw)
			} else {
				out = append(out, user)
			}
		}
	}
	for p := range strings.SplitSeq(query, "&") {
		if k, v, ok := strings.Cut(p, "="); ok && v != "" && (SecretKey(k) || LooksLikeToken(v)) {
			out = append(out, v)
		}
	}
	return out
}

// Mask returns text with the secrets of the server's configuration
// replaced by Masked: every occurrence of each of secrets (see
// [Server.SecretValues]; shorter ones than MinSecretLen are ignored), the
// password and secret query values of every URL in text (the rule of
// [Server.Redacted]), the token of each "Bearer TOKEN", the value of each
// Authorization header, and each token-shaped word ([LooksLikeToken]).
// Mask(Mask(t)) == Mask(t), and the result holds none of secrets.
func Mask(text string, secrets []string) string {
	for range maxMaskPasses {
		next := maskOnce(text, secrets)
		if next == text {
			return text
		}
		text = next
	}
	// Still changing (a secret rebuilt by what masking another left):
	// hide every secret until none is left.
	for changed := true; changed; {
		changed = false
		for _, v := range secrets {
			if len(v) >= MinSecretLen && strings.Contains(text, v) {
				text, changed = strings.ReplaceAll(text, v, Masked), true
			}
		}
	}
	return text
}

func maskOnce(text string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= MinSecretLen {
			text = strings.ReplaceAll(text, v, Masked)
		}
	}
	text = textURLRE.ReplaceAllStringFunc(text, func(u string) string { return redactURLWith(u, Masked) })
	text = bearerRE.ReplaceAllStringFunc(text, func(m string) string {
		sp := bearerRE.FindStringSubmatch(m)[1]
		return m[:len("bearer")] + sp + Masked
	})
	text = authHeaderRE.ReplaceAllString(text, "${1}"+Masked)
	text = wordRE.ReplaceAllStringFunc(text, func(w string) string {
		tok := strings.TrimRight(w, ".") // the end of a sentence
		if LooksLikeToken(tok) {
			return Masked + w[len(tok):]
		}
		return w
	})
	return text
}
