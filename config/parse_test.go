package config

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseShapes loads each client's shape, as their documentation writes
// it, and checks the resolved servers.
func TestParseShapes(t *testing.T) {
	env := fakeEnv{
		"GITHUB_TOKEN": "ghp_secret",
		"API_KEY":      "sk-secret",
		"HOME":         "/home/u",
		"LINEAR_TOKEN": "lin_secret",
	}
	tests := []struct {
		name string
		src  string
		want []*Server
	}{
		{
			name: "Claude Desktop",
			src: `{
			  "mcpServers": {
			    "github": {
			      "command": "docker",
			      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
			      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}
			    },
			    "filesystem": {
			      "command": "npx",
			      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/Desktop"]
			    }
			  }
			}`,
			want: []*Server{
				with(stdio("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/u/Desktop"), func(s *Server) {
					s.SecretRefs = []string{"HOME"}
				}),
				with(stdio("github", "docker", "run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"), func(s *Server) {
					s.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}
					s.SecretRefs = []string{"GITHUB_TOKEN"}
				}),
			},
		},
		{
			name: "Claude Code .mcp.json with type http",
			src: `{
			  "mcpServers": {
			    "api-server": {
			      "type": "http",
			      "url": "${API_BASE_URL:-https://api.example.com}/mcp",
			      "headers": {"Authorization": "Bearer ${API_KEY}"}
			    },
			    "local": {
			      "type": "stdio",
			      "command": "/path/to/server",
			      "args": [],
			      "env": {"CACHE_DIR": "${CACHE_DIR:-}"}
			    }
			  }
			}`,
			want: []*Server{
				with(remote("api-server", TransportHTTP, "https://api.example.com/mcp"), func(s *Server) {
					s.Headers = map[string]string{"Authorization": "Bearer sk-secret"}
					s.SecretRefs = []string{"API_BASE_URL", "API_KEY"}
				}),
				with(stdio("local", "/path/to/server"), func(s *Server) {
					s.Args = []string{}
					s.Env = map[string]string{"CACHE_DIR": ""}
					s.SecretRefs = []string{"CACHE_DIR"}
				}),
			},
		},
		{
			name: "Cursor url without type, and sse",
			src: `{
			  "mcpServers": {
			    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"X-Api-Key": "${API_KEY}"}},
			    "legacy": {"type": "sse", "url": "http://localhost:8080/sse"}
			  }
			}`,
			want: []*Server{
				remote("legacy", TransportSSE, "http://localhost:8080/sse"),
				with(remote("remote", TransportHTTP, "https://mcp.example.com/mcp"), func(s *Server) {
					s.Headers = map[string]string{"X-Api-Key": "sk-secret"}
					s.SecretRefs = []string{"API_KEY"}
				}),
			},
		},
		{
			name: "Windsurf serverUrl and disabled",
			src: `{
			  "mcpServers": {
			    "autosend": {"serverUrl": "https://mcp.autosend.com/"},
			    "git": {"command": "py", "args": ["-m", "mcp_server_git"], "disabled": true, "env": {}, "disabledTools": ["git_push"]}
			  }
			}`,
			want: []*Server{
				remote("autosend", TransportHTTP, "https://mcp.autosend.com/"),
				with(stdio("git", "py", "-m", "mcp_server_git"), func(s *Server) {
					s.Enabled = false
					s.Env = map[string]string{}
					s.DisabledTools = []string{"git_push"}
				}),
			},
		},
		{
			name: "VS Code servers and inputs",
			src: `{
			  "$schema": "vscode://schemas/mcp",
			  "inputs": [
			    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true},
			    {"type": "pickString", "id": "region", "options": ["eu", {"label": "US", "value": "us"}], "default": "eu"},
			    {"type": "command", "id": "tok", "command": "auth.token", "args": {"scope": "x"}}
			  ],
			  "servers": {
			    "perplexity": {
			      "type": "stdio",
			      "command": "npx",
			      "args": ["-y", "server-perplexity-ask"],
			      "cwd": "${HOME}/work",
			      "env": {"PERPLEXITY_API_KEY": "${API_KEY}"}
			    },
			    "linear": {
			      "type": "http",
			      "url": "https://mcp.linear.app/mcp",
			      "headers": {"Authorization": "Bearer ${LINEAR_TOKEN}"}
			    }
			  }
			}`,
			want: []*Server{
				with(remote("linear", TransportHTTP, "https://mcp.linear.app/mcp"), func(s *Server) {
					s.Headers = map[string]string{"Authorization": "Bearer lin_secret"}
					s.SecretRefs = []string{"LINEAR_TOKEN"}
				}),
				with(stdio("perplexity", "npx", "-y", "server-perplexity-ask"), func(s *Server) {
					s.Cwd = "/home/u/work"
					s.Env = map[string]string{"PERPLEXITY_API_KEY": "sk-secret"}
					s.SecretRefs = []string{"API_KEY", "HOME"}
				}),
			},
		},
		{
			name: "Switchboard's own fields",
			src: `{
			  "mcpServers": {
			    "gh": {
			      "url": "https://api.githubcopilot.com/mcp/",
			      "bearerTokenEnvVar": "GITHUB_TOKEN",
			      "headers": {"X-MCP-Toolsets": "repos,issues"},
			      "enabledTools": ["get_*", "list_*", "search_?ssues"],
			      "disabledTools": ["[dx]elete_*"],
			      "startupTimeoutMs": 2500,
			      "callTimeoutMs": 86400000,
			      "prefix": "github"
			    },
			    "gh:sub": {"command": "gh-sub", "enabled": false, "prefix": ""},
			    "none": {"command": "x", "enabledTools": []}
			  }
			}`,
			want: []*Server{
				with(remote("gh", TransportHTTP, "https://api.githubcopilot.com/mcp/"), func(s *Server) {
					s.Headers = map[string]string{"X-MCP-Toolsets": "repos,issues", "Authorization": "Bearer ghp_secret"}
					s.BearerTokenEnvVar = "GITHUB_TOKEN"
					s.EnabledTools = []string{"get_*", "list_*", "search_?ssues"}
					s.DisabledTools = []string{"[dx]elete_*"}
					s.StartupTimeout = 2500 * time.Millisecond
					s.CallTimeout = 24 * time.Hour
					s.Prefix = "github"
					s.SecretRefs = []string{"GITHUB_TOKEN"}
				}),
				with(stdio("gh:sub", "gh-sub"), func(s *Server) {
					s.Enabled = false
					s.Prefix = ""
				}),
				with(stdio("none", "x"), func(s *Server) { s.EnabledTools = []string{} }),
			},
		},
		{
			name: "empty",
			src:  `{"mcpServers": {}}`,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, tt.src, env)
			if cfg.Source != testFile {
				t.Errorf("Source = %q, want %q", cfg.Source, testFile)
			}
			if diff := cmp.Diff(tt.want, cfg.Servers, serverOpts); diff != "" {
				t.Errorf("Servers mismatch (-want +got):\n%s", diff)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestTransportAliases(t *testing.T) {
	tests := []struct {
		typ  string
		want Transport
	}{
		{"stdio", TransportStdio},
		{"local", TransportStdio},
		{"STDIO", TransportStdio},
		{"http", TransportHTTP},
		{"streamable-http", TransportHTTP},
		{"streamableHttp", TransportHTTP},
		{"streamable_http", TransportHTTP},
		{"streamable", TransportHTTP},
		{"HTTP", TransportHTTP},
		{"sse", TransportSSE},
		{"SSE", TransportSSE},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			field := `"url": "https://h/mcp"`
			if tt.want == TransportStdio {
				field = `"command": "srv"`
			}
			cfg := mustParse(t, `{"mcpServers": {"s": {"type": "`+tt.typ+`", `+field+`}}}`, nil)
			if got := cfg.Servers[0].Transport; got != tt.want {
				t.Errorf("type %q: Transport = %q, want %q", tt.typ, got, tt.want)
			}
		})
	}
}

func TestDefaultsApplied(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"s": {"command": "srv"}, "r": {"url": "https://h/"}}}`, nil)
	want := []*Server{remote("r", TransportHTTP, "https://h/"), stdio("s", "srv")}
	if diff := cmp.Diff(want, cfg.Servers, serverOpts); diff != "" {
		t.Errorf("Servers mismatch (-want +got):\n%s", diff)
	}
	s := cfg.Servers[1]
	if s.Args != nil || s.Env != nil || s.EnabledTools != nil || s.DisabledTools != nil || s.Headers != nil || s.SecretRefs != nil {
		t.Errorf("absent fields should be nil: %#v", *s)
	}
	if cfg.Servers[0].Headers != nil {
		t.Errorf("Headers = %v, want nil for a server without headers", cfg.Servers[0].Headers)
	}
}

func TestProtocolVersion(t *testing.T) {
	tests := []struct {
		fields string
		want   string
	}{
		{`"command": "x"`, ""},
		{`"command": "x", "protocolVersion": "2026-07-28"`, "2026-07-28"},
		{`"command": "x", "protocolVersion": "2024-11-05"`, "2024-11-05"},
		{`"url": "https://h/", "protocolVersion": "2026-07-28"`, "2026-07-28"},
		{`"url": "https://h/", "protocolVersion": "2025-06-18"`, "2025-06-18"},
		{`"type": "sse", "url": "https://h/", "protocolVersion": "2025-03-26"`, "2025-03-26"},
	}
	for _, tt := range tests {
		cfg := mustParse(t, srv(tt.fields), nil)
		s := cfg.Servers[0]
		if s.ProtocolVersion != tt.want {
			t.Errorf("%s: ProtocolVersion %q, want %q", tt.fields, s.ProtocolVersion, tt.want)
		}
		if r := s.Redacted(); r.ProtocolVersion != tt.want {
			t.Errorf("%s: Redacted shows ProtocolVersion %q, want %q", tt.fields, r.ProtocolVersion, tt.want)
		}
		// The canonical form names the pin and loads back to it.
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if again := mustParse(t, string(b), nil).Servers[0]; again.ProtocolVersion != tt.want {
			t.Errorf("%s: round trip through %s: ProtocolVersion %q", tt.fields, b, again.ProtocolVersion)
		}
	}
}

func TestEnabledDisabled(t *testing.T) {
	tests := []struct {
		fields string
		want   bool
	}{
		{``, true},
		{`, "enabled": true`, true},
		{`, "enabled": false`, false},
		{`, "disabled": true`, false},
		{`, "disabled": false`, true},
		{`, "enabled": true, "disabled": false`, true},
		{`, "disabled": true, "enabled": false`, false},
	}
	for _, tt := range tests {
		cfg := mustParse(t, `{"mcpServers": {"s": {"command": "x"`+tt.fields+`}}}`, nil)
		if got := cfg.Servers[0].Enabled; got != tt.want {
			t.Errorf("%s: Enabled = %t, want %t", tt.fields, got, tt.want)
		}
	}
}

// TestPrefix checks that an explicit "" (pass-through) stays distinct from an
// absent prefix (the server name).
func TestPrefix(t *testing.T) {
	tests := []struct {
		name, fields, want string
	}{
		{"absent", ``, "srv"},
		{"explicit empty", `, "prefix": ""`, ""},
		{"explicit", `, "prefix": "S_1-x"`, "S_1-x"},
		{"32 bytes", `, "prefix": "abcdefghijklmnopqrstuvwxyz012345"`, "abcdefghijklmnopqrstuvwxyz012345"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, `{"mcpServers": {"srv": {"command": "x"`+tt.fields+`}}}`, nil)
			if got := cfg.Servers[0].Prefix; got != tt.want {
				t.Errorf("Prefix = %q, want %q", got, tt.want)
			}
		})
	}
	// Several servers may pass names through.
	mustParse(t, `{"mcpServers": {"a": {"command": "x", "prefix": ""}, "b": {"command": "x", "prefix": ""}}}`, nil)
}

// TestDerivedPrefix checks the prefix of a server whose name is not a valid
// prefix and that sets none: derived from the name, hashed on a collision
// with any other prefix, and the same whatever the document order.
func TestDerivedPrefix(t *testing.T) {
	type srv struct{ name, fields string }
	tests := []struct {
		name    string
		servers []srv
		want    map[string]string // server name -> prefix
	}{
		{"colon", []srv{{"gh", ""}, {"gh:sub", ""}}, map[string]string{"gh": "gh", "gh:sub": "gh_sub"}},
		{"dots and slashes", []srv{{"github.com/x", ""}}, map[string]string{"github.com/x": "github_com_x"}},
		{"runs and ends trimmed", []srv{{":a::b.", ""}}, map[string]string{":a::b.": "a_b"}},
		{"nothing left", []srv{{"::", ""}}, map[string]string{"::": "server"}},
		{"long", []srv{{strings.Repeat("n", 40), ""}}, map[string]string{strings.Repeat("n", 40): strings.Repeat("n", 32)}},
		{"non-ASCII", []srv{{"ünï:x", ""}}, map[string]string{"ünï:x": "n_x"}},
		{"collides with a name", []srv{{"gh_sub", ""}, {"gh:sub", ""}}, map[string]string{"gh_sub": "gh_sub", "gh:sub": "gh_sub_57e27fd3"}},
		{"collides with a name ignoring case", []srv{{"GH_SUB", ""}, {"gh:sub", ""}}, map[string]string{"GH_SUB": "GH_SUB", "gh:sub": "gh_sub_57e27fd3"}},
		{"collides with an explicit prefix", []srv{{"a", `, "prefix": "gh_sub"`}, {"gh:sub", ""}}, map[string]string{"a": "gh_sub", "gh:sub": "gh_sub_57e27fd3"}},
		{"two derive the same", []srv{{"gh:sub", ""}, {"gh.sub", ""}}, map[string]string{"gh:sub": "gh_sub_57e27fd3", "gh.sub": "gh_sub_e0d7aaf5"}},
		{"long hashed", []srv{{strings.Repeat("n", 32), ""}, {strings.Repeat("n", 33), ""}}, map[string]string{strings.Repeat("n", 32): strings.Repeat("n", 32), strings.Repeat("n", 33): strings.Repeat("n", 23) + "_835cfa26"}},
		{"explicit wins", []srv{{"gh", ""}, {"gh:sub", `, "prefix": "sub"`}}, map[string]string{"gh": "gh", "gh:sub": "sub"}},
		{"explicit pass-through", []srv{{"gh:sub", `, "prefix": ""`}}, map[string]string{"gh:sub": ""}},
	}
	doc := func(servers []srv) string {
		var b strings.Builder
		for i, s := range servers {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(s.name) + `: {"command": "x"` + s.fields + `}`)
		}
		return `{"mcpServers": {` + b.String() + `}}`
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reversed := slices.Clone(tt.servers)
			slices.Reverse(reversed)
			for _, order := range [][]srv{tt.servers, reversed} {
				cfg := mustParse(t, doc(order), nil)
				got := map[string]string{}
				for _, s := range cfg.Servers {
					got[s.Name] = s.Prefix
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("prefixes mismatch (-want +got):\n%s", diff)
				}
				if err := cfg.Validate(); err != nil {
					t.Errorf("Validate: %v", err)
				}
			}
		})
	}
}

func TestServerNames(t *testing.T) {
	valid := []string{"a", "gh:sub", "github.com/x", "ünïcode", "a-b_c.d@e", "x:y:z", strings.Repeat("n", MaxNameLen)}
	for _, name := range valid {
		src := `{"mcpServers": {` + jsonString(name) + `: {"command": "x", "prefix": "p"}}}`
		cfg := mustParse(t, src, nil)
		if got := cfg.Servers[0].Name; got != name {
			t.Errorf("Name = %q, want %q", got, name)
		}
	}
}

// TestSorted checks that servers come out sorted by name, whatever the
// document order.
func TestSorted(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {"c": {"command": "x"}, "a": {"command": "x"}, "B": {"command": "x"}, "b2": {"command": "x"}}}`, nil)
	if diff := cmp.Diff([]string{"B", "a", "b2", "c"}, cfg.Names()); diff != "" {
		t.Errorf("Names mismatch (-want +got):\n%s", diff)
	}
	if s := cfg.Server("b2"); s == nil || s.Name != "b2" {
		t.Errorf(`Server("b2") = %v`, s)
	}
	if s := cfg.Server("missing"); s != nil {
		t.Errorf(`Server("missing") = %v, want nil`, s)
	}
	var nilCfg *Config
	if nilCfg.Server("a") != nil || nilCfg.Names() != nil {
		t.Error("nil *Config should have no servers")
	}
}

func TestBOM(t *testing.T) {
	mustParse(t, "\xEF\xBB\xBF"+`{"mcpServers": {}}`, nil)
}
