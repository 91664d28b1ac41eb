package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

// runReg runs the CLI against home, with no terminal and no PATH (so no
// runtime counts as installed); extra adds to the environment.
func runReg(t *testing.T, home string, extra map[string]string, args ...string) result {
	t.Helper()
	env := func(k string) (string, bool) {
		if k == "SWITCHBOARD_HOME" {
			return home, true
		}
		v, ok := extra[k]
		return v, ok
	}
	return runWith(t, cli.Env{Args: args, Stdin: strings.NewReader(""), LookupEnv: env, Version: "test"})
}

// regServers reads the servers of home's config.json.
func regServers(t *testing.T, home string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.MCPServers
}

func TestAddRegistry(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	home := t.TempDir()
	res := runReg(t, home, nil, "add", "--registry", "io.github.brave/brave-search-mcp-server", "--registry-url", reg.URL,
		"--env", "BRAVE_API_KEY=sekrit-123")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	got := regServers(t, home)["brave-search"]
	want := map[string]any{
		"command":  "npx",
		"args":     []any{"-y", "@brave/brave-search-mcp-server@2.0.58"},
		"env":      map[string]any{"BRAVE_API_KEY": "${cred:BRAVE_API_KEY}"},
		"approval": "manual",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config.json's server (-want +got):\n%s", diff)
	}
	config, _ := os.ReadFile(filepath.Join(home, "config.json"))
	if strings.Contains(string(config), "sekrit-123") {
		t.Errorf("the secret is in config.json: %s", config)
	}
	creds, err := os.ReadFile(filepath.Join(home, "creds.json"))
	if err != nil || !strings.Contains(string(creds), "sekrit-123") {
		t.Errorf("creds.json does not keep the secret: %s %v", creds, err)
	}
	for _, w := range []string{"io.github.brave/brave-search-mcp-server 2.0.58", "npm @brave/brave-search-mcp-server@2.0.58",
		"environment: BRAVE_API_KEY", "runs: npx -y @brave/brave-search-mcp-server@2.0.58\n", "held until approved", "switchboard approve brave-search"} {
		if !strings.Contains(res.stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, res.stdout)
		}
	}
	if strings.Contains(res.stderr, "checking server") {
		t.Errorf("a server from the registry was started before its approval:\n%s", res.stderr)
	}
	// Its launch is held for a person, in this fresh home too: a host
	// does not start it.
	srv := runReg(t, home, nil, "servers", "--json")
	if !strings.Contains(srv.stdout, `"state": "held"`) {
		t.Errorf("servers after add --registry: the server is not held\n%s%s", srv.stdout, srv.stderr)
	}

	// Added again under the same name: refused, nothing changed.
	res = runReg(t, home, nil, "add", "--registry", "io.github.brave/brave-search-mcp-server", "--registry-url", reg.URL,
		"--env", "BRAVE_API_KEY=other")
	if res.code != 2 || !strings.Contains(res.stderr, `already has a server "brave-search"`) {
		t.Errorf("added twice: exit %d, %s", res.code, res.stderr)
	}
}

func TestAddRegistryVersionArgumentsAndName(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	home := t.TempDir()
	// The registry's URL from the environment; version 1.0.1, not the latest.
	res := runReg(t, home, map[string]string{"SWITCHBOARD_REGISTRY_URL": reg.URL}, "add", "--registry",
		"io.github.modelcontextprotocol/filesystem@1.0.1", "docs", "--var", "target_dir=/srv/${HOME}docs", "--var", "target_dir=/b", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	got := regServers(t, home)["docs"]
	if diff := cmp.Diff([]any{"-y", "@modelcontextprotocol/server-filesystem@1.0.1", "/srv/$${HOME}docs", "/b"}, got["args"]); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, res.stdout)
	}
	if out["version"] != "1.0.1" || out["held"] != true || out["server"] != "docs" || out["registry"] != reg.URL {
		t.Errorf("--json: %v", out)
	}
	if reqs := reg.Requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0], "/versions/1.0.1") {
		t.Errorf("requests: %v", reqs)
	}
}

func TestAddRegistryChoices(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	home := t.TempDir()
	// No runtime installed: the streamable-http remote, its URL and header filled in.
	res := runReg(t, home, nil, "add", "--registry", "io.modelcontextprotocol.anonymous/hybrid-mcp", "--registry-url", reg.URL,
		"--var", "tenant=acme", "--var", "token=t-9")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	want := map[string]any{
		"url":      "https://mcp.anonymous.modelcontextprotocol.io/acme/mcp",
		"headers":  map[string]any{"Authorization": "${cred:hybrid.header.Authorization}"},
		"approval": "manual",
	}
	if diff := cmp.Diff(want, regServers(t, home)["hybrid"]); diff != "" {
		t.Errorf("remote (-want +got):\n%s", diff)
	}
	creds, _ := os.ReadFile(filepath.Join(home, "creds.json"))
	if !strings.Contains(string(creds), "Bearer t-9") {
		t.Errorf("creds.json: %s", creds)
	}

	// --package 1: the npm package, pinned.
	res = runReg(t, home, nil, "add", "--registry", "io.modelcontextprotocol.anonymous/hybrid-mcp", "local", "--registry-url", reg.URL, "--package", "1")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	if diff := cmp.Diff([]any{"-y", "@example/hybrid-mcp-server@1.5.0", "--mode", "local"}, regServers(t, home)["local"]["args"]); diff != "" {
		t.Errorf("--package 1 (-want +got):\n%s", diff)
	}
}

func TestAddRegistryRefusals(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"secret missing, no terminal", []string{"io.github.brave/brave-search-mcp-server"}, 2,
			"no terminal to ask at: give it with --env BRAVE_API_KEY=VALUE"},
		{"unknown server", []string{"io.github.example/nothing"}, 2, "io.github.example/nothing@latest in registry " + reg.URL + ": not found"},
		{"unknown version", []string{"io.github.modelcontextprotocol/filesystem@7.0.0"}, 2, "not found"},
		{"not a name", []string{"filesystem"}, 2, "want NAMESPACE/NAME"},
		{"mcpb", []string{"io.modelcontextprotocol/text-editor"}, 2, "registry type mcpb is not supported"},
		{"a value it does not name", []string{"io.github.brave/brave-search-mcp-server", "--env", "BRAVE_API_KEY=k", "--env", "BRAVE_KEY=k"}, 2,
			"names no --env BRAVE_KEY"},
		{"a choice it does not offer", []string{"io.github.example/weather-mcp", "--env", "WEATHER_API_KEY=k", "--env", "WEATHER_UNITS=kelvin"}, 2,
			`"kelvin" is not one of celsius, fahrenheit`},
		{"a command too", []string{"io.github.brave/brave-search-mcp-server", "--", "npx", "x"}, 2, "the registry says what runs"},
		{"--package without --registry", nil, 2, "go with --registry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			args := []string{"add", "--registry-url", reg.URL}
			if tc.args == nil {
				args = append(args, "--package", "1", "x", "http://127.0.0.1:1/mcp")
			} else {
				args = append(args, "--registry")
				args = append(args, tc.args...)
			}
			res := runReg(t, home, nil, args...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q", res.code, tc.code, res.stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(home, "config.json")); err == nil {
				t.Errorf("config.json written")
			}
		})
	}

	// --json: the reason is the code.
	res := runReg(t, t.TempDir(), nil, "add", "--registry", "io.github.example/nothing", "--registry-url", reg.URL, "--json")
	if res.code != 2 || !strings.Contains(res.stdout, `"code": "not_found"`) {
		t.Errorf("--json: exit %d, %s", res.code, res.stdout)
	}
	reg.Spoil([]byte("<html>"))
	res = runReg(t, t.TempDir(), nil, "add", "--registry", "io.github.example/nothing", "--registry-url", reg.URL, "--json")
	if res.code != 3 || !strings.Contains(res.stdout, `"code": "bad_document"`) {
		t.Errorf("a spoiled answer: exit %d, %s", res.code, res.stdout)
	}
}

func TestSearchRegistry(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	home := t.TempDir()
	res := runReg(t, home, nil, "search", "--registry", "filesystem", "--registry-url", reg.URL)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.Contains(lines[1], "io.github.modelcontextprotocol/filesystem") || !strings.Contains(lines[1], "1.0.2") || !strings.Contains(lines[1], "stdio") {
		t.Errorf("stdout:\n%s", res.stdout)
	}

	// Several words: every one in the name or the description.
	res = runReg(t, home, nil, "search", "--registry", "brave", "search", "--registry-url", reg.URL, "--json")
	var got []struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Transports []string `json:"transports"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || res.code != 0 {
		t.Fatalf("exit %d, %v\n%s", res.code, err, res.stdout)
	}
	if len(got) != 1 || got[0].Name != "io.github.brave/brave-search-mcp-server" || got[0].Version != "2.0.58" {
		t.Errorf("--json: %+v", got)
	}

	// Transports of a server with a package and remotes; -k bounds them.
	res = runReg(t, home, nil, "search", "--registry", "mcp", "--registry-url", reg.URL, "-k", "1", "--json")
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || len(got) != 1 {
		t.Fatalf("-k 1: %v %s", err, res.stdout)
	}
	res = runReg(t, home, nil, "search", "--registry", "hybrid", "--registry-url", reg.URL, "--json")
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || len(got) != 1 || strings.Join(got[0].Transports, ",") != "stdio,sse,streamable-http" {
		t.Errorf("transports: %+v %v", got, err)
	}

	res = runReg(t, home, nil, "search", "--registry", "nothing-like-it", "--registry-url", reg.URL)
	if res.code != 0 || res.stdout != "" || !strings.Contains(res.stderr, "no server of "+reg.URL) {
		t.Errorf("no match: exit %d, %q, %q", res.code, res.stdout, res.stderr)
	}
	res = runReg(t, home, nil, "search", "--registry", "x", "--registry-url", "http://127.0.0.1:1")
	if res.code != 3 || !strings.Contains(res.stderr, "unreachable") {
		t.Errorf("nothing listening: exit %d, %s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "state.db")); err == nil {
		t.Errorf("search --registry opened the state store")
	}
}

// At a terminal, a secret the server.json names is asked without echo.
func TestAddRegistryAsksAtTerminal(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	home := t.TempDir()
	tm := startTerm(t, home, "add", "--registry", "io.github.example/weather-mcp", "--registry-url", reg.URL)
	tm.waitFor("env WEATHER_API_KEY (API key for weather service): ")
	tm.send("typed-secret-42\r")
	if code := tm.exit(); code != 0 || !strings.Contains(tm.plain(), "held until approved") {
		t.Fatalf("exit %d:\n%s", code, tm.plain())
	}
	if strings.Contains(tm.raw(), "typed-secret-42") {
		t.Errorf("the secret was echoed:\n%s", tm.plain())
	}
	if strings.Contains(tm.plain(), "WEATHER_UNITS (") {
		t.Errorf("a value with a default was asked:\n%s", tm.plain())
	}
	got := regServers(t, home)["weather"]
	want := map[string]any{"command": "uvx", "args": []any{"weather-mcp-server==0.5.0"},
		"env":      map[string]any{"WEATHER_API_KEY": "${cred:WEATHER_API_KEY}", "WEATHER_UNITS": "celsius"},
		"approval": "manual"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config.json's server (-want +got):\n%s", diff)
	}
	creds, _ := os.ReadFile(filepath.Join(home, "creds.json"))
	if !strings.Contains(string(creds), "typed-secret-42") {
		t.Errorf("creds.json: %s", creds)
	}
}

// A secret argument is kept under the name add gives one, and a name
// another server's value holds is not taken.
func TestAddRegistrySecretArgument(t *testing.T) {
	t.Parallel()
	doc := registrytest.Doc{Name: "io.github.example/tokened", Version: "1.0.0", Raw: []byte(`{
	  "name": "io.github.example/tokened", "version": "1.0.0", "description": "a server that takes its token as a flag",
	  "packages": [{"registryType": "npm", "identifier": "tokened-mcp", "version": "1.0.0",
	    "packageArguments": [{"type": "named", "name": "--api-key", "value": "{key}",
	      "variables": {"key": {"isRequired": true, "isSecret": true}}}]}]}`)}
	reg := registrytest.Start(t, doc)
	home := t.TempDir()
	res := runReg(t, home, nil, "add", "--registry", "io.github.example/tokened", "--registry-url", reg.URL, "--var", "key=k-1")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	if diff := cmp.Diff([]any{"-y", "tokened-mcp@1.0.0", "--api-key", "${cred:TOKENED_API_KEY}"}, regServers(t, home)["tokened"]["args"]); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.stdout, "runs: npx -y tokened-mcp@1.0.0 --api-key ${cred:TOKENED_API_KEY}") {
		t.Errorf("stdout shows the secret or not the reference:\n%s", res.stdout)
	}
	creds, _ := os.ReadFile(filepath.Join(home, "creds.json"))
	if !strings.Contains(string(creds), `"TOKENED_API_KEY": "k-1"`) {
		t.Errorf("creds.json: %s", creds)
	}
}
