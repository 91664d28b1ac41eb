package config

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/names"
)

// Validate checks c's invariants: valid and unique (ignoring case) server
// names; a known transport with the fields it needs and none it must not
// have; values without NUL bytes or header-breaking control characters;
// http(s) URLs with a host and neither credentials nor a fragment; valid
// globs, timeouts in (0, MaxTimeout], a known protocol version (if pinned)
// that the transport can speak, valid and unique (ignoring case) non-empty
// prefixes. The command or URL of a server that is Unusable is not
// checked: it has none.
//
// Load and Parse return configurations that pass Validate. Validate is for
// configurations built or modified in code; it does not require Servers to
// be sorted. Its paths use the field names of the "mcpServers" shape. Like
// Parse, it returns a single *Error or an errors.Join of them.
func (c *Config) Validate() error {
	if c == nil {
		return &Error{Msg: "config is nil"}
	}
	key := c.serversKey
	if key == "" {
		key = "mcpServers"
	}
	sp := (*jsonPath)(nil).k(key)
	var errs []*Error
	truncated := false
	names := map[string]string{}
	prefixes := map[string]string{}
	for i, s := range c.Servers {
		if s == nil {
			errs = append(errs, &Error{File: c.Source, Msg: fmt.Sprintf("Servers[%d] is nil", i)})
			continue
		}
		add := func(p *jsonPath, msg string) {
			if len(errs) >= maxErrors {
				truncated = true
				return
			}
			errs = append(errs, &Error{File: c.Source, Path: p.String(), Server: s.Name, Msg: msg})
		}
		p := sp.k(s.Name)
		fold := strings.ToLower(s.Name)
		if prev, dup := names[fold]; dup {
			add(p, fmt.Sprintf("server name differs from %s only in case; names must be unique ignoring case", quote(prev)))
		} else {
			names[fold] = s.Name
		}
		validateServer(s, p, add)
		if s.Prefix != "" && validPrefix(s.Prefix) {
			fold := strings.ToLower(s.Prefix)
			if other, dup := prefixes[fold]; dup {
				add(p.k("prefix"), fmt.Sprintf("prefix %s is already used by server %s (prefixes must be unique ignoring case)", quote(s.Prefix), quote(other)))
			} else {
				prefixes[fold] = s.Name
			}
		}
	}
	c.validateContext(func(p *jsonPath, msg string) {
		errs = append(errs, &Error{File: c.Source, Path: p.String(), Msg: msg})
	})
	c.validateStore(func(p *jsonPath, msg string) {
		errs = append(errs, &Error{File: c.Source, Path: p.String(), Msg: msg})
	})
	c.validateGateway(func(p *jsonPath, msg string) {
		errs = append(errs, &Error{File: c.Source, Path: p.String(), Msg: msg})
	})
	c.validateSecurity(func(p *jsonPath, msg string) {
		if len(errs) >= maxErrors {
			truncated = true
			return
		}
		errs = append(errs, &Error{File: c.Source, Path: p.String(), Msg: msg})
	})
	if truncated {
		errs = append(errs, &Error{File: c.Source, Msg: fmt.Sprintf("too many errors; stopped after %d", maxErrors)})
	}
	return joinErrors(errs)
}

// validateServer checks one server on its own.
func validateServer(s *Server, p *jsonPath, add func(*jsonPath, string)) {
	check := func(fp *jsonPath, msg string) {
		if msg != "" {
			add(fp, msg)
		}
	}
	check(p, checkName(s.Name))
	validateTrust(s, p, add)
	onlyFor := func(field string, set bool, kind string) {
		if set {
			add(p.k(field), fmt.Sprintf("%q is only for %s servers; this server is %s", field, kind, s.Transport))
		}
	}
	// An unusable server has no resolved command or URL to check.
	usable := s.Unusable == nil
	switch s.Transport {
	case TransportStdio:
		if usable {
			check(p.k("command"), checkCommand(s.Command))
		}
		onlyFor("url", s.URL != "", "http and sse")
		onlyFor("headers", s.Headers != nil, "http and sse")
		onlyFor("bearerTokenEnvVar", s.BearerTokenEnvVar != "", "http and sse")
	case TransportHTTP, TransportSSE:
		if usable {
			check(p.k("url"), checkURL(s.URL))
		}
		onlyFor("command", s.Command != "", "stdio")
		onlyFor("args", s.Args != nil, "stdio")
		onlyFor("env", s.Env != nil, "stdio")
		onlyFor("cwd", s.Cwd != "", "stdio")
	default:
		add(p.k("type"), fmt.Sprintf(`unknown transport %s: want "stdio", "http" or "sse"`, quote(string(s.Transport))))
	}
	for i, a := range s.Args {
		check(p.k("args").i(i), checkNUL(a))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if msg := checkEnvKey(k); msg != "" {
			add(p.k("env").k(k), msg)
			continue
		}
		check(p.k("env").k(k), checkNUL(s.Env[k]))
	}
	check(p.k("cwd"), checkNUL(s.Cwd))
	seen := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		hp := p.k("headers").k(k)
		if !validHeaderName(k) {
			add(hp, fmt.Sprintf("invalid header name %s", quote(k)))
			continue
		}
		if prev, dup := seen[strings.ToLower(k)]; dup {
			add(hp, fmt.Sprintf("duplicate header: %s and %s differ only in case", quote(prev), quote(k)))
			continue
		}
		seen[strings.ToLower(k)] = k
		check(hp, checkHeaderValue(s.Headers[k]))
	}
	for i, g := range s.EnabledTools {
		check(p.k("enabledTools").i(i), checkGlob(g))
	}
	for i, g := range s.DisabledTools {
		check(p.k("disabledTools").i(i), checkGlob(g))
	}
	if s.StartupTimeout <= 0 || s.StartupTimeout > MaxTimeout {
		add(p.k("startupTimeoutMs"), timeoutRangeMsg)
	}
	if s.CallTimeout <= 0 || s.CallTimeout > MaxTimeout {
		add(p.k("callTimeoutMs"), timeoutRangeMsg)
	}
	if s.BearerTokenEnvVar != "" && !validIdent(s.BearerTokenEnvVar) {
		add(p.k("bearerTokenEnvVar"), fmt.Sprintf("invalid environment variable name %s", quote(s.BearerTokenEnvVar)))
	}
	if s.ProtocolVersion != "" {
		check(p.k("protocolVersion"), checkProtocolVersion(s.ProtocolVersion, s.Transport))
	}
	if s.Prefix != "" && !validPrefix(s.Prefix) {
		add(p.k("prefix"), fmt.Sprintf("invalid prefix %s: %s", quote(s.Prefix), prefixRule))
	}
}

// checkName returns what is wrong with a server name, or "". Names are what
// users type (`switchboard call gh:sub:tool`), so they are short, printable
// and free of whitespace; colons are allowed.
func checkName(name string) string {
	switch {
	case name == "":
		return "invalid server name: empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("invalid server name: longer than %d bytes", MaxNameLen)
	case !utf8.ValidString(name):
		return "invalid server name: not valid UTF-8"
	}
	for _, r := range name {
		if unicode.IsSpace(r) {
			return "invalid server name: contains whitespace"
		}
		if !unicode.IsPrint(r) {
			return "invalid server name: contains a control or non-printable character"
		}
	}
	return ""
}

// prefixRule states the prefix syntax. Prefixes end up in model-facing tool
// names, which model APIs restrict to [A-Za-z0-9_-] and 64 bytes; half of
// that is left for the tool name.
var prefixRule = fmt.Sprintf("a prefix is 1 to %d characters from A-Z, a-z, 0-9, '_' and '-'", MaxPrefixLen)

func validPrefix(s string) bool {
	if s == "" || len(s) > MaxPrefixLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !prefixByte(s[i]) {
			return false
		}
	}
	return true
}

func prefixByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// derivePrefix derives a prefix from a server name: each character
// outside [A-Za-z0-9_-] becomes '_', runs of '_' shrink to one, leading and
// trailing '_' go, and the result is cut to MaxPrefixLen ("gh:sub" gives
// "gh_sub"). The result never contains "__", so model-facing names keep
// their "<prefix>__<tool>" shape. A name with nothing left gives "server".
func derivePrefix(name string) string {
	var b strings.Builder
	for _, r := range name {
		c := byte('_')
		if r < utf8.RuneSelf && prefixByte(byte(r)) {
			c = byte(r)
		}
		if c == '_' && (b.Len() == 0 || strings.HasSuffix(b.String(), "_")) {
			continue
		}
		b.WriteByte(c)
	}
	s := b.String()
	if len(s) > MaxPrefixLen {
		s = s[:MaxPrefixLen]
	}
	if s = strings.TrimRight(s, "_"); s == "" {
		s = "server"
	}
	return s
}

// hashedPrefix is derivePrefix(name) cut short and followed by '_' and n
// (at most 24) hex digits of a SHA-256 over name.
// derivePrefix never gives "" nor a name starting with '_', so that a cut
// leaves at least MaxPrefixLen-25 bytes of it.
func hashedPrefix(name string, n int) string {
	return names.Fit(derivePrefix(name), MaxPrefixLen, "_", names.Hash(name, n), true)
}

// checkGlob returns what is wrong with a tool glob, or "".
func checkGlob(g string) string {
	if g == "" {
		return "empty glob"
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Sprintf("invalid glob %s: %v", quote(g), err)
	}
	return ""
}

func checkEnvKey(k string) string {
	switch {
	case k == "":
		return "empty environment variable name"
	case strings.ContainsAny(k, "=\x00"):
		return `environment variable name contains "=" or a NUL byte`
	}
	return ""
}

func checkNUL(v string) string {
	if strings.IndexByte(v, 0) >= 0 {
		return "contains a NUL byte"
	}
	return ""
}

func checkCommand(v string) string {
	if v == "" {
		return "command is empty"
	}
	return checkNUL(v)
}

// validHeaderName reports whether k is an HTTP field name (RFC 9110 token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// checkHeaderValue rejects control characters other than tab: a line break in
// a value would inject headers.
func checkHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return "header value contains control characters (such as a line break)"
		}
	}
	return ""
}

// checkURL returns what is wrong with a server URL, or "". The message never
// quotes the URL, which may carry a secret expanded from ${VAR}.
func checkURL(raw string) string {
	if raw == "" {
		return "URL is empty"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return `URL scheme must be "http" or "https"`
	case u.User != nil:
		return `URL must not contain credentials (user:password@): put them in a header that references a variable, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}, or use "bearerTokenEnvVar"`
	case u.Host == "" || u.Hostname() == "":
		return "URL has no host"
	case strings.Contains(raw, "#"):
		return "URL must not have a fragment (#...): fragments are never sent to the server"
	}
	return ""
}
