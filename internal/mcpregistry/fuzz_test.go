package mcpregistry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

// FuzzTranslate decodes any document as a registry's answer and
// translates every package and remote it has: nothing panics, and what a
// checked document translates to is safe to write into a configuration
// (no control character, no package that is not pinned).
func FuzzTranslate(f *testing.F) {
	for _, d := range registrytest.Docs(f) {
		f.Add([]byte(`{"server":` + string(d.Raw) + `}`))
	}
	f.Add([]byte(`{"server":{"name":"a/b","version":"1","packages":[{"registryType":"npm","identifier":"x","version":"1.0.0","packageArguments":[{"type":"positional","value":"{a}{a}{","variables":{"a":{"default":"{a}"}}}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e mcpregistry.Entry
		if json.Unmarshal(data, &e) != nil || e.Server.Check() != nil {
			return
		}
		s := &e.Server
		ask := func(q mcpregistry.Question) ([]string, error) {
			switch {
			case q.Default == "" && len(q.Choices) > 0:
				return q.Choices[:1], nil
			case q.Repeated:
				return []string{"v1", "v2"}, nil
			case q.Required:
				return []string{"v"}, nil
			}
			return nil, nil
		}
		var choices []mcpregistry.Choice
		for i := range s.Packages {
			choices = append(choices, mcpregistry.Choice{Package: i + 1})
		}
		for i := range s.Remotes {
			choices = append(choices, mcpregistry.Choice{Remote: i + 1})
		}
		mcpregistry.Choose(s, mcpregistry.ChooseOptions{}) //nolint:errcheck // must not panic
		for _, c := range choices {
			l, err := mcpregistry.Translate(s, c, ask)
			if err != nil {
				continue
			}
			words := []string{l.Command, l.URL}
			for _, a := range l.Args {
				words = append(words, a.Text)
			}
			for _, v := range append(l.Env, l.Headers...) {
				words = append(words, v.Name, v.Value.Text)
			}
			for _, w := range words {
				if strings.ContainsFunc(w, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					t.Fatalf("control character in %q", w)
				}
			}
			if l.Transport == "stdio" && (strings.Contains(l.What, "@latest") || strings.HasSuffix(l.What, ":latest")) {
				t.Fatalf("not pinned: %s", l.What)
			}
		}
	})
}
