package server

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate is a parsed resource URI template. Two RFC 6570 forms are
// supported: {var} (simple string expansion) matches one non-empty path
// segment, never spanning "/", and is percent-decoded; {+var} (reserved
// expansion) is greedy, matches "/" too, and is passed as it is. Any other
// operator ({?q}, {#f}, {/p*}, {.x}, {;p}, {&q}), a list of variables or a
// modifier is an error when the template is parsed, rather than a pattern
// that silently never matches.
type uriTemplate struct {
	raw     string
	re      *regexp.Regexp
	vars    []string // in order
	greedy  []bool   // greedy[i]: vars[i] is {+var}
	literal int      // total length of literal text, for specificity
}

// parseTemplate parses a URI template; see uriTemplate.
func parseTemplate(raw string) (*uriTemplate, error) {
	t := &uriTemplate{raw: raw}
	var re strings.Builder
	re.WriteString("^")
	seen := map[string]bool{}
	rest := raw
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			re.WriteString(regexp.QuoteMeta(rest))
			t.literal += len(rest)
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("uri template %q: unmatched '}'", raw)
		}
		re.WriteString(regexp.QuoteMeta(rest[:open]))
		t.literal += open
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", raw)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		greedy := false
		if strings.HasPrefix(expr, "+") {
			greedy = true
			expr = expr[1:]
		}
		if expr == "" {
			return nil, fmt.Errorf("uri template %q: empty expression", raw)
		}
		if strings.ContainsAny(expr[:1], "#./;?&=,!@|") {
			return nil, fmt.Errorf("uri template %q: operator %q is not supported (only {var} and {+var})", raw, expr[:1])
		}
		if strings.Contains(expr, ",") {
			return nil, fmt.Errorf("uri template %q: {%s}: one variable per expression", raw, expr)
		}
		if strings.ContainsAny(expr, "*:") {
			return nil, fmt.Errorf("uri template %q: {%s}: modifiers are not supported", raw, expr)
		}
		for _, r := range expr {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
				return nil, fmt.Errorf("uri template %q: bad variable name %q", raw, expr)
			}
		}
		if seen[expr] {
			return nil, fmt.Errorf("uri template %q: variable %q appears twice", raw, expr)
		}
		seen[expr] = true
		t.vars = append(t.vars, expr)
		t.greedy = append(t.greedy, greedy)
		if greedy {
			re.WriteString("(.+)")
		} else {
			re.WriteString("([^/]+)")
		}
	}
	re.WriteString("$")
	if len(t.vars) == 0 {
		return nil, fmt.Errorf("uri template %q has no variables: use a fixed resource", raw)
	}
	var err error
	t.re, err = regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %v", raw, err)
	}
	return t, nil
}

// match returns the variables of uri if it matches t.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v := m[i+1]
		if !t.greedy[i] {
			d, err := url.PathUnescape(v)
			if err != nil {
				return nil, false
			}
			v = d
		}
		vars[name] = v
	}
	return vars, true
}

// greedyCount is the number of {+var} in t.
func (t *uriTemplate) greedyCount() int {
	n := 0
	for _, g := range t.greedy {
		if g {
			n++
		}
	}
	return n
}

// moreSpecific reports whether a should be tried before b: fewer greedy
// variables first, then more literal text.
func moreSpecific(a, b *uriTemplate) bool {
	if ga, gb := a.greedyCount(), b.greedyCount(); ga != gb {
		return ga < gb
	}
	return a.literal > b.literal
}
