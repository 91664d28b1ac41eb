package clientconf

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// samples are client files as the clients ship and users write them, with
// their foreign keys.
var samples = []struct {
	client, file string
	// name is the file's name in the user's home: it selects VS Code's
	// settings.json shape.
	name string
}{
	{"claude-desktop", "claude_desktop_config.json", "claude_desktop_config.json"},
	{"claude-code", "claude.json", ".claude.json"},
	{"cursor", "cursor_mcp.json", "mcp.json"},
	{"vscode", "vscode_mcp.json", "mcp.json"},
	{"vscode", "vscode_settings.json", "settings.json"},
	{"windsurf", "windsurf_mcp_config.json", "mcp_config.json"},
	{"codex", "codex_config.toml", "config.toml"},
	{"gemini", "gemini_settings.json", "settings.json"},
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func mustClient(t testing.TB, id string) *Client {
	t.Helper()
	c, err := Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readSample(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadSamples reads every sample into the golden neutral form.
func TestReadSamples(t *testing.T) {
	for _, s := range samples {
		t.Run(s.file, func(t *testing.T) {
			res, err := Parse(mustClient(t, s.client), s.name, readSample(t, s.file))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "read/"+s.file+".json", append(b, '\n'))
		})
	}
}

// TestReadRules checks the reading rules one by one on small files.
func TestReadRules(t *testing.T) {
	type check func(t *testing.T, r *Result)
	server := func(t *testing.T, r *Result, name string) Entry {
		t.Helper()
		for _, e := range r.Servers {
			if e.Name == name {
				return e
			}
		}
		t.Fatalf("no server %q in %+v", name, r.Servers)
		return Entry{}
	}
	noted := func(server, key string) check {
		return func(t *testing.T, r *Result) {
			t.Helper()
			for _, n := range r.Notes {
				if n.Server == server && n.Key == key {
					return
				}
			}
			t.Errorf("no note for %q %q in %v", server, key, r.Notes)
		}
	}
	tests := []struct {
		name   string
		client string
		file   string // the file's base name
		data   string
		checks []check
	}{
		{
			name: "env syntax normalised", client: "cursor", file: "mcp.json",
			data: `{"mcpServers":{"a":{"command":"x","args":["${env:HOME}/d","${userHome}/e","$${literal}"],"env":{"T":"${env:TOKEN}"}}}}`,
			checks: []check{func(t *testing.T, r *Result) {
				e := server(t, r, "a")
				if diff := cmp.Diff([]string{"${HOME}/d", "${HOME}/e", "$${literal}"}, e.Args); diff != "" {
					t.Error(diff)
				}
				if e.Env["T"] != "${TOKEN}" {
					t.Errorf("env T = %q", e.Env["T"])
				}
				if len(r.Secrets) != 0 {
					t.Errorf("references are not secrets: %+v", r.Secrets)
				}
			}},
		},
		{
			name: "gemini bare dollar references", client: "gemini", file: "settings.json",
			data: `{"mcpServers":{"a":{"command":"x","env":{"K":"$TOKEN","P":"a$1"}}}}`,
			checks: []check{func(t *testing.T, r *Result) {
				e := server(t, r, "a")
				if e.Env["K"] != "${TOKEN}" || e.Env["P"] != "a$1" {
					t.Errorf("env = %v", e.Env)
				}
			}},
		},
		{
			name: "dollar is literal outside gemini", client: "claude-code", file: ".claude.json",
			data: `{"mcpServers":{"a":{"command":"x","env":{"K":"$TOKEN"}}}}`,
			checks: []check{func(t *testing.T, r *Result) {
				if e := server(t, r, "a"); e.Env["K"] != "$TOKEN" {
					t.Errorf("env = %v", e.Env)
				}
			}},
		},
		{
			name: "inline secrets move out", client: "claude-code", file: ".claude.json",
			data: `{"mcpServers":{
				"a":{"command":"x","args":["--api-key=abc123","--token","tok456","ghp_0123456789abcdef"],"env":{"API_KEY":"v1","LEVEL":"debug"}},
				"b":{"type":"http","url":"https://h/mcp?api_key=qq%2F1&x=1","headers":{"Authorization":"Basic dXNlcjpwdw==","X-Api-Key":"k2","Accept":"a"}},
				"c":{"command":"y","env":{"API_KEY":"other"}}}}`,
			checks: []check{func(t *testing.T, r *Result) {
				a, b, c := server(t, r, "a"), server(t, r, "b"), server(t, r, "c")
				if diff := cmp.Diff([]string{"--api-key=${A_API_KEY}", "--token", "${A_TOKEN}", "${A_TOKEN_2}"}, a.Args); diff != "" {
					t.Errorf("args (-want +got):\n%s", diff)
				}
				if a.Env["API_KEY"] != "${API_KEY}" || a.Env["LEVEL"] != "debug" {
					t.Errorf("a env = %v", a.Env)
				}
				if c.Env["API_KEY"] != "${C_API_KEY}" {
					t.Errorf("c env = %v (a clash takes the server's name)", c.Env)
				}
				if b.URL != "https://h/mcp?api_key=${B_API_KEY}&x=1" {
					t.Errorf("url = %q", b.URL)
				}
				want := map[string]string{"Authorization": "Basic ${B_BASIC_AUTH}", "X-Api-Key": "${B_X_API_KEY}", "Accept": "a"}
				if diff := cmp.Diff(want, b.Headers); diff != "" {
					t.Errorf("headers (-want +got):\n%s", diff)
				}
				values := map[string]string{}
				for _, s := range r.Secrets {
					values[s.Name] = s.Value
				}
				wantV := map[string]string{
					"A_API_KEY": "abc123", "A_TOKEN": "tok456", "A_TOKEN_2": "ghp_0123456789abcdef",
					"API_KEY": "v1", "B_API_KEY": "qq/1", "B_BASIC_AUTH": "dXNlcjpwdw==",
					"B_X_API_KEY": "k2", "C_API_KEY": "other",
				}
				if diff := cmp.Diff(wantV, values); diff != "" {
					t.Errorf("secrets (-want +got):\n%s", diff)
				}
			}},
		},
		{
			name: "vscode inputs are prompted", client: "vscode", file: "mcp.json",
			data: `{"inputs":[{"type":"promptString","id":"tok","description":"Token","password":true},{"type":"pickString","id":"p"}],
				"servers":{"a":{"type":"http","url":"https://h","headers":{"Authorization":"Bearer ${input:tok}"}},
				"b":{"command":"x","env":{"K":"${input:missing}","T":"${input:tok}"}}}}`,
			checks: []check{
				func(t *testing.T, r *Result) {
					if got := server(t, r, "a").Headers["Authorization"]; got != "Bearer ${TOK}" {
						t.Errorf("header = %q", got)
					}
					want := []Secret{
						{Server: "a", Field: "headers.Authorization", Name: "TOK", Prompt: "Token", Password: true},
						{Server: "b", Field: "env.K", Name: "MISSING"},
						{Server: "b", Field: "env.T", Name: "TOK", Prompt: "Token", Password: true},
					}
					if diff := cmp.Diff(want, r.Secrets); diff != "" {
						t.Errorf("secrets (-want +got):\n%s", diff)
					}
				},
				noted("", "inputs.p"),
				noted("b", "env.K"),
			},
		},
		{
			name: "transports", client: "claude-code", file: ".claude.json",
			data: `{"mcpServers":{
				"s":{"command":"x"},
				"h":{"type":"streamable-http","url":"https://h"},
				"e":{"url":"https://h/sse"},
				"u":{"type":"carrier-pigeon","url":"https://h"},
				"n":{"args":["x"]},
				"both":{"type":"http","url":"https://h","command":"x"},
				"envurl":{"url":"https://h","env":{"A":"b"}},
				"bad":"not an object"}}`,
			checks: []check{
				func(t *testing.T, r *Result) {
					got := map[string]Transport{}
					for _, e := range r.Servers {
						got[e.Name] = e.Transport
					}
					want := map[string]Transport{"s": Stdio, "h": HTTP, "e": SSE, "both": HTTP, "envurl": HTTP}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("transports (-want +got):\n%s", diff)
					}
					if e := server(t, r, "both"); e.Command != "" {
						t.Errorf("command kept on an http server: %+v", e)
					}
				},
				noted("u", ""), noted("n", ""), noted("both", "command"), noted("bad", ""),
				noted("envurl", "env"),
			},
		},
		{
			name: "codex enabled and tool lists", client: "codex", file: "config.toml",
			data: "[mcp_servers.a]\ncommand = \"x\"\nenabled = false\nenabled_tools = [\"t1\"]\ndisabled_tools = [\"t2\"]\n[mcp_servers.b]\nurl = \"https://h\"\nenv_http_headers = { \"X-Key\" = \"KEY_VAR\" }\nheaders = { \"X-Ignored\" = \"1\" }\n",
			checks: []check{noted("b", "headers"), func(t *testing.T, r *Result) {
				a, b := server(t, r, "a"), server(t, r, "b")
				if !a.Disabled || !cmp.Equal(a.EnabledTools, []string{"t1"}) || !cmp.Equal(a.DisabledTools, []string{"t2"}) {
					t.Errorf("a = %+v", a)
				}
				if b.Transport != HTTP || !cmp.Equal(b.Headers, map[string]string{"X-Key": "${KEY_VAR}"}) {
					t.Errorf("b = %+v", b)
				}
			}},
		},
		{
			// As the JavaScript clients read it: the first position, the
			// last definition.
			name: "a name given twice: the last counts", client: "cursor", file: "mcp.json",
			data: `{"mcpServers":{"a":{"command":"first"},"b":{"command":"y"},"a":{"command":"last"}}}`,
			checks: []check{
				func(t *testing.T, r *Result) {
					if len(r.Servers) != 2 || r.Servers[0].Name != "a" || server(t, r, "a").Command != "last" {
						t.Errorf("servers = %+v", r.Servers)
					}
				},
				noted("a", ""),
			},
		},
		{
			name: "a block given twice in JSONC: the last counts", client: "vscode", file: "mcp.json",
			data: "{\n  // c\n  \"servers\": {\"a\": {\"command\": \"x\"}},\n  \"servers\": {\"b\": {\"command\": \"y\"},},\n}",
			checks: []check{func(t *testing.T, r *Result) {
				if len(r.Servers) != 1 || server(t, r, "b").Command != "y" {
					t.Errorf("servers = %+v", r.Servers)
				}
			}},
		},
		{
			name: "null servers", client: "cursor", file: "mcp.json",
			data: `{"mcpServers": null}`,
			checks: []check{func(t *testing.T, r *Result) {
				if len(r.Servers) != 0 {
					t.Errorf("servers = %+v", r.Servers)
				}
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(mustClient(t, tc.client), tc.file, []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.checks {
				c(t, r)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		client, data, want string
	}{
		{"cursor", `[]`, "not a JSON object"},
		{"cursor", `{"mcpServers": []}`, "mcpServers is not an object"},
		{"cursor", `{"mcpServers": {`, "unexpected EOF"},
		{"vscode", `{"servers": 1}`, "servers is not an object"},
		{"codex", "mcp_servers = 3\n", "mcp_servers is not a table"},
		{"codex", "[mcp_servers.a\n", "expected"},
	}
	for _, tc := range tests {
		_, err := Parse(mustClient(t, tc.client), "f", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: err = %v, want it to contain %q", tc.client, tc.data, err, tc.want)
		}
	}
}

func TestReadMissing(t *testing.T) {
	_, err := Read(mustClient(t, "cursor"), filepath.Join(t.TempDir(), "nope.json"))
	if !os.IsNotExist(err) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestSniff(t *testing.T) {
	tests := []struct{ path, data, want string }{
		{"x.toml", "", "codex"},
		{"mcp.json", `{"servers": {}}`, "vscode"},
		{"mcp.json", `{"mcpServers": {}}`, "claude-code"},
		{"weird.json", `not json`, "claude-code"},
	}
	for _, tc := range tests {
		if got := Sniff(tc.path, []byte(tc.data)).ID; got != tc.want {
			t.Errorf("Sniff(%q, %q) = %s, want %s", tc.path, tc.data, got, tc.want)
		}
	}
}
