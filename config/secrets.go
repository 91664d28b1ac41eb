package config

import (
	"regexp"
	"strings"
)

// What counts as a secret written into a server's configuration: import
// moves such values to creds.json, and Server.Redacted masks them. A value
// that refers to a variable or credential (${...}) is never one.

// secretKeyRE matches names whose values are credentials.
var secretKeyRE = regexp.MustCompile(`(?i)(token|key|secret|passw(or)?d|auth|credential|cookie|session|(^|_)pat$)`)

// tokenPrefixes start values that are credentials whatever their name.
var tokenPrefixes = []string{"sk-", "ghp_", "gho_", "ghu_", "ghs_", "github_pat_", "xoxb-", "xoxp-", "xapp-", "glpat-", "AKIA", "pk_live_", "sk_live_", "rk_live_", "eyJ"}

// SecretKey reports whether the value of an environment variable, header,
// flag or URL parameter called name is a credential.
func SecretKey(name string) bool { return secretKeyRE.MatchString(name) }

// LooksLikeToken reports whether v has the shape of a well-known kind of
// token (sk-…, ghp_…, xoxb-…, a JWT…), whatever it is called.
func LooksLikeToken(v string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) && len(v) >= len(p)+8 {
			return true
		}
	}
	return false
}

// SecretArg reports whether args[i] holds a literal secret: the value of
// --FLAG=VALUE or of the argument after --FLAG for a secret-named FLAG, or
// a token-shaped argument. name is what the secret is called (the flag
// without dashes; "" for a bare token), and args[i] is keep followed by
// the secret value.
func SecretArg(args []string, i int) (name, keep, value string, ok bool) {
	a := args[i]
	if strings.Contains(a, "${") {
		return "", "", "", false
	}
	flag, val, eq := strings.Cut(a, "=")
	switch {
	case eq && strings.HasPrefix(flag, "-") && SecretKey(flag) && val != "":
		return strings.TrimLeft(flag, "-"), flag + "=", val, true
	case LooksLikeToken(a):
		return "", "", a, true
	case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") &&
		SecretKey(args[i-1]) && !strings.HasPrefix(a, "-"):
		return strings.TrimLeft(args[i-1], "-"), "", a, true
	}
	return "", "", "", false
}

// redactURL masks the literal secrets of a URL as written: the user
// information's password (or a lone user name, which is then a token) and
// the values of secret-named query parameters. References are kept, and
// nothing else is re-encoded.
func redactURL(s string) string { return redactURLWith(s, redactedValue) }

// redactURLWith is redactURL with mask in place of each secret.
func redactURLWith(s, mask string) string {
	rest, frag, _ := strings.Cut(s, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if scheme, after, ok := strings.Cut(base, "://"); ok {
		end := strings.IndexAny(after, "/")
		if end < 0 {
			end = len(after)
		}
		if at := strings.LastIndexByte(after[:end], '@'); at >= 0 {
			user := after[:at]
			if u, pw, ok := strings.Cut(user, ":"); ok && pw != "" && !strings.Contains(pw, "${") {
				user = u + ":" + mask
			} else if !ok && !strings.Contains(user, "${") {
				user = mask
			}
			base = scheme + "://" + user + after[at:]
		}
	}
	if hasQuery {
		parts := strings.Split(query, "&")
		for j, p := range parts {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" && !strings.Contains(v, "${") && (SecretKey(k) || LooksLikeToken(v)) {
				parts[j] = k + "=" + mask
			}
		}
		base += "?" + strings.Join(parts, "&")
	}
	if frag != "" || strings.HasSuffix(s, "#") {
		base += "#" + frag
	}
	return base
}
