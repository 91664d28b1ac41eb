package config

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/secretscan"
)

// What counts as a secret written into a server's configuration: import
// moves such values to creds.json, and Server.Redacted masks them. A value
// that refers to a variable or credential (${...}) is never one.

// secretKeyRE matches names whose values are credentials.
var secretKeyRE = regexp.MustCompile(`(?i)(token|key|secret|passw(or)?d|auth|credential|cookie|session|(^|_)pat$)`)

// SecretKey reports whether the value of an environment variable, header,
// flag or URL parameter called name is a credential.
func SecretKey(name string) bool { return secretKeyRE.MatchString(name) }

// LooksLikeToken reports whether v has the shape of a well-known kind of
// token (sk-…, ghp_…, xoxb-…, a JWT…), whatever it is called: the
// prefixes of internal/secretscan, the one classifier of credentials.
func LooksLikeToken(v string) bool { return secretscan.HasTokenPrefix(v) }

// SecretArg reports whether args[i] holds a literal secret: the value of
// --FLAG=VALUE or of the argument after --FLAG for a secret-named FLAG, a
// token-shaped argument, or the password of a connection string
// (postgresql://user:PASSWORD@host/db, alone or as --FLAG=VALUE). name is
// what the secret is called (the flag without dashes; "password" for a
// connection string's; "" for a bare token), and args[i] is before, the
// secret value, then after.
func SecretArg(args []string, i int) (name, before, value, after string, ok bool) {
	a := args[i]
	if strings.Contains(a, "${") {
		return "", "", "", "", false
	}
	flag, val, eq := strings.Cut(a, "=")
	switch {
	case eq && strings.HasPrefix(flag, "-") && SecretKey(flag) && val != "":
		return strings.TrimLeft(flag, "-"), flag + "=", val, "", true
	case LooksLikeToken(a):
		return "", "", a, "", true
	case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") &&
		SecretKey(args[i-1]) && !strings.HasPrefix(a, "-"):
		return strings.TrimLeft(args[i-1], "-"), "", a, "", true
	}
	if start, end, ok := urlPassword(a); ok {
		return "password", a[:start], a[start:end], a[end:], true
	}
	return "", "", "", "", false
}

// SecretEnv reports whether an environment variable's value holds a
// literal secret, by the rule of SecretArg: the whole value when the
// variable is secret-named or the value token-shaped, or the password of
// a connection string (DATABASE_URL=postgresql://user:PASSWORD@host/db).
// value is before, the secret, then after. A value that refers to a
// variable or credential (${...}) holds none.
func SecretEnv(key, value string) (before, secret, after string, ok bool) {
	if value == "" || strings.Contains(value, "${") {
		return "", "", "", false
	}
	if SecretKey(key) || LooksLikeToken(value) {
		return "", value, "", true
	}
	if start, end, ok := urlPassword(value); ok {
		return value[:start], value[start:end], value[end:], true
	}
	return "", "", "", false
}

// urlPassword finds the password in the user information of a URL that
// s holds (scheme://user:PASSWORD@host...), as its byte range in s.
func urlPassword(s string) (start, end int, ok bool) { return secretscan.URLPassword(s) }

// Credential names. A literal secret that import or add finds in a
// server's configuration is kept in creds.json under a name made by the
// rules below, and the configuration refers to it as ${cred:NAME}.

// CredName makes a credential name of words: upper case, [A-Z0-9_], the
// words joined by '_', not starting with a digit ("github", "api-key" →
// GITHUB_API_KEY).
func CredName(words ...string) string {
	var b strings.Builder
	for k, w := range words {
		if k > 0 {
			b.WriteByte('_')
		}
		for i := 0; i < len(w); i++ {
			c := w[i]
			switch {
			case c >= 'a' && c <= 'z':
				b.WriteByte(c - 'a' + 'A')
			case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
				b.WriteByte(c)
			default:
				b.WriteByte('_')
			}
		}
	}
	n := b.String()
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "_" + n
	}
	return n
}

// EnvCredName names the secret of environment variable key (SecretEnv):
// the variable's own name for a whole value, KEY_PASSWORD for a
// connection string's password.
func EnvCredName(key string, whole bool) string {
	if whole {
		return CredName(key)
	}
	return CredName(key, "password")
}

// ArgCredName names the secret of an argument of server (SecretArg, whose
// name is flag): SERVER_FLAG, SERVER_PASSWORD for a connection string's,
// SERVER_TOKEN for a bare token.
func ArgCredName(server, flag string) string {
	if flag == "" {
		flag = "token"
	}
	return CredName(server, flag)
}

// FreeCredName returns the name under which server's secret value is
// kept: want, unless taken (the value a name holds, stored or planned)
// gives it another value; then want prefixed with the server's name; then
// that numbered (_2, _3...). An empty value (one to ask for) takes a name
// that holds no value.
func FreeCredName(server, want, value string, taken func(name string) (string, bool)) string {
	try := []string{want}
	if p := CredName(server) + "_"; !strings.HasPrefix(want, p) {
		try = append(try, p+want)
	}
	free := func(n string) bool {
		v, ok := taken(n)
		return !ok || (v == value && value != "")
	}
	for _, n := range try {
		if free(n) {
			return n
		}
	}
	for i := 2; ; i++ {
		if n := try[len(try)-1] + "_" + strconv.Itoa(i); free(n) {
			return n
		}
	}
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
