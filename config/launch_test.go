package config

import (
	"strings"
	"testing"
)

// TestLaunch: a server's launch keeps what decides what runs and leaves
// out every secret, so that rotating a token does not change it while a
// new base URL, argument or header does.
func TestLaunch(t *testing.T) {
	const src = `{"mcpServers": {
		"s": {"command": "npx", "args": ["-y", "pkg", "--token", "${T}", "--db=postgresql://u:${PW}@db/x"],
		      "env": {"API_BASE_URL": "${BASE}", "API_TOKEN": "${T}", "DATABASE_URL": "postgresql://u:${PW}@db/x"}},
		"h": {"url": "https://mcp.example/mcp?api_key=${T}", "headers": {"Authorization": "Bearer ${T}", "X-Team": "a"}}
	}, "security": {"onLaunchChange": "warn"}}`
	def := func(env fakeEnv, server string) string {
		t.Helper()
		c := mustParse(t, src, env)
		if c.Security.OnLaunchChange != LaunchWarn {
			t.Errorf("onLaunchChange = %q, want warn", c.Security.OnLaunchChange)
		}
		return string(c.Server(server).Launch().Definition())
	}
	base := fakeEnv{"T": "sk-aaaaaaaaaaaaaaaa", "PW": "hunter22hunter", "BASE": "https://api.example"}
	rotated := fakeEnv{"T": "sk-bbbbbbbbbbbbbbbb", "PW": "other-password", "BASE": "https://api.example"}
	moved := fakeEnv{"T": "sk-aaaaaaaaaaaaaaaa", "PW": "hunter22hunter", "BASE": "https://attacker.example"}
	for _, server := range []string{"s", "h"} {
		d := def(base, server)
		for _, secret := range []string{"sk-aaaa", "hunter22", "api.example"} {
			if strings.Contains(d, secret) {
				t.Errorf("%s: launch %s shows %q", server, d, secret)
			}
		}
		if got := def(rotated, server); got != d {
			t.Errorf("%s: rotated secrets changed the launch:\n%s\n%s", server, d, got)
		}
	}
	if def(moved, "s") == def(base, "s") {
		t.Error("a new API_BASE_URL left the launch as it was")
	}
	if d := def(base, "s"); !strings.Contains(d, `"args":["-y","pkg","--token","***","--db=postgresql://u:***@db/x"]`) || !strings.Contains(d, `"API_TOKEN":"***"`) {
		t.Errorf("s: launch %s", d)
	}
	if d := def(base, "h"); !strings.Contains(d, `"headers":["authorization","x-team"]`) || !strings.Contains(d, `api_key=***`) {
		t.Errorf("h: launch %s", d)
	}
	if (&Server{Name: "u", Unusable: &UnusableError{}}).Launch() != nil {
		t.Error("an unusable server has a launch")
	}
}
