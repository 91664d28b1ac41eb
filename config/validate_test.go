package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestURLs(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string // "" means accepted
	}{
		{"http://localhost:3000/mcp", ""},
		{"https://api.example.com/mcp/", ""},
		{"https://[::1]:8443/mcp", ""},
		{"https://h/mcp?x=1&y=2", ""},
		{"HTTPS://H/", ""},
		{"https://h", ""},

		{"", "URL is empty"},
		{"ftp://h/", `URL scheme must be "http" or "https"`},
		{"wss://h/", `URL scheme must be "http" or "https"`},
		{"h/mcp", `URL scheme must be "http" or "https"`},
		{"localhost:3000", `URL scheme must be "http" or "https"`},
		{"mailto:a@b", `URL scheme must be "http" or "https"`},
		{"https://user:pw@h/", `URL must not contain credentials (user:password@): put them in a header that references a variable, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}, or use "bearerTokenEnvVar"`},
		{"https://token@h/", `URL must not contain credentials (user:password@): put them in a header that references a variable, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}, or use "bearerTokenEnvVar"`},
		{"https://@h/", `URL must not contain credentials (user:password@): put them in a header that references a variable, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}, or use "bearerTokenEnvVar"`},
		{"https:///mcp", "URL has no host"},
		{"http:opaque", "URL has no host"},
		{"https://:443/", "URL has no host"},
		{"https://h/#frag", "URL must not have a fragment (#...): fragments are never sent to the server"},
		{"https://h/#", "URL must not have a fragment (#...): fragments are never sent to the server"},
		{"https://h:port/", "not a valid URL"},
		{"http://[::1/", "not a valid URL"},
		{"https://a b/", "not a valid URL"},
		{"https://h/\x7f", "not a valid URL"},
	}
	for _, tt := range tests {
		got := parseErr(t, srv(`"url": `+jsonString(tt.url)), nil)
		want := ""
		if tt.wantErr != "" {
			want = testFile + ": $.mcpServers.a.url: " + tt.wantErr
		}
		if got != want {
			t.Errorf("url %q:\ngot  %s\nwant %s", tt.url, got, want)
		}
	}
}

// validConfig returns a hand-built configuration that passes Validate.
func validConfig() *Config {
	return &Config{
		Source: "code",
		Servers: []*Server{
			with(stdio("z", "srv", "-v"), func(s *Server) {
				s.Env = map[string]string{"K": "v"}
				s.Cwd = "/tmp"
				s.EnabledTools = []string{"a*"}
			}),
			with(remote("a", TransportHTTP, "https://h/mcp"), func(s *Server) {
				s.Headers = map[string]string{"Authorization": "Bearer x"}
				s.BearerTokenEnvVar = "TOKEN"
				s.Prefix = ""
			}),
			remote("b", TransportSSE, "http://localhost/sse"),
		},
	}
}

func TestValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if err := Default("/bin/switchboard").Validate(); err != nil {
		t.Fatalf("Default: %v", err)
	}
	if err := (&Config{}).Validate(); err != nil {
		t.Fatalf("empty config: %v", err)
	}
	if err := (*Config)(nil).Validate(); err == nil || err.Error() != "config is nil" {
		t.Errorf("nil config: %v", err)
	}

	const F = "code: "
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"nil server", func(c *Config) { c.Servers[1] = nil }, []string{F + "Servers[1] is nil"}},
		{"bad name", func(c *Config) { c.Servers[0].Name = "a b"; c.Servers[0].Prefix = "z" }, []string{F + `$.mcpServers["a b"]: invalid server name: contains whitespace`}},
		{"names differing in case", func(c *Config) { c.Servers[2].Name = "A"; c.Servers[2].Prefix = "" }, []string{F + `$.mcpServers.A: server name differs from "a" only in case; names must be unique ignoring case`}},
		{"unknown transport", func(c *Config) { c.Servers[2].Transport = "ws" }, []string{F + `$.mcpServers.b.type: unknown transport "ws": want "stdio", "http" or "sse"`}},
		{"zero transport", func(c *Config) { c.Servers[2].Transport = "" }, []string{F + `$.mcpServers.b.type: unknown transport "": want "stdio", "http" or "sse"`}},
		{"stdio without command", func(c *Config) { c.Servers[0].Command = "" }, []string{F + `$.mcpServers.z.command: command is empty`}},
		{"stdio with http fields", func(c *Config) {
			c.Servers[0].URL = "https://h/"
			c.Servers[0].Headers = map[string]string{}
			c.Servers[0].BearerTokenEnvVar = "T"
		}, []string{
			F + `$.mcpServers.z.url: "url" is only for http and sse servers; this server is stdio`,
			F + `$.mcpServers.z.headers: "headers" is only for http and sse servers; this server is stdio`,
			F + `$.mcpServers.z.bearerTokenEnvVar: "bearerTokenEnvVar" is only for http and sse servers; this server is stdio`,
		}},
		{"http with stdio fields", func(c *Config) {
			s := c.Servers[1]
			s.Command, s.Args, s.Env, s.Cwd = "x", []string{}, map[string]string{}, "/"
		}, []string{
			F + `$.mcpServers.a.command: "command" is only for stdio servers; this server is http`,
			F + `$.mcpServers.a.args: "args" is only for stdio servers; this server is http`,
			F + `$.mcpServers.a.env: "env" is only for stdio servers; this server is http`,
			F + `$.mcpServers.a.cwd: "cwd" is only for stdio servers; this server is http`,
		}},
		{"http without url", func(c *Config) { c.Servers[1].URL = "" }, []string{F + `$.mcpServers.a.url: URL is empty`}},
		{"http with credentials", func(c *Config) { c.Servers[2].URL = "http://u:p@h/" }, []string{F + `$.mcpServers.b.url: URL must not contain credentials (user:password@): put them in a header that references a variable, e.g. "headers": {"Authorization": "Bearer ${TOKEN}"}, or use "bearerTokenEnvVar"`}},
		{"NUL bytes", func(c *Config) {
			s := c.Servers[0]
			s.Command, s.Args[0], s.Env["K"], s.Cwd = "a\x00", "\x00", "\x00", "\x00"
		}, []string{
			F + `$.mcpServers.z.command: contains a NUL byte`,
			F + `$.mcpServers.z.args[0]: contains a NUL byte`,
			F + `$.mcpServers.z.env.K: contains a NUL byte`,
			F + `$.mcpServers.z.cwd: contains a NUL byte`,
		}},
		{"env names", func(c *Config) { c.Servers[0].Env = map[string]string{"": "", "A=B": "", "OK": ""} }, []string{
			F + `$.mcpServers.z.env[""]: empty environment variable name`,
			F + `$.mcpServers.z.env["A=B"]: environment variable name contains "=" or a NUL byte`,
		}},
		{"headers", func(c *Config) {
			c.Servers[1].Headers = map[string]string{"Authorization": "x", "authorization": "y", "Bad Name": "", "X": "a\nb"}
		}, []string{
			// Sorted by name, byte order.
			F + `$.mcpServers.a.headers["Bad Name"]: invalid header name "Bad Name"`,
			F + `$.mcpServers.a.headers.X: header value contains control characters (such as a line break)`,
			F + `$.mcpServers.a.headers.authorization: duplicate header: "Authorization" and "authorization" differ only in case`,
		}},
		{"globs", func(c *Config) {
			c.Servers[0].EnabledTools = []string{"["}
			c.Servers[0].DisabledTools = []string{"ok", ""}
		}, []string{
			F + `$.mcpServers.z.enabledTools[0]: invalid glob "[": syntax error in pattern`,
			F + `$.mcpServers.z.disabledTools[1]: empty glob`,
		}},
		{"zero timeouts", func(c *Config) { c.Servers[2].StartupTimeout, c.Servers[2].CallTimeout = 0, 0 }, []string{
			F + `$.mcpServers.b.startupTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`,
			F + `$.mcpServers.b.callTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`,
		}},
		{"timeout too long", func(c *Config) { c.Servers[2].CallTimeout = MaxTimeout + time.Nanosecond }, []string{F + `$.mcpServers.b.callTimeoutMs: must be between 1 and 86400000 milliseconds (24h)`}},
		{"bad bearer name", func(c *Config) { c.Servers[1].BearerTokenEnvVar = "A-B" }, []string{F + `$.mcpServers.a.bearerTokenEnvVar: invalid environment variable name "A-B"`}},
		{"protocol versions", func(c *Config) {
			c.Servers[0].ProtocolVersion = "2026-07-28" // stdio: fine
			c.Servers[1].ProtocolVersion = "2025-11-26"
			c.Servers[2].ProtocolVersion = "2026-07-28"
		}, []string{
			F + `$.mcpServers.a.protocolVersion: unknown protocol version "2025-11-26": want "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05" (did you mean "2025-11-25"?)`,
			F + `$.mcpServers.b.protocolVersion: protocol version "2026-07-28" is not for sse servers (the HTTP+SSE transport is of the legacy era): want "2025-11-25", "2025-06-18", "2025-03-26" or "2024-11-05"`,
		}},
		{"bad prefix", func(c *Config) { c.Servers[0].Prefix = "a:b" }, []string{F + `$.mcpServers.z.prefix: invalid prefix "a:b": a prefix is 1 to 32 characters from A-Z, a-z, 0-9, '_' and '-'`}},
		{"prefix clash", func(c *Config) { c.Servers[0].Prefix = "B" }, []string{F + `$.mcpServers.b.prefix: prefix "b" is already used by server "z" (prefixes must be unique ignoring case)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.change(c)
			got := ""
			if err := c.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(strings.Join(tt.want, "\n"), got); diff != "" {
				t.Errorf("Validate mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateUsesShapeKey checks that Validate's paths follow the shape the
// configuration was loaded from.
func TestValidateUsesShapeKey(t *testing.T) {
	cfg := mustParse(t, `{"servers": {"a": {"command": "x"}}}`, nil)
	cfg.Servers[0].Command = ""
	want := testFile + ": $.servers.a.command: command is empty"
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %s", err, want)
	}
}
