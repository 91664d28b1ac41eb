package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// demoServers writes a configuration of the demo server (this test binary
// re-executed) under each name, with extra fields per server.
func demoServers(t *testing.T, servers map[string]map[string]any) string {
	t.Helper()
	exe, _ := os.Executable()
	m := map[string]any{}
	for name, extra := range servers {
		s := map[string]any{"command": exe, "args": []string{"demo-server"}}
		for k, v := range extra {
			s[k] = v
		}
		m[name] = s
	}
	return writeConfig(t, map[string]any{"mcpServers": m})
}

// TestToolsOfServer: `tools SERVER` lists that server's tools only (as a
// table with its count, or as JSON); a name that is neither a tool nor a
// server exits 2 naming the servers; a tool's name still describes it.
func TestToolsOfServer(t *testing.T) {
	t.Parallel()
	cfg := demoServers(t, map[string]map[string]any{
		"alpha": nil, "beta": {"enabledTools": []string{"echo", "add"}}, "off": {"enabled": false},
	})
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		notOut   []string
		wantErr  string
	}{
		{"one server", []string{"tools", "beta"}, 0, []string{"beta__add", "beta__echo", "\n2 tools from 1 server\n"}, []string{"alpha__", "built-in"}, ""},
		{"the other", []string{"tools", "alpha"}, 0, []string{"alpha__weather", "\n6 tools from 1 server\n"}, []string{"beta__"}, ""},
		{"disabled server", []string{"tools", "off"}, 0, []string{"0 tools from 1 server"}, []string{"__"}, `server "off" is disabled`},
		{"json", []string{"tools", "beta", "--json"}, 0, []string{`"name": "beta__add"`, `"name": "beta__echo"`}, []string{"alpha__", "tools from"}, ""},
		{"a tool still", []string{"tools", "beta__echo"}, 0, []string{"id:          beta:echo"}, nil, ""},
		{"unknown", []string{"tools", "bta"}, 2, nil, nil, `nor a server (did you mean "beta"?): the servers are "alpha", "beta", "off"`},
		{"unknown far", []string{"tools", "nothing-like-it"}, 2, nil, nil, `the servers are "alpha", "beta", "off"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, append(tt.args, "--config", cfg)...)
			bad := r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr)
			for _, w := range tt.wantOut {
				bad = bad || !strings.Contains(r.stdout, w)
			}
			for _, w := range tt.notOut {
				bad = bad || strings.Contains(r.stdout, w)
			}
			if bad {
				t.Errorf("switchboard %q: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, r.code, tt.wantCode, r.stdout, r.stderr)
			}
		})
	}
	r := run(t, "tools", "beta", "--json", "--config", cfg)
	var tools []struct{ Server string }
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) != 2 || tools[0].Server != "beta" || tools[1].Server != "beta" {
		t.Errorf("tools beta --json: %v\n%s", err, r.stdout)
	}
}

// TestCounts: servers, tools and the serve banner count tools in the same
// words: "N tools from M servers, plus K built-in", singular where one,
// the built-in part only when there are some, disabled servers left out.
func TestCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  string
		want string
	}{
		{"none", writeConfig(t, map[string]any{"mcpServers": map[string]any{}}), "0 tools from 0 servers"},
		{"one of each", demoServers(t, map[string]map[string]any{"a": {"enabledTools": []string{"echo"}}}), "1 tool from 1 server, plus 5 built-in"},
		{"several", demoServers(t, map[string]map[string]any{"a": nil, "b": nil, "c": {"enabled": false}}), "12 tools from 2 servers, plus 5 built-in"},
		{"embedded default", "", "6 tools from 1 server, plus 5 built-in"},
		{"deferred", demoServers(t, map[string]map[string]any{"a": {"deferTools": true}}), "6 tools from 1 server, plus 8 built-in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var flags []string
			if tt.cfg != "" {
				flags = []string{"--config", tt.cfg}
			}
			for _, cmd := range []string{"servers", "tools"} {
				r := run(t, append([]string{cmd}, flags...)...)
				if r.code != 0 || !strings.Contains(r.stdout, "\n"+tt.want+"\n") {
					t.Errorf("%s: exit %d, stdout lacks the line %q:\n%s\nstderr: %s", cmd, r.code, tt.want, r.stdout, r.stderr)
				}
			}
			r := serve(t, nil, append([]string{"--http", "127.0.0.1:0"}, flags...)...)
			if !strings.Contains(r.stderr, "switchboard: serving "+tt.want+" (") && !strings.Contains(r.stderr, "switchboard: serving "+tt.want+"\n") {
				t.Errorf("serve banner lacks %q:\n%s", tt.want, r.stderr)
			}
			if deferred := "6 tools deferred: tool_search finds them)\n"; (tt.name == "deferred") != strings.Contains(r.stderr, deferred) {
				t.Errorf("serve banner: %q only with deferred tools:\n%s", deferred, r.stderr)
			}
		})
	}
}

// TestConfigInUse: servers and the serve banner (HTTP and stdio) name the
// configuration file in use, or say the embedded default is in use and
// which file is missing.
func TestConfigInUse(t *testing.T) {
	t.Parallel()
	named := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	inHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(inHome, "config.json"), []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--config", []string{"--config", named, "--home", t.TempDir()}, named},
		{"in the home", []string{"--home", inHome}, filepath.Join(inHome, "config.json")},
		{"embedded default", []string{"--home", empty}, "embedded default (no " + filepath.Join(empty, "config.json") + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, append([]string{"servers"}, tt.args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "\nconfig: "+tt.want+"\n") {
				t.Errorf("servers: exit %d, lacks config: %s\nstdout: %s\nstderr: %s", r.code, tt.want, r.stdout, r.stderr)
			}
			r = serve(t, nil, append([]string{"--http", "127.0.0.1:0"}, tt.args...)...)
			if !strings.Contains(r.stderr, "\n  config:   "+tt.want+"\n  endpoint: ") {
				t.Errorf("serve banner lacks config: %s\n%s", tt.want, r.stderr)
			}
		})
	}
	// serve --stdio says it on stderr (stdout is the protocol's).
	r := runWith(t, cli.Env{Args: []string{"serve", "--stdio", "--config", named, "--home", t.TempDir()},
		Stdin: strings.NewReader(""), LookupEnv: homeEnv(t.TempDir())})
	if r.code != 0 || !strings.Contains(r.stderr, "on stdio\n  config: "+named+"\n") || r.stdout != "" {
		t.Errorf("serve --stdio: exit %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
