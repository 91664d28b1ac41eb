package config

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRuntimeField(t *testing.T) {
	cfg := mustParse(t, srv(`"command": "npx", "runtime": {"node": ">=20", "uv": ""}`), nil)
	want := map[string]string{"node": ">=20", "uv": ""}
	if diff := cmp.Diff(want, cfg.Servers[0].Runtime); diff != "" {
		t.Errorf("Runtime (-want +got):\n%s", diff)
	}
	// It survives the canonical JSON form.
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, string(b), nil)
	if diff := cmp.Diff(want, back.Servers[0].Runtime); diff != "" {
		t.Errorf("Runtime after MarshalJSON (-want +got):\n%s", diff)
	}

	const F = testFile + ": "
	for _, tt := range []struct{ name, src, want string }{
		{"unknown runtime", srv(`"command": "x", "runtime": {"nodejs": ">=20"}`),
			F + `$.mcpServers.a.runtime.nodejs: unknown runtime "nodejs": want "bun", "deno", "docker", "node", "python" or "uv" (did you mean "node"?)`},
		{"bad requirement", srv(`"command": "x", "runtime": {"node": "twenty"}`),
			F + `$.mcpServers.a.runtime.node: invalid version requirement "twenty": want e.g. ">=20" or "^3.11"`},
		{"not an object", srv(`"command": "x", "runtime": ">=20"`),
			F + `$.mcpServers.a.runtime: want object of strings, got string`},
		{"http server", srv(`"url": "https://h/", "runtime": {"node": ">=20"}`),
			F + `$.mcpServers.a.runtime: "runtime" is only for stdio servers; this server is http`},
	} {
		if got := parseErr(t, tt.src, nil); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
