package mcpregistry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

// recorded decodes a recorded server.json.
func recorded(t *testing.T, name, version string) *mcpregistry.Server {
	t.Helper()
	var s mcpregistry.Server
	if err := json.Unmarshal(registrytest.Find(t, name, version), &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	return &s
}

// answers answers from a map; a key missing is no answer. Asked records
// the keys asked.
type answers struct {
	m     map[string]string
	asked []string
}

// ask answers the values of a key split at "|".
func (a *answers) ask(q mcpregistry.Question) ([]string, error) {
	a.asked = append(a.asked, q.Kind+":"+q.Key)
	v, ok := a.m[q.Key]
	if !ok {
		return nil, nil
	}
	return strings.Split(v, "|"), nil
}

// flat shows a launch as words: secrets marked with a "!" before them.
func flat(l *mcpregistry.Launch) []string {
	out := []string{l.Transport, l.Command + l.URL}
	for _, a := range l.Args {
		out = append(out, mark(a))
	}
	for _, e := range l.Env {
		out = append(out, "env "+e.Name+"="+mark(e.Value))
	}
	for _, h := range l.Headers {
		out = append(out, "header "+h.Name+": "+mark(h.Value))
	}
	return out
}

func mark(v mcpregistry.Value) string {
	if v.Secret {
		return "!" + v.Text
	}
	return v.Text
}

func TestTranslate(t *testing.T) {
	const fs = "io.github.modelcontextprotocol/filesystem"
	tests := []struct {
		name, server, version string
		choice                mcpregistry.Choice
		answers               map[string]string
		want                  []string
		what                  string
		err                   string
	}{
		{name: "npm, default argument", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			want: []string{"stdio", "npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/tmp", "env LOG_LEVEL=info"},
			what: "npm @modelcontextprotocol/server-filesystem@1.0.2"},
		{name: "npm, answers", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			answers: map[string]string{"target_dir": "/srv/docs", "LOG_LEVEL": "debug"},
			want:    []string{"stdio", "npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/srv/docs", "env LOG_LEVEL=debug"}},
		{name: "npm, a repeated argument", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			answers: map[string]string{"target_dir": "/a|/b"},
			want:    []string{"stdio", "npx", "-y", "@modelcontextprotocol/server-filesystem@1.0.2", "/a", "/b", "env LOG_LEVEL=info"}},
		{name: "one value only", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			answers: map[string]string{"LOG_LEVEL": "a|b"}, err: "env LOG_LEVEL takes one value, not 2"},
		{name: "positional value is not an option", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			answers: map[string]string{"target_dir": "--help"}, err: `begins with "-"`},
		{name: "oci, tag in identifier, variables", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 2},
			answers: map[string]string{"source_path": "/home/me/docs"},
			want: []string{"stdio", "docker", "run", "-i", "--rm", "--mount", "type=bind,src=/home/me/docs,dst=/project",
				"-e", "LOG_LEVEL", "docker.io/mcp/filesystem:1.0.2", "/project", "env LOG_LEVEL=info"},
			what: "oci docker.io/mcp/filesystem:1.0.2"},
		{name: "oci, required variable missing", server: fs, version: "1.0.2", choice: mcpregistry.Choice{Package: 2},
			err: "variable source_path is required"},
		{name: "oci, version as tag, named and positional arguments", server: "io.github.example/database-manager", version: "3.1.0",
			choice:  mcpregistry.Choice{Package: 1},
			answers: map[string]string{"db_type": "postgres", "database_name": "shop", "DB_USERNAME": "app", "DB_PASSWORD": "s3cret", "port": "5432"},
			want: []string{"stdio", "docker", "run", "-i", "--rm", "--network", "host", "-e", "DB_TYPE=postgres",
				"-e", "DB_USERNAME", "-e", "DB_PASSWORD", "-e", "SSL_MODE",
				"example/database-manager-mcp:3.1.0", "--host", "localhost", "--port", "5432", "shop",
				"env DB_USERNAME=app", "env DB_PASSWORD=!s3cret", "env SSL_MODE=prefer"}},
		{name: "a choice outside the choices", server: "io.github.example/database-manager", version: "3.1.0",
			choice:  mcpregistry.Choice{Package: 1},
			answers: map[string]string{"db_type": "oracle", "DB_USERNAME": "u", "DB_PASSWORD": "p"}, err: `"oracle" is not one of postgres, mysql, mongodb, redis`},
		{name: "pypi with uvx, secret env", server: "io.github.example/weather-mcp", version: "0.5.0", choice: mcpregistry.Choice{Package: 1},
			answers: map[string]string{"WEATHER_API_KEY": "k-123"},
			want:    []string{"stdio", "uvx", "weather-mcp-server==0.5.0", "env WEATHER_API_KEY=!k-123", "env WEATHER_UNITS=celsius"},
			what:    "pypi weather-mcp-server==0.5.0"},
		{name: "pypi, required secret missing", server: "io.github.example/weather-mcp", version: "0.5.0", choice: mcpregistry.Choice{Package: 1},
			err: "env WEATHER_API_KEY is required"},
		{name: "remote sse, secret header", server: "io.modelcontextprotocol.anonymous/hybrid-mcp", version: "1.5.0", choice: mcpregistry.Choice{Remote: 1},
			answers: map[string]string{"X-API-Key": "key-1"},
			want:    []string{"sse", "https://mcp.anonymous.modelcontextprotocol.io/sse", "header X-API-Key: !key-1", "header X-Region: us-east-1"},
			what:    "remote https://mcp.anonymous.modelcontextprotocol.io/sse"},
		{name: "remote streamable-http, URL and header variables", server: "io.modelcontextprotocol.anonymous/hybrid-mcp", version: "1.5.0",
			choice:  mcpregistry.Choice{Remote: 2},
			answers: map[string]string{"tenant": "acme", "token": "t-9"},
			want:    []string{"http", "https://mcp.anonymous.modelcontextprotocol.io/acme/mcp", "header Authorization: !Bearer t-9"}},
		{name: "npm with runtimeHint npx, optional named with default", server: "io.modelcontextprotocol.anonymous/hybrid-mcp", version: "1.5.0",
			choice: mcpregistry.Choice{Package: 1},
			want:   []string{"stdio", "npx", "-y", "@example/hybrid-mcp-server@1.5.0", "--mode", "local"}},
		{name: "mcpb", server: "io.modelcontextprotocol/text-editor", version: "1.0.2", choice: mcpregistry.Choice{Package: 1},
			err: "registry type mcpb is not supported"},
		{name: "nuget", server: "io.github.joelverhagen/knapcode-samplemcpserver", version: "0.4.0-beta", choice: mcpregistry.Choice{Package: 1},
			err: "registry type nuget is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := recorded(t, tc.server, tc.version)
			a := &answers{m: tc.answers}
			l, err := mcpregistry.Translate(s, tc.choice, a.ask)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, flat(l)); diff != "" {
				t.Errorf("launch (-want +got):\n%s", diff)
			}
			if tc.what != "" && l.What != tc.what {
				t.Errorf("What = %q, want %q", l.What, tc.what)
			}
		})
	}
}

// An inline document per shape the recorded ones lack.
func TestTranslateShapes(t *testing.T) {
	tests := []struct {
		name, doc string
		answers   map[string]string
		want      []string
		omitted   []string
		err       string
	}{
		{name: "pipx", doc: `{"registryType":"pypi","identifier":"mcp-server-time","version":"2025.9.25","runtimeHint":"pipx"}`,
			want: []string{"stdio", "pipx", "run", "mcp-server-time==2025.9.25"}},
		{name: "npx runtime arguments keep their -y", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0","runtimeArguments":[{"type":"positional","value":"--yes"}]}`,
			want: []string{"stdio", "npx", "--yes", "x@1.0.0"}},
		{name: "bunx", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0","runtimeHint":"bunx"}`,
			want: []string{"stdio", "bunx", "x@1.0.0"}},
		{name: "optional values left out", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0",
			"packageArguments":[{"type":"named","name":"--verbose"},{"type":"positional","valueHint":"extra"}],
			"environmentVariables":[{"name":"OPT_TOKEN","isSecret":true}]}`,
			want: []string{"stdio", "npx", "-y", "x@1.0.0"}, omitted: []string{"env:OPT_TOKEN", "argument:verbose", "argument:extra"}},
		{name: "a placeholder without a variable stays", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0",
			"packageArguments":[{"type":"positional","value":"{literal}"}]}`,
			want: []string{"stdio", "npx", "-y", "x@1.0.0", "{literal}"}},
		{name: "a secret variable makes its argument secret", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0",
			"packageArguments":[{"type":"named","name":"--token","value":"{tok}","variables":{"tok":{"isSecret":true,"isRequired":true}}}]}`,
			answers: map[string]string{"tok": "sekrit"}, want: []string{"stdio", "npx", "-y", "x@1.0.0", "--token", "!sekrit"}},
		{name: "npx another package", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0","runtimeArguments":[{"type":"named","name":"-p","value":"evil"}]}`,
			err: "could run another package"},
		{name: "uvx another index", doc: `{"registryType":"pypi","identifier":"x","version":"1.0","runtimeArguments":[{"type":"named","name":"--index-url","value":"https://evil"}]}`,
			err: "could run another package"},
		{name: "uvx python version", doc: `{"registryType":"pypi","identifier":"x","version":"1.0","runtimeArguments":[{"type":"named","name":"--python","value":"3.12"}]}`,
			want: []string{"stdio", "uvx", "--python", "3.12", "x==1.0"}},
		{name: "docker privileged", doc: `{"registryType":"oci","identifier":"o/i:1","runtimeArguments":[{"type":"positional","value":"--privileged"}]}`,
			err: "host's privileges"},
		{name: "docker cap-add", doc: `{"registryType":"oci","identifier":"o/i:1","runtimeArguments":[{"type":"named","name":"--cap-add","value":"SYS_ADMIN"}]}`,
			err: "host's privileges"},
		{name: "npm range", doc: `{"registryType":"npm","identifier":"x","version":"^1.0.0"}`, err: "not an exact version"},
		{name: "npm latest", doc: `{"registryType":"npm","identifier":"x","version":"latest"}`, err: "not an exact version"},
		{name: "npm wildcard", doc: `{"registryType":"npm","identifier":"x","version":"1.x"}`, err: "not an exact version"},
		{name: "npm no version", doc: `{"registryType":"npm","identifier":"x"}`, err: "not an exact version"},
		{name: "npm option as name", doc: `{"registryType":"npm","identifier":"--package=evil","version":"1.0.0"}`, err: "does not begin"},
		{name: "pypi requirement in name", doc: `{"registryType":"pypi","identifier":"x>=1","version":"1.0"}`, err: "not a package name"},
		{name: "oci latest tag", doc: `{"registryType":"oci","identifier":"ghcr.io/o/i:latest"}`, err: "is not a pin"},
		{name: "oci digest", doc: `{"registryType":"oci","identifier":"ghcr.io/o/i@sha256:abc"}`,
			want: []string{"stdio", "docker", "run", "-i", "--rm", "ghcr.io/o/i@sha256:abc"}},
		{name: "oci registry port is no tag", doc: `{"registryType":"oci","identifier":"localhost:5000/o/i","version":"2.0"}`,
			want: []string{"stdio", "docker", "run", "-i", "--rm", "localhost:5000/o/i:2.0"}},
		{name: "podman", doc: `{"registryType":"oci","identifier":"o/i:1","runtimeHint":"podman"}`,
			want: []string{"stdio", "podman", "run", "-i", "--rm", "o/i:1"}},
		{name: "unknown runtime hint", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0","runtimeHint":"sh"}`, err: `runtime "sh" is not supported`},
		{name: "local HTTP package", doc: `{"registryType":"npm","identifier":"x","version":"1.0.0","transport":{"type":"streamable-http","url":"http://localhost:8080/mcp"}}`,
			err: "only stdio packages"},
		{name: "unknown registry type", doc: `{"registryType":"cargo","identifier":"x","version":"1.0.0"}`, err: `unknown registry type "cargo"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &mcpregistry.Server{Name: "io.github.t/t", Version: "1"}
			var p mcpregistry.Package
			if err := json.Unmarshal([]byte(tc.doc), &p); err != nil {
				t.Fatal(err)
			}
			s.Packages = []mcpregistry.Package{p}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			a := &answers{m: tc.answers}
			l, err := mcpregistry.Translate(s, mcpregistry.Choice{Package: 1}, a.ask)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, flat(l)); diff != "" {
				t.Errorf("launch (-want +got):\n%s", diff)
			}
			var omitted []string
			for _, q := range l.Omitted {
				omitted = append(omitted, q.Kind+":"+q.Key)
			}
			if diff := cmp.Diff(tc.omitted, omitted); diff != "" {
				t.Errorf("omitted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	fs := recorded(t, "io.github.modelcontextprotocol/filesystem", "1.0.2")
	hybrid := recorded(t, "io.modelcontextprotocol.anonymous/hybrid-mcp", "1.5.0")
	mcpb := recorded(t, "io.modelcontextprotocol/text-editor", "1.0.2")
	only := func(cmds ...string) func(string) bool {
		return func(c string) bool { return strings.Contains(" "+strings.Join(cmds, " ")+" ", " "+c+" ") }
	}
	tests := []struct {
		name string
		s    *mcpregistry.Server
		o    mcpregistry.ChooseOptions
		want mcpregistry.Choice
		err  string
	}{
		{"first installed", fs, mcpregistry.ChooseOptions{Installed: only("npx", "docker")}, mcpregistry.Choice{Package: 1}, ""},
		{"the installed one", fs, mcpregistry.ChooseOptions{Installed: only("docker")}, mcpregistry.Choice{Package: 2}, ""},
		{"none installed, no remote: the first", fs, mcpregistry.ChooseOptions{Installed: only()}, mcpregistry.Choice{Package: 1}, ""},
		{"none installed: a remote, streamable-http first", hybrid, mcpregistry.ChooseOptions{Installed: only()}, mcpregistry.Choice{Remote: 2}, ""},
		{"--remote", hybrid, mcpregistry.ChooseOptions{Remote: true, Installed: only("npx")}, mcpregistry.Choice{Remote: 2}, ""},
		{"--package", fs, mcpregistry.ChooseOptions{Package: 2}, mcpregistry.Choice{Package: 2}, ""},
		{"--package out of range", fs, mcpregistry.ChooseOptions{Package: 3}, mcpregistry.Choice{}, "no package 3"},
		{"--remote without remotes", fs, mcpregistry.ChooseOptions{Remote: true}, mcpregistry.Choice{}, "no remote"},
		{"nothing runnable", mcpb, mcpregistry.ChooseOptions{}, mcpregistry.Choice{}, "package 1: registry type mcpb is not supported"},
		{"--package unsupported", mcpb, mcpregistry.ChooseOptions{Package: 1}, mcpregistry.Choice{}, "mcpb is not supported"},
	}
	for _, tc := range tests {
		got, err := mcpregistry.Choose(tc.s, tc.o)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestMissingErrorNamesTheQuestion(t *testing.T) {
	s := recorded(t, "io.github.brave/brave-search-mcp-server", "2.0.58")
	_, err := mcpregistry.Translate(s, mcpregistry.Choice{Package: 1}, (&answers{}).ask)
	var me *mcpregistry.MissingError
	if !errors.As(err, &me) || me.Question.Key != "BRAVE_API_KEY" || !me.Question.Secret || me.Question.Kind != mcpregistry.KindEnv {
		t.Fatalf("err = %#v", err)
	}
}
