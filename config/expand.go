package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Variable references, following the syntax Claude Code accepts in .mcp.json:
//
//	${VAR}          the value of VAR; an error if VAR is not set
//	${VAR:-default} the value of VAR, or default if VAR is unset or empty
//	                (POSIX ":-"); default is literal text, may be empty, and
//	                may contain neither "}" nor "${"
//	${cred:NAME}    the credential NAME, kept apart from the configuration
//	                (in the CLI, creds.json in Switchboard's home); NAME is
//	                [A-Za-z0-9_.-]+
//	$${             a literal "${"
//	$x              a literal "$" (any "$" not followed by "{")
//
// The text is scanned once, left to right; substituted values are never
// scanned again. VAR is an identifier: [A-Za-z_][A-Za-z0-9_]*.

// segment is a piece of a parsed template: literal text (ref == "") or a
// reference.
type segment struct {
	lit    string // literal text with escapes resolved
	ref    string // variable name
	def    string // default text
	hasDef bool
}

// refError is a problem with one reference. Its message names the variable or
// quotes the reference as written, never a value.
type refError struct {
	msg     string
	missing string // the variable, when the problem is that it is not set
}

// vscodeVars are VS Code's predefined variables, which look like ${VAR}
// references but are not environment variables.
var vscodeVars = map[string]bool{
	"workspaceFolder": true, "workspaceFolderBasename": true, "userHome": true,
	"cwd": true, "pathSeparator": true, "file": true, "fileDirname": true,
}

// parseTemplate splits s into literal and reference segments.
func parseTemplate(s string) ([]segment, *refError) {
	var segs []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c != '$':
			lit.WriteByte(c)
			i++
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, &refError{msg: `unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`}
			}
			body := s[i+2 : i+2+end]
			seg, err := parseRef(body)
			if err != nil {
				return nil, err
			}
			flush()
			segs = append(segs, seg)
			i += 2 + end + 1
		default:
			lit.WriteByte('$')
			i++
		}
	}
	flush()
	return segs, nil
}

// parseRef parses the text between "${" and "}".
func parseRef(body string) (segment, *refError) {
	name, def, hasDef := strings.Cut(body, ":-")
	shown := strconv.Quote("${" + truncate(body, 40) + "}")
	switch {
	case body == "":
		return segment{}, &refError{msg: `empty variable reference "${}"`}
	case strings.HasPrefix(body, "input:"):
		return segment{}, &refError{msg: fmt.Sprintf("%s refers to a VS Code input; VS Code inputs are not supported: reference an environment variable as ${VAR} instead", shown)}
	case strings.HasPrefix(body, credPrefix):
		if !ValidCredName(body[len(credPrefix):]) {
			return segment{}, &refError{msg: fmt.Sprintf("invalid credential reference %s: a credential name is letters, digits, '_', '.' and '-'", shown)}
		}
		return segment{ref: body}, nil
	case strings.HasPrefix(body, "env:") && validIdent(body[len("env:"):]):
		return segment{}, &refError{msg: fmt.Sprintf("%s is VS Code syntax; write ${%s}", shown, body[len("env:"):])}
	case !validIdent(name):
		msg := fmt.Sprintf("invalid variable reference %s: a name is letters, digits and '_', not starting with a digit", shown)
		if i := strings.IndexAny(name, "-=?+:"); i > 0 && validIdent(name[:i]) {
			msg += fmt.Sprintf("; for a default write ${%s:-...}", name[:i])
		}
		return segment{}, &refError{msg: msg}
	case hasDef && strings.Contains(def, "${"):
		return segment{}, &refError{msg: fmt.Sprintf("the default in ${%s:-...} contains \"${\": defaults are literal text and cannot reference variables", name)}
	}
	return segment{ref: name, def: def, hasDef: hasDef}, nil
}

// expand expands the references in s. It returns the result, the names of
// all referenced variables (in order, possibly repeated), and the problems: a
// syntax error alone, or one error per distinct missing variable.
func expand(s string, lookup func(string) (string, bool)) (string, []string, []*refError) {
	segs, err := parseTemplate(s)
	if err != nil {
		return "", nil, []*refError{err}
	}
	var b strings.Builder
	var refs []string
	var errs []*refError
	for _, seg := range segs {
		if seg.ref == "" {
			b.WriteString(seg.lit)
			continue
		}
		refs = append(refs, seg.ref)
		v, ok := lookup(seg.ref)
		switch {
		case seg.hasDef && v == "":
			v = seg.def
		case !ok:
			if !containsMissing(errs, seg.ref) {
				errs = append(errs, missingVar(seg.ref))
			}
			continue
		}
		b.WriteString(v)
	}
	if errs != nil {
		return "", refs, errs
	}
	return b.String(), refs, nil
}

func containsMissing(errs []*refError, name string) bool {
	for _, e := range errs {
		if e.missing == name {
			return true
		}
	}
	return false
}

func missingVar(name string) *refError {
	if cred, ok := strings.CutPrefix(name, credPrefix); ok {
		return &refError{msg: fmt.Sprintf("credential %q is not stored", cred), missing: name}
	}
	msg := fmt.Sprintf("environment variable %q is not set (write ${%s:-default} to make it optional)", name, name)
	if vscodeVars[name] {
		msg = fmt.Sprintf("environment variable %q is not set (${%s} is a VS Code variable; only environment variables are expanded)", name, name)
	}
	return &refError{msg: msg, missing: name}
}

// hasRef reports whether s contains at least one well-formed reference.
func hasRef(s string) bool {
	segs, err := parseTemplate(s)
	if err != nil {
		return false
	}
	for _, seg := range segs {
		if seg.ref != "" {
			return true
		}
	}
	return false
}

// escape returns a template that expands to s: every "${" becomes "$${".
func escape(s string) string {
	return strings.ReplaceAll(s, "${", "$${")
}

// credPrefix starts a credential reference: ${cred:NAME}.
const credPrefix = "cred:"

// CredRef returns the reference to the credential name, "${cred:NAME}",
// as a configuration value holds it.
func CredRef(name string) string { return "${" + credPrefix + name + "}" }

// ValidCredName reports whether name may be a credential's name in a
// ${cred:NAME} reference: one or more of A-Z a-z 0-9 _ . -.
func ValidCredName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validIdent reports whether s is an environment variable name as references
// and bearerTokenEnvVar accept: [A-Za-z_][A-Za-z0-9_]*.
func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// truncate shortens s to at most n bytes (not splitting a UTF-8 sequence),
// marking the cut with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}
