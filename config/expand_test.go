package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpand(t *testing.T) {
	env := fakeEnv{"A": "1", "B": "two", "EMPTY": "", "REF": "${B}", "DOLLAR": "$"}
	tests := []struct {
		in       string
		want     string
		wantRefs []string
		wantErr  string
	}{
		{in: "", want: ""},
		{in: "plain text", want: "plain text"},
		{in: "${A}", want: "1", wantRefs: []string{"A"}},
		{in: "x${A}y${B}z", want: "x1ytwoz", wantRefs: []string{"A", "B"}},
		{in: "${A}${A}", want: "11", wantRefs: []string{"A", "A"}},
		{in: "ü${B}ü", want: "ütwoü", wantRefs: []string{"B"}},
		{in: "${EMPTY}", want: "", wantRefs: []string{"EMPTY"}},
		{in: "${_under_9}", wantErr: `environment variable "_under_9" is not set (write ${_under_9:-default} to make it optional)`, wantRefs: []string{"_under_9"}},

		// Defaults: used when unset or empty (POSIX ":-"), literal text.
		{in: "${UNSET:-dflt}", want: "dflt", wantRefs: []string{"UNSET"}},
		{in: "${EMPTY:-dflt}", want: "dflt", wantRefs: []string{"EMPTY"}},
		{in: "${A:-dflt}", want: "1", wantRefs: []string{"A"}},
		{in: "${UNSET:-}", want: "", wantRefs: []string{"UNSET"}},
		{in: "${UNSET:-a:-b}", want: "a:-b", wantRefs: []string{"UNSET"}},
		{in: "${UNSET:-$5 {x}", want: "$5 {x", wantRefs: []string{"UNSET"}},
		{in: "${UNSET:-https://h:8080/p?q=1}", want: "https://h:8080/p?q=1", wantRefs: []string{"UNSET"}},

		// Values are never rescanned.
		{in: "${REF}", want: "${B}", wantRefs: []string{"REF"}},
		{in: "${DOLLAR}{B}", want: "${B}", wantRefs: []string{"DOLLAR"}},

		// "$" not followed by "{" is literal; "$${" is a literal "${".
		{in: "$", want: "$"},
		{in: "a$", want: "a$"},
		{in: "$A", want: "$A"},
		{in: "$$", want: "$$"},
		{in: "100$ and ${A}", want: "100$ and 1", wantRefs: []string{"A"}},
		{in: "$${A}", want: "${A}"},
		{in: "$${", want: "${"},
		{in: "$${}", want: "${}"},
		{in: "$$${A}", want: "$${A}"},
		{in: "$${A}${A}", want: "${A}1", wantRefs: []string{"A"}},
		{in: "a}b{c", want: "a}b{c"},

		// Malformed references.
		{in: "${", wantErr: `unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`},
		{in: "x${A", wantErr: `unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`},
		{in: "${A}${", wantErr: `unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`},
		{in: "${}", wantErr: `empty variable reference "${}"`},
		{in: "${1X}", wantErr: `invalid variable reference "${1X}": a name is letters, digits and '_', not starting with a digit`},
		{in: "${A B}", wantErr: `invalid variable reference "${A B}": a name is letters, digits and '_', not starting with a digit`},
		{in: "${:-x}", wantErr: `invalid variable reference "${:-x}": a name is letters, digits and '_', not starting with a digit`},
		{in: "${A-x}", wantErr: `invalid variable reference "${A-x}": a name is letters, digits and '_', not starting with a digit; for a default write ${A:-...}`},
		{in: "${A:x}", wantErr: `invalid variable reference "${A:x}": a name is letters, digits and '_', not starting with a digit; for a default write ${A:-...}`},
		{in: "${A:=x}", wantErr: `invalid variable reference "${A:=x}": a name is letters, digits and '_', not starting with a digit; for a default write ${A:-...}`},
		{in: "${A:-${B}}", wantErr: `the default in ${A:-...} contains "${": defaults are literal text and cannot reference variables`},
		{in: "${input:key}", wantErr: `"${input:key}" refers to a VS Code input; VS Code inputs are not supported: reference an environment variable as ${VAR} instead`},
		{in: "${env:HOME}", wantErr: `"${env:HOME}" is VS Code syntax; write ${HOME}`},
		{in: "${\n}", wantErr: `invalid variable reference "${\n}": a name is letters, digits and '_', not starting with a digit`},
		{in: "${" + strings.Repeat("x-", 30) + "}", wantErr: `invalid variable reference "${x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-...}": a name is letters, digits and '_', not starting with a digit; for a default write ${x:-...}`},
	}
	for _, tt := range tests {
		got, refs, errs := expand(tt.in, env.lookup)
		var gotErr []string
		for _, e := range errs {
			gotErr = append(gotErr, e.msg)
		}
		if diff := cmp.Diff(tt.wantErr, strings.Join(gotErr, "\n")); diff != "" {
			t.Errorf("expand(%q) error mismatch (-want +got):\n%s", tt.in, diff)
			continue
		}
		if got != tt.want {
			t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if diff := cmp.Diff(tt.wantRefs, refs); diff != "" {
			t.Errorf("expand(%q) refs mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestExpandMissing(t *testing.T) {
	_, _, errs := expand("${A}-${B:-b}-${C}-${A}", fakeEnv{}.lookup)
	var missing []string
	for _, e := range errs {
		missing = append(missing, e.missing)
	}
	if diff := cmp.Diff([]string{"A", "C"}, missing); diff != "" {
		t.Errorf("missing mismatch (-want +got):\n%s", diff)
	}
}

func TestEscape(t *testing.T) {
	for _, s := range []string{"", "plain", "${A}", "$${", "$$${", "${${", "a$", "$", "${}", "x${y:-z}"} {
		tmpl := escape(s)
		got, refs, errs := expand(tmpl, func(name string) (string, bool) {
			t.Errorf("escape(%q) = %q references %q", s, tmpl, name)
			return "", false
		})
		if errs != nil || got != s || refs != nil {
			t.Errorf("expand(escape(%q)) = %q, %v, %v; want %q", s, got, refs, errs, s)
		}
		if hasRef(tmpl) {
			t.Errorf("hasRef(escape(%q)) = true", s)
		}
	}
}

func TestHasRef(t *testing.T) {
	for s, want := range map[string]bool{
		"":            false,
		"literal":     false,
		"${A}":        true,
		"x${A:-y}":    true,
		"$${A}":       false,
		"${":          false,
		"${1}":        false,
		"$A":          false,
		"Bearer ${T}": true,
	} {
		if got := hasRef(s); got != want {
			t.Errorf("hasRef(%q) = %t, want %t", s, got, want)
		}
	}
}
