package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestKilledAddLeavesNoCredential: an add killed after it kept the
// server's secret in creds.json and before it saved the server (here:
// while it waits for the configuration's lock) leaves a credential
// nothing refers to; the next edit deletes it and says so, and keeps the
// credentials the configuration refers to.
func TestKilledAddLeavesNoCredential(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	home := t.TempDir()
	const secret = "ghp_killedAdd0123456789abcdefghij"
	if r := runHome(t, home, "add", "kept", "--env", "KEPT_TOKEN=kept-secret-value", "--", exe, "demo-server"); r.code != 0 {
		t.Fatalf("add kept: exit %d\n%s", r.code, r.stderr)
	}
	unlock, err := confedit.Lock(filepath.Join(home, "config.json"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "add", "gh", "--env", "GITHUB_TOKEN="+secret, "--", exe, "demo-server")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1", "SWITCHBOARD_HOME="+home)
	if err := cmd.Start(); err != nil {
		unlock()
		t.Fatal(err)
	}
	kept := proc.Eventually(60*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(home, "creds.json"))
		return strings.Contains(string(b), "GITHUB_TOKEN")
	})
	cmd.Process.Kill()
	cmd.Wait() //nolint:errcheck // killed
	unlock()
	if !kept {
		t.Fatal("add never kept the secret in creds.json")
	}
	if c := credsFile(t, home); c["GITHUB_TOKEN"] != secret {
		t.Fatalf("the killed add left creds.json %v", mapKeys(c))
	}

	r := runHome(t, home, "add", "other", "--", exe, "demo-server")
	if r.code != 0 || !strings.Contains(r.stderr, "removed from creds.json what an interrupted command added for a server it never saved: GITHUB_TOKEN") {
		t.Errorf("the next add: exit %d\n%s", r.code, r.stderr)
	}
	c := credsFile(t, home)
	if _, ok := c["GITHUB_TOKEN"]; ok || c["KEPT_TOKEN"] != "kept-secret-value" {
		t.Errorf("creds.json after the next add: %v", mapKeys(c))
	}
	if left, _ := filepath.Glob(filepath.Join(home, "creds.json.pending-*")); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
	noSecret(t, home, secret, r)
}
