package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
)

// TestServersMaskSecrets: `servers -v`, with and without --json, shows a
// server's last error and stderr tail with the secrets of its
// configuration, which the server echoed, as "***".
func TestServersMaskSecrets(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	server := func(mode string) map[string]any {
		env := testkit.ChildEnv(mode)
		env["API_TOKEN"] = "envsecret-cli-2"
		env[testkit.LeakyURLVar] = "https://alice:urlsecret-cli-3@127.0.0.1:9/x?api_key=querysecret-cli-4"
		return map[string]any{"command": exe, "args": []string{"--api-key", "argsecret-cli-1"}, "env": env, "startupAttempts": 1}
	}
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
		"broken": server(testkit.ModeLeaky),
		"chatty": server(testkit.ModeLeakyServer),
	}})
	for _, args := range [][]string{{"servers", "-v", "--json"}, {"servers", "-v"}} {
		r := run(t, append(args, "--config", path)...)
		out := r.stdout + r.stderr
		if r.code != 0 || strings.Count(out, "alice:***@127.0.0.1:9/x?api_key=***") < 2 || !strings.Contains(out, "--api-key ***") {
			t.Errorf("%v: exit %d, not masked:\n%s", args, r.code, out)
		}
		for _, s := range []string{"argsecret-cli-1", "envsecret-cli-2", "urlsecret-cli-3", "querysecret-cli-4"} {
			if strings.Contains(out, s) {
				t.Errorf("%v shows %q:\n%s", args, s, out)
			}
		}
	}
}
