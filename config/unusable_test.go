package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnusable checks that a variable that is not set makes only the server
// that references it unusable, with a reason naming the variable and the
// field, while any other problem still fails the whole configuration.
func TestUnusable(t *testing.T) {
	env := fakeEnv{"TOKEN": "tok", "NL": "a\nb", "EMPTY": ""}
	// two puts fields in server "gh" beside a usable server "ok".
	two := func(fields string) string {
		return `{"mcpServers": {"gh": {` + fields + `}, "ok": {"command": "y"}}}`
	}
	const F = testFile + ": "
	tests := []struct {
		name     string
		src      string
		unusable string // gh's reason; "" means gh is usable
		err      string // the whole configuration's error; "" means it loads
	}{
		{name: "env", src: two(`"command": "x", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}`),
			unusable: `server "gh": ${GITHUB_TOKEN} is not set (env.GITHUB_TOKEN)`},
		{name: "command", src: two(`"command": "${BIN}/srv"`),
			unusable: `server "gh": ${BIN} is not set (command)`},
		{name: "arg", src: two(`"command": "x", "args": ["--a", "--token=${API}"]`),
			unusable: `server "gh": ${API} is not set (args[1])`},
		{name: "cwd", src: two(`"command": "x", "cwd": "${WORK}"`),
			unusable: `server "gh": ${WORK} is not set (cwd)`},
		{name: "url", src: two(`"url": "https://${HOST}/mcp"`),
			unusable: `server "gh": ${HOST} is not set (url)`},
		{name: "serverUrl", src: two(`"serverUrl": "https://${HOST}/mcp"`),
			unusable: `server "gh": ${HOST} is not set (serverUrl)`},
		{name: "header", src: two(`"url": "https://h/", "headers": {"Authorization": "Bearer ${API_KEY}"}`),
			unusable: `server "gh": ${API_KEY} is not set (headers.Authorization)`},
		{name: "odd header key", src: two(`"url": "https://h/", "headers": {"X.Key": "${API_KEY}"}`),
			unusable: `server "gh": ${API_KEY} is not set (headers["X.Key"])`},
		{name: "bearer", src: two(`"url": "https://h/", "bearerTokenEnvVar": "GH_TOKEN"`),
			unusable: `server "gh": ${GH_TOKEN} is not set (bearerTokenEnvVar)`},
		{name: "two in one value", src: two(`"command": "${A}${B}${A}"`),
			unusable: `server "gh": ${A} is not set (command); ${B} is not set (command)`},
		{name: "one in two fields", src: two(`"command": "${A}", "args": ["${B}", "${A}"], "env": {"K": "${A}"}`),
			unusable: `server "gh": ${A} is not set (command, args[1], env.K); ${B} is not set (args[0])`},
		{name: "VS Code variable", src: `{"servers": {"gh": {"command": "x", "cwd": "${workspaceFolder}"}, "ok": {"command": "y"}}}`,
			unusable: `server "gh": ${workspaceFolder} is not set (cwd): it is a VS Code variable, and only environment variables are expanded`},
		{name: "disabled", src: two(`"command": "x", "enabled": false, "env": {"T": "${T}"}`),
			unusable: `server "gh": ${T} is not set (env.T)`},
		{name: "default", src: two(`"command": "x", "env": {"T": "${T:-none}"}`)},
		{name: "set", src: two(`"command": "x", "env": {"T": "${TOKEN}"}`)},

		// Everything else is still an error of the whole configuration.
		{name: "typo beside a missing variable", src: two(`"comand": "x", "env": {"T": "${T}"}`),
			err: F + `$.mcpServers.gh.comand: unknown field "comand" (did you mean "command"?)`},
		{name: "type error beside a missing variable", src: two(`"command": "${A}", "args": [1]`),
			err: F + `$.mcpServers.gh.args[0]: want string, got number`},
		{name: "bad reference beside a missing variable", src: two(`"command": "${A}", "args": ["${"]`),
			err: F + `$.mcpServers.gh.args[0]: unterminated variable reference: "${" without a closing "}" (write "$${" for a literal "${")`},
		{name: "bad value beside a missing variable", src: two(`"url": "https://${HOST}/", "headers": {"X": "${NL}"}`),
			err: F + `$.mcpServers.gh.headers.X: after expansion, header value contains control characters (such as a line break)`},
		{name: "empty bearer", src: two(`"url": "https://h/", "bearerTokenEnvVar": "EMPTY"`),
			err: F + `$.mcpServers.gh.bearerTokenEnvVar: environment variable "EMPTY" is empty`},
		{name: "typo in another server", src: `{"mcpServers": {"gh": {"command": "${A}"}, "ok": {"comand": "y"}}}`,
			err: F + `$.mcpServers.ok.comand: unknown field "comand" (did you mean "command"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), testFile, env.opts())
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if ok := cfg.Server("ok"); ok == nil || ok.Unusable != nil || ok.Command != "y" {
				t.Errorf("server ok = %v, unusable %v; want it loaded as written", ok, ok.Unusable)
			}
			gh := cfg.Server("gh")
			if tt.unusable == "" {
				if gh.Unusable != nil {
					t.Fatalf("gh is unusable: %v", gh.Unusable)
				}
				return
			}
			if gh.Unusable == nil {
				t.Fatalf("gh is usable; want %s", tt.unusable)
			}
			if got := gh.Unusable.Error(); got != tt.unusable {
				t.Errorf("reason = %s\nwant     %s", got, tt.unusable)
			}
			if !errors.Is(gh.Unusable, ErrMissingVar) || gh.Unusable.Code != CodeMissingEnv || gh.Unusable.Server != "gh" || gh.Unusable.File != testFile {
				t.Errorf("reason %+v: want code %s, server gh, file %s, wrapping ErrMissingVar", gh.Unusable, CodeMissingEnv, testFile)
			}
			if gh.Command != "" || gh.Args != nil || gh.Env != nil || gh.Cwd != "" || gh.URL != "" || gh.Headers != nil {
				t.Errorf("an unusable server keeps resolved values: %q %q %v %q %q %v", gh.Command, gh.Args, gh.Env, gh.Cwd, gh.URL, gh.Headers)
			}
			if !strings.Contains(gh.String(), "unusable") && gh.Enabled {
				t.Errorf("String() = %s, want it to say unusable", gh)
			}
			// What Parse accepts passes Validate and round-trips.
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			out, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse(out, testFile, env.opts())
			if err != nil {
				t.Fatalf("the marshalled configuration does not parse: %v\n%s", err, out)
			}
			// MarshalJSON writes "url" for "serverUrl".
			want := strings.ReplaceAll(tt.unusable, "serverUrl", "url")
			if got := again.Server("gh").Unusable; got == nil || got.Error() != want {
				t.Errorf("after a round trip: reason = %v, want %s", got, want)
			}
		})
	}
}

// TestUnusableFields checks the structured reason.
func TestUnusableFields(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"gh": {"command": "${BIN}", "args": ["${TOKEN}"], "env": {"T": "${TOKEN}"}}}}`, nil)
	want := &UnusableError{Code: CodeMissingEnv, File: testFile, Server: "gh", Missing: []MissingVar{
		{Name: "BIN", Fields: []string{"command"}},
		{Name: "TOKEN", Fields: []string{"args[0]", "env.T"}},
	}}
	gh := cfg.Server("gh")
	if diff := cmp.Diff(want, gh.Unusable); diff != "" {
		t.Errorf("reason mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"BIN", "TOKEN"}, gh.SecretRefs); diff != "" {
		t.Errorf("SecretRefs mismatch (-want +got):\n%s", diff)
	}
	r := gh.Redacted()
	if r.Command != "${BIN}" || r.Args[0] != "${TOKEN}" || r.Env["T"] != "${TOKEN}" {
		t.Errorf("Redacted = %q %q %v, want the fields as written", r.Command, r.Args, r.Env)
	}
}

// TestUnusableFingerprint checks that an unusable server's fingerprint
// depends on no variable's value, and differs from the usable server's.
func TestUnusableFingerprint(t *testing.T) {
	const src = `{"mcpServers": {"gh": {"command": "x", "env": {"A": "${SECRET}", "B": "${MISSING}"}}}}`
	fp := func(env fakeEnv) string { return mustParse(t, src, env).Server("gh").Fingerprint() }
	one, two := fp(fakeEnv{"SECRET": "one"}), fp(fakeEnv{"SECRET": "two"})
	if one != two {
		t.Errorf("an unusable server's fingerprint changed with a secret's value: %s, %s", one, two)
	}
	if usable := fp(fakeEnv{"SECRET": "one", "MISSING": ""}); usable == one {
		t.Errorf("the usable server has the unusable one's fingerprint %s", one)
	}
}
