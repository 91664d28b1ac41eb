package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
)

// fuzzSecret is the value of every set variable in the fuzz targets; it must
// never be printed unless the input itself contains it.
const fuzzSecret = "zzSECRETzz"

// fuzzLookup sets every variable to fuzzSecret, except names starting with
// "UNSET" (unset) and "EMPTY" (set to "").
func fuzzLookup(name string) (string, bool) {
	switch {
	case strings.HasPrefix(name, "UNSET"):
		return "", false
	case strings.HasPrefix(name, "EMPTY"):
		return "", true
	}
	return fuzzSecret, true
}

var fuzzSeeds = []string{
	secretSrc,
	string(defaultJSON),
	`{"mcpServers": {}}`,
	`{"mcpServers": {"a": {"command": "x", "args": ["${A}", "$${B}", "${UNSET:-d}"], "env": {"K": "${EMPTY}"}, "cwd": "${C}"}}}`,
	`{"mcpServers": {"r": {"type": "streamable-http", "url": "https://${HOST}/mcp", "headers": {"X": "${K}"}, "bearerTokenEnvVar": "T", "prefix": ""}}}`,
	`{"mcpServers": {"w": {"serverUrl": "https://h/", "disabled": true, "disabledTools": ["a*", "[b]"], "startupTimeoutMs": 5, "callTimeoutMs": 86400000}}}`,
	`{"servers": {"v": {"type": "sse", "url": "http://localhost/sse"}}, "inputs": [{"id": "k", "type": "promptString", "password": true}]}`,
	`{"mcpServers": {"gh:sub": {"command": "x", "prefix": "gh_sub"}, "GH": {"command": "y", "enabled": false}}}`,
	`{"mcpServers": {"a": {"command": "x", "url": "https://h/"}}}`,
	`{"mcpServers": {"a": {"url": "https://u:p@h/#f"}}}`,
	`{"mcpServers": {"a": {"comand": "x"}}, "servers": {}}`,
	`{"mcpServers": {"a": {"command": "${", "args": [1, null, {}]}}}`,
	`{"a": 1, "a": 2}`,
	`{"mcpServers": {}, "context": {"search": {"embeddings": {"url": "http://u:${K}@127.0.0.1:1/v1?key=${K}", "model": "m", "apiKeyEnv": "K", "minSimilarity": 0.5, "timeoutMs": 100, "strict": true}}}}`,
	`{"mcpServers": {}, "context": {"search": {"embeddings": {"url": "${UNSET}", "apiKeyEnv": "EMPTY", "minSimilarity": 1e999}}}}`,
	`{"mcpServers": {"a": {"command": "x"}}, "profiles": {"p": {"servers": ["a"], "tools": ["a:*"], "exclude": ["a:[b]"]}, "q": {}}, "clients": {"c": {"tokenEnv": "T", "profiles": ["p"]}, "d": {"token": "${cred:x}"}, "e": {"subject": "s", "claims": {"azp": "z"}}, "f": {"token": "${UNSET}"}}, "policy": {"rules": [{"deny": "a:*", "clients": ["c"], "profiles": ["p"]}]}}`,
	`{"mcpServers": {}, "clients": {"c d": {"token": "lit"}}, "profiles": {"../x": {"servers": ["nope"]}}}`,
	`{"mcpServers": {}, "gateway": {"oauth": {"issuer": "https://${H}/t", "audience": "${A:-gw}", "jwks": "/k.json", "scopes": ["mcp", "a b", ""]}}}`,
	`{"mcpServers": {}, "gateway": {"oauth": {"issuer": "http://127.0.0.1:1", "audience": "gw", "jwks": "http://x/k", "scope": 1}, "oath": {}}}`,
	`[`,
}

// FuzzParse checks that Parse never panics; that whatever it accepts passes
// Validate, is sorted, round-trips through MarshalJSON, and never prints a
// resolved value; and that its errors are *Error values that never show one.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &LoadOptions{LookupEnv: fuzzLookup}
		// Messages quote the configuration's own text, so they may show
		// the secret if the input spells it, directly or with escapes.
		mayLeak := bytes.Contains(data, []byte(fuzzSecret)) || bytes.ContainsRune(data, '\\')
		cfg, err := Parse(data, "fuzz.json", opts)
		// A project file is a configuration with servers only: what it
		// accepts, Parse accepts too, and it validates.
		if pc, perr := parseAs(data, "fuzz.json", fuzzLookup, true); perr == nil {
			if err != nil {
				t.Fatalf("accepted as a project file, refused as a configuration: %v", err)
			}
			if verr := pc.Validate(); verr != nil {
				t.Fatalf("project file accepted but fails Validate: %v", verr)
			}
		}
		if err != nil {
			if cfg != nil {
				t.Fatalf("Parse returned a config and an error: %v", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if !mayLeak && strings.Contains(err.Error(), fuzzSecret) {
				t.Fatalf("error shows a value: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that fails Validate: %v", err)
		}
		if !slices.IsSortedFunc(cfg.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("servers not sorted: %v", cfg.Names())
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		var logs bytes.Buffer
		slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "cfg", cfg, "servers", cfg.Servers)
		printed := fmt.Sprintf("%v %+v %#v %v %s", cfg, *cfg, cfg, cfg.Servers, out) + logs.String()
		if !mayLeak && strings.Contains(printed, fuzzSecret) {
			t.Fatalf("printed a value: %s", printed)
		}
		again, err := Parse(out, "round-trip", opts)
		if err != nil {
			t.Fatalf("MarshalJSON output does not parse: %v\n%s", err, out)
		}
		out2, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the config:\n%s\n%s", out, out2)
		}
	})
}

// FuzzExpand checks that expansion never panics, that a successful result
// holds no unexpanded reference (every "${" in it comes from a "$${" escape),
// that escape inverts expansion, that every reference without a default is
// reported when its variable is unset, and that errors never show values.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "plain", "${A}", "${A:-d}", "${A:-}", "$${A}", "$$${A}", "$", "$$", "a$b",
		"${", "${}", "${1X}", "${A-b}", "${input:x}", "${env:X}", "${A:-${B}}", "${A:-$}{",
		"x${A}y${UNSET:-z}$${", "${EMPTY:-dflt}", "${UNSET}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, refs, errs := expand(s, fuzzLookup)
		for _, e := range errs {
			if !strings.Contains(s, fuzzSecret) && strings.Contains(e.msg, fuzzSecret) {
				t.Fatalf("error shows a value: %s", e.msg)
			}
		}
		if errs != nil {
			if out != "" {
				t.Fatalf("expand(%q) failed but returned %q", s, out)
			}
			return
		}
		for _, r := range refs {
			if !validIdent(r) {
				t.Fatalf("expand(%q) referenced invalid name %q", s, r)
			}
		}

		// With values free of "$", every "${" left in the result is an
		// escaped one.
		plain, _, errs := expand(s, func(string) (string, bool) { return "v", true })
		if errs != nil {
			t.Fatalf("expand(%q) succeeded, then failed: %v", s, errs)
		}
		if got, want := strings.Count(plain, "${"), strings.Count(s, "$${"); got != want {
			t.Fatalf("expand(%q) = %q: %d \"${\" in the result, %d escapes in the input", s, plain, got, want)
		}

		// escape inverts expand.
		back, backRefs, errs := expand(escape(out), func(name string) (string, bool) {
			t.Fatalf("escape(%q) references %q", out, name)
			return "", false
		})
		if errs != nil || backRefs != nil || back != out {
			t.Fatalf("expand(escape(%q)) = %q, %v, %v", out, back, backRefs, errs)
		}

		// With nothing set, exactly the references without a default
		// are missing.
		segs, _ := parseTemplate(s)
		var wantMissing []string
		for _, seg := range segs {
			if seg.ref != "" && !seg.hasDef && !slices.Contains(wantMissing, seg.ref) {
				wantMissing = append(wantMissing, seg.ref)
			}
		}
		_, _, errs = expand(s, func(string) (string, bool) { return "", false })
		var gotMissing []string
		for _, e := range errs {
			if e.missing == "" {
				t.Fatalf("expand(%q) with nothing set: unexpected error %s", s, e.msg)
			}
			gotMissing = append(gotMissing, e.missing)
		}
		if !slices.Equal(wantMissing, gotMissing) {
			t.Fatalf("expand(%q) with nothing set: missing %q, want %q", s, gotMissing, wantMissing)
		}
	})
}
