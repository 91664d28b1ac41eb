package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretEnv holds values that must never be printed; each contains "SECRET".
var secretEnv = fakeEnv{
	"BIN":   "/opt/SECRET-bin/srv",
	"KEY":   "key-SECRET-1",
	"DIR":   "/SECRET/dir",
	"TOKEN": "tok-SECRET-2",
	"HOST":  "SECRET.example.com",
}

// secretSrc references every variable of secretEnv, and inlines two literal
// secrets, which Redacted hides too.
const secretSrc = `{
  "mcpServers": {
    "local": {
      "command": "${BIN}",
      "args": ["--key=${KEY}", "--verbose", "$${NOT_A_REF}"],
      "env": {"API_KEY": "${KEY}", "INLINE": "inline-SECRET-3", "EMPTY": "", "OPT": "${UNSET:-fallback}"},
      "cwd": "${DIR}"
    },
    "remote": {
      "type": "sse",
      "url": "https://${HOST}/sse?key=${KEY}",
      "headers": {"X-Key": "${KEY}", "X-Inline": "inline-SECRET-4"},
      "bearerTokenEnvVar": "TOKEN",
      "enabledTools": [],
      "prefix": ""
    }
  }
}`

// TestSecretsNeverPrinted prints the configuration every way a program might
// and checks that no value appears.
func TestSecretsNeverPrinted(t *testing.T) {
	cfg := mustParse(t, secretSrc, secretEnv)
	// The values are there...
	if got := cfg.Server("remote").Headers["Authorization"]; got != "Bearer tok-SECRET-2" {
		t.Fatalf("Authorization = %q", got)
	}
	// ... but never printed.
	var out []string
	for _, v := range []any{cfg, *cfg, cfg.Servers, cfg.Servers[0], *cfg.Servers[1], cfg.Redacted(), cfg.Servers[0].Redacted()} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%T): %v", v, err)
		}
		out = append(out, string(b))
	}
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		slog.New(h).Info("loaded", "config", cfg, "server", cfg.Servers[0], "value", *cfg.Servers[1])
	}
	out = append(out, logs.String())
	for _, s := range out {
		if strings.Contains(s, "SECRET") {
			t.Errorf("printed a secret: %s", s)
		}
	}
}

func TestStringFormats(t *testing.T) {
	cfg := mustParse(t, secretSrc, secretEnv)
	tests := []struct{ got, want string }{
		{cfg.String(), `config "` + testFile + `": 2 servers: "local", "remote"`},
		{cfg.Servers[0].String(), `server "local": stdio, enabled, prefix "local"`},
		{fmt.Sprint(cfg.Servers[1]), `server "remote": sse, enabled, prefix ""`},
		{fmt.Sprintf("%#v", cfg.Servers[1]), `config.Server{Name: "remote", Transport: "sse", Enabled: true, Prefix: "" /* values redacted */}`},
		{fmt.Sprintf("%#v", cfg), `config.Config{Source: "` + testFile + `", Servers: ["local" "remote"] /* values redacted */}`},
		{Default("").String(), `config "embedded default": 1 server: "demo"`},
		{Config{}.String(), `config "": 0 servers`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
}

// TestErrorsHideValues checks that problems found in resolved values are
// reported without the values.
func TestErrorsHideValues(t *testing.T) {
	env := fakeEnv{
		"USERINFO": "user:pw-SECRET@h",
		"SCHEME":   "SECRET",
		"FRAG":     "#SECRET",
		"BADURL":   "https://h:SECRET/",
		"NL":       "SECRET\r\nX-Evil: 1",
		"NUL":      "SECRET\x00",
	}
	for _, src := range []string{
		srv(`"url": "https://${USERINFO}/"`),
		srv(`"url": "${SCHEME}://h/"`),
		srv(`"url": "https://h/${FRAG}"`),
		srv(`"url": "${BADURL}"`),
		srv(`"url": "https://h/", "headers": {"X": "${NL}"}`),
		srv(`"url": "https://h/", "bearerTokenEnvVar": "NL"`),
		srv(`"command": "${NUL}"`),
		srv(`"command": "x", "args": ["${NUL}"]`),
		srv(`"command": "x", "env": {"K": "${NUL}"}`),
	} {
		got := parseErr(t, src, env)
		if got == "" {
			t.Errorf("%s: no error", src)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("error shows a secret: %s", got)
		}
	}
}

func TestRedacted(t *testing.T) {
	cfg := mustParse(t, secretSrc, secretEnv)
	want := []*Server{
		with(stdio("local", "${BIN}", "--key=${KEY}", "--verbose", "$${NOT_A_REF}"), func(s *Server) {
			s.Env = map[string]string{"API_KEY": "${KEY}", "INLINE": "[redacted]", "EMPTY": "", "OPT": "${UNSET:-fallback}"}
			s.Cwd = "${DIR}"
			s.SecretRefs = []string{"BIN", "DIR", "KEY", "UNSET"}
		}),
		with(remote("remote", TransportSSE, "https://${HOST}/sse?key=${KEY}"), func(s *Server) {
			s.Headers = map[string]string{"X-Key": "${KEY}", "X-Inline": "[redacted]"}
			s.BearerTokenEnvVar = "TOKEN"
			s.EnabledTools = []string{}
			s.Prefix = ""
			s.SecretRefs = []string{"HOST", "KEY", "TOKEN"}
		}),
	}
	r := cfg.Redacted()
	if diff := cmp.Diff(want, r.Servers, serverOpts); diff != "" {
		t.Errorf("Redacted mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, r.Redacted().Servers, serverOpts); diff != "" {
		t.Errorf("Redacted is not idempotent (-want +got):\n%s", diff)
	}
	// Redacted copies: changing it leaves the original alone.
	r.Servers[0].Args[0] = "changed"
	r.Servers[0].Env["API_KEY"] = "changed"
	if cfg.Servers[0].Args[0] != "--key=key-SECRET-1" || cfg.Redacted().Servers[0].Env["API_KEY"] != "${KEY}" {
		t.Error("Redacted shares memory with the original")
	}
	if (*Config)(nil).Redacted() != nil || (*Server)(nil).Redacted() != nil {
		t.Error("Redacted of nil should be nil")
	}
}

// TestRedactedHandBuilt covers servers that did not come from Parse: values
// are taken as written, "${" escaped, env and header values hidden.
func TestRedactedHandBuilt(t *testing.T) {
	s := &Server{
		Name: "h", Transport: TransportHTTP, URL: "https://h/${x}",
		Headers:           map[string]string{"Authorization": "Bearer t", "X": "${v}"},
		BearerTokenEnvVar: "T",
	}
	got := s.Redacted()
	want := &Server{
		Name: "h", Transport: TransportHTTP, URL: "https://h/$${x}",
		Headers:           map[string]string{"X": "[redacted]"},
		BearerTokenEnvVar: "T",
	}
	if diff := cmp.Diff(want, got, serverOpts); diff != "" {
		t.Errorf("Redacted mismatch (-want +got):\n%s", diff)
	}
	if s.Headers["Authorization"] != "Bearer t" {
		t.Error("Redacted changed the original")
	}
}

func TestMarshalJSON(t *testing.T) {
	cfg := mustParse(t, secretSrc, secretEnv)
	got, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "mcpServers": {
    "local": {
      "type": "stdio",
      "command": "${BIN}",
      "args": [
        "--key=${KEY}",
        "--verbose",
        "$${NOT_A_REF}"
      ],
      "env": {
        "API_KEY": "${KEY}",
        "EMPTY": "",
        "INLINE": "[redacted]",
        "OPT": "${UNSET:-fallback}"
      },
      "cwd": "${DIR}",
      "enabled": true,
      "prefix": "local",
      "startupTimeoutMs": 10000,
      "callTimeoutMs": 60000,
      "trust": "untrusted",
      "sampling": false,
      "elicitation": true,
      "roots": true,
      "images": true,
      "strict": false,
      "eager": false,
      "startupAttempts": 3,
      "retryMs": 30000,
      "approval": "auto",
      "onDrift": "hold",
      "lockToolList": false
    },
    "remote": {
      "type": "sse",
      "url": "https://${HOST}/sse?key=${KEY}",
      "headers": {
        "X-Inline": "[redacted]",
        "X-Key": "${KEY}"
      },
      "bearerTokenEnvVar": "TOKEN",
      "enabled": true,
      "enabledTools": [],
      "prefix": "",
      "startupTimeoutMs": 10000,
      "callTimeoutMs": 60000,
      "trust": "untrusted",
      "sampling": false,
      "elicitation": true,
      "roots": true,
      "images": true,
      "strict": false,
      "eager": false,
      "startupAttempts": 3,
      "retryMs": 30000,
      "approval": "auto",
      "onDrift": "hold",
      "lockToolList": false
    }
  }
}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("MarshalJSON mismatch (-want +got):\n%s", diff)
	}

	// The output is a configuration that loads to the same servers, but
	// for the literal values it hid.
	again := mustParse(t, string(got), secretEnv)
	wantServers := cfg.Servers
	wantServers[0].Env["INLINE"] = "[redacted]"
	wantServers[1].Headers["X-Inline"] = "[redacted]"
	if diff := cmp.Diff(wantServers, again.Servers, serverOpts); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

// TestRedactedArgsAndURL: the literal secrets of args (a secret-named
// flag's value, given with = or after it, a token-shaped argument, and a
// connection string's password) and
// of a URL (user information, secret-named or token-shaped query values)
// are masked; references and everything else are shown as written.
func TestRedactedArgsAndURL(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		url      string
		wantArgs []string
		wantURL  string
	}{
		{"flag=value", []string{"--api-key=s3cr3t", "--verbose"}, "", []string{"--api-key=[redacted]", "--verbose"}, ""},
		{"flag value", []string{"--token", "s3cr3t", "/srv"}, "", []string{"--token", "[redacted]", "/srv"}, ""},
		{"token shape", []string{"run", "ghp_0123456789abcdef"}, "", []string{"run", "[redacted]"}, ""},
		{"reference kept", []string{"--token", "${cred:x.TOKEN}", "--key=${KEY}"}, "", []string{"--token", "$${cred:x.TOKEN}", "--key=$${KEY}"}, ""},
		{"connection string", []string{"postgresql://app:s3cr3t@db:5432/app", "--db=mysql://root:pw@h/x", "postgresql://app@db/app"}, "",
			[]string{"postgresql://app:[redacted]@db:5432/app", "--db=mysql://root:[redacted]@h/x", "postgresql://app@db/app"}, ""},
		{"userinfo", nil, "https://alice:s3cr3t@h.example/mcp", nil, "https://alice:[redacted]@h.example/mcp"},
		{"user token", nil, "https://s3cr3t@h.example/mcp", nil, "https://[redacted]@h.example/mcp"},
		{"query", nil, "https://h.example/mcp?api_key=s3cr3t&mode=fast#top", nil, "https://h.example/mcp?api_key=[redacted]&mode=fast#top"},
		{"query token shape", nil, "https://h.example/mcp?x=sk-0123456789abcdef", nil, "https://h.example/mcp?x=[redacted]"},
		{"plain", nil, "https://h.example/mcp?page=2", nil, "https://h.example/mcp?page=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{Name: "x", Command: "srv", Args: tt.args, URL: tt.url}
			r := s.Redacted()
			if diff := cmp.Diff(tt.wantArgs, r.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if r.URL != tt.wantURL {
				t.Errorf("url = %q, want %q", r.URL, tt.wantURL)
			}
		})
	}
}

// FuzzRedactURL: masking a URL never panics, keeps a URL with no user
// information and no query as it is, and masks a secret-named query
// parameter's literal value.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://h/mcp", "https://a:b@h/x?token=t&x=1#f", "http://${HOST}/sse?key=${KEY}", "?", "@", "://@?&=#", "https://h/?api_key=v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := redactURL(s)
		if !strings.ContainsAny(s, "@?") && got != s {
			t.Errorf("redactURL(%q) = %q, want it unchanged", s, got)
		}
		if v := s + "?token=fuzzsecretvalue"; !strings.ContainsAny(s, "?#") && strings.Contains(redactURL(v), "fuzzsecretvalue") {
			t.Errorf("redactURL(%q) = %q keeps the token", v, redactURL(v))
		}
	})
}

// TestSecretEnvAndNames: what an env value's secret is, by the rule of
// SecretArg, and the names import and add keep secrets under.
func TestSecretEnvAndNames(t *testing.T) {
	tests := []struct {
		key, value            string
		before, secret, after string
		ok                    bool
	}{
		{"GITHUB_TOKEN", "abc", "", "abc", "", true},
		{"X", "sk-0123456789abcdef", "", "sk-0123456789abcdef", "", true},
		{"DATABASE_URL", "postgresql://u:pw@h/db", "postgresql://u:", "pw", "@h/db", true},
		{"DATABASE_URL", "postgresql://u@h/db", "", "", "", false},
		{"DATABASE_URL", "postgresql://u:${cred:X}@h/db", "", "", "", false},
		{"LOG_LEVEL", "debug", "", "", "", false},
		{"API_KEY", "", "", "", "", false},
	}
	for _, tt := range tests {
		before, secret, after, ok := SecretEnv(tt.key, tt.value)
		if before != tt.before || secret != tt.secret || after != tt.after || ok != tt.ok {
			t.Errorf("SecretEnv(%q, %q) = %q, %q, %q, %v", tt.key, tt.value, before, secret, after, ok)
		}
	}
	for got, want := range map[string]string{
		EnvCredName("github-token", true):  "GITHUB_TOKEN",
		EnvCredName("DATABASE_URL", false): "DATABASE_URL_PASSWORD",
		ArgCredName("my pg", "password"):   "MY_PG_PASSWORD",
		ArgCredName("gh", ""):              "GH_TOKEN",
		ArgCredName("9x", "api-key"):       "_9X_API_KEY",
	} {
		if got != want {
			t.Errorf("name %q, want %q", got, want)
		}
	}
	stored := map[string]string{"API_KEY": "one", "S_API_KEY": "two"}
	taken := func(n string) (string, bool) { v, ok := stored[n]; return v, ok }
	for _, tt := range []struct{ want, value, got string }{
		{"API_KEY", "one", "API_KEY"},       // the same value: shared
		{"API_KEY", "three", "S_API_KEY_2"}, // taken twice: numbered
		{"NEW", "x", "NEW"},
		{"S_NEW", "x", "S_NEW"},
	} {
		if got := FreeCredName("s", tt.want, tt.value, taken); got != tt.got {
			t.Errorf("FreeCredName(%q, %q) = %q, want %q", tt.want, tt.value, got, tt.got)
		}
	}
}
