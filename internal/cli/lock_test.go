package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/cli"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestLockVerifyServe: lock writes a signed lockfile; verify finds what
// runs equal to it, refuses a tampered one, and names each difference
// (a server added, a launch changed, a tool changed); serve --lock holds
// the changed tool and the unlocked server, and refuses a bad signature.
func TestLockVerifyServe(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	dir := t.TempDir()
	home := t.TempDir()
	sleeperEnv := testkit.ChildEnv(testkit.ModeSleeper)
	sleeperEnv[testkit.MarkVar] = filepath.Join(dir, "starts")
	sleeper := map[string]any{"command": exe, "env": sleeperEnv}
	kit := testServer(testkit.ModeServer)
	path := writeConfig(t, map[string]any{"mcpServers": map[string]any{"sleeper": sleeper, "kit": kit}})
	cmd := func(args ...string) result {
		t.Helper()
		return runWith(t, cli.Env{Args: append(args, "--config", path), LookupEnv: homeEnv(home), Version: "test"})
	}
	key, lock := filepath.Join(dir, "team.key"), filepath.Join(dir, "switchboard.lock")
	if r := cmd("lock", "--new-key", key); r.code != 0 {
		t.Fatalf("lock --new-key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v, %v; want mode 0600", fi, err)
	}
	if r := cmd("lock", "--new-key", key); r.code == 0 {
		t.Error("lock --new-key overwrote a key")
	}
	if r := cmd("lock", "--key", key, "--out", lock); r.code != 0 {
		t.Fatalf("lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(lock)
	if !strings.Contains(string(b), `"echo": "sha256:`) || !strings.Contains(string(b), `"signature"`) {
		t.Fatalf("lockfile:\n%s", b)
	}
	if r := cmd("verify", "--lock", lock, "--pub", key+".pub"); r.code != 0 || !strings.Contains(r.stdout, "matches") {
		t.Fatalf("verify, unchanged: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Tampering is caught before anything is compared.
	tampered := filepath.Join(dir, "tampered.lock")
	os.WriteFile(tampered, []byte(strings.Replace(string(b), `"echo": "sha256:`, `"echo": "sha256:0`, 1)), 0o644)
	if r := cmd("verify", "--lock", tampered, "--pub", key+".pub"); r.code == 0 || !strings.Contains(r.stderr, "signature does not verify") {
		t.Errorf("verify, tampered: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The sleeper's second start changes its echo tool; a server is
	// added; kit's launch changes.
	kit2 := testServer(testkit.ModeServer)
	kit2["env"].(map[string]string)["EXTRA"] = "1"
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"sleeper": sleeper, "kit": kit2, "added": testServer(testkit.ModeServer)}})
	os.WriteFile(path, data, 0o600)
	// Their launches are approved in the store: verify compares what runs
	// with the lockfile, whatever the store approves.
	cmd("approve", "kit")
	cmd("approve", "added")
	r := cmd("verify", "--lock", lock, "--pub", key+".pub", "--refresh", "--json")
	var out struct {
		Equal       bool
		Differences []struct{ Server, Kind, Item string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 1 || out.Equal {
		t.Fatalf("verify, changed: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var got []string
	for _, d := range out.Differences {
		got = append(got, d.Server+" "+d.Kind+" "+d.Item)
	}
	for _, want := range []string{"sleeper tool_changed echo", "kit launch_changed ", "added server_extra "} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("verify --json lacks %q: %q", want, got)
		}
	}
	if r := cmd("verify", "--lock", lock, "--pub", key+".pub"); r.code != 1 || !strings.Contains(r.stdout, `server "added": server extra`) {
		t.Errorf("verify, changed, for people: exit %d\n%s", r.code, r.stdout)
	}

	// serve --lock: the changed tool and the servers that differ are held.
	g := startGateway(t, nil, "", "--home", home, "--config", path, "--lock", lock, "--pub", key+".pub")
	cs := g.session(t, nil)
	ctx := t.Context()
	if !proc.Eventually(15*time.Second, func() bool { return lists(ctx, cs, "sleeper__slow") }) {
		t.Fatalf("sleeper__slow not listed:\n%s", g.stderr.String())
	}
	for _, held := range []string{"sleeper__echo", "kit__echo", "added__echo"} {
		if lists(ctx, cs, held) {
			t.Errorf("serve --lock lists %s, which differs from the lockfile", held)
		}
	}
	g.stop()

	if r := cmd("serve", "--http", "127.0.0.1:0", "--lock", tampered, "--pub", key+".pub"); r.code == 0 || !strings.Contains(r.stderr, "signature does not verify") {
		t.Errorf("serve --lock with a tampered lockfile: exit %d\n%s", r.code, r.stderr)
	}
}
