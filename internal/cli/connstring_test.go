package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConnectionStringPassword: the password inside a connection string,
// as an argument or an env value, is a secret like --api-key VALUE:
// import and add both move it to creds.json, under the same names
// (SERVER_PASSWORD for an argument's, VAR_PASSWORD for an env value's),
// keep the rest of the string in config.json around a ${cred:...}
// reference, and neither they nor get print it.
func TestConnectionStringPassword(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	const pw = "pg-pass-4242"
	conn := "postgresql://app:" + pw + "@db.example:5432/app"
	wantArgs := []any{"demo-server", "postgresql://app:${cred:POSTGRES_PASSWORD}@db.example:5432/app"}
	wantEnv := map[string]any{"DATABASE_URL": "postgresql://app:${cred:DATABASE_URL_PASSWORD}@db.example:5432/app", "LOG_LEVEL": "debug"}
	wantCreds := map[string]string{"POSTGRES_PASSWORD": pw, "DATABASE_URL_PASSWORD": pw}

	client := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	entry := map[string]any{"command": exe, "args": []string{"demo-server", conn}, "env": map[string]string{"DATABASE_URL": conn, "LOG_LEVEL": "debug"}}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"postgres": entry}})
	if err := os.WriteFile(client, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"import", []string{"import", "--from", client, "--no-verify"}},
		{"add", []string{"add", "postgres", "--no-verify", "--env", "DATABASE_URL=" + conn, "--env", "LOG_LEVEL=debug", "--", exe, "demo-server", conn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			r := runHome(t, home, tc.args...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			b, _ := os.ReadFile(filepath.Join(home, "config.json"))
			var cfg struct {
				MCPServers map[string]struct {
					Args []any          `json:"args"`
					Env  map[string]any `json:"env"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatal(err)
			}
			s := cfg.MCPServers["postgres"]
			if diff := cmp.Diff(wantArgs, s.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantEnv, s.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantCreds, credsFile(t, home)); diff != "" {
				t.Errorf("creds.json (-want +got):\n%s", diff)
			}
			get := runHome(t, home, "get", "postgres")
			getJSON := runHome(t, home, "get", "postgres", "--json")
			noSecret(t, home, pw, r, get, getJSON)
		})
	}
}
