package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestCallInterrupted runs `switchboard call` as a real process, sends it
// SIGINT (or SIGTERM) once the upstream has the call, and checks that it
// exits 130 (143) at once, that the upstream was sent
// notifications/cancelled, and that no server process is left: for a
// tool that honours cancellation and for one that ignores it (its server
// does not exit when its stdin closes).
func TestCallInterrupted(t *testing.T) {
	// Serial: it bounds in wall-clock time how soon a real process exits.
	exe, _ := os.Executable()
	tests := []struct {
		name string
		args []string
		sig  syscall.Signal
		want int // exit code
		json bool
	}{
		{"slow", []string{"call", "kit:slow", "steps=20", "delay_ms=2000"}, syscall.SIGINT, 130, false},
		{"slow json", []string{"call", "kit:slow", "steps=20", "delay_ms=2000", "--json"}, syscall.SIGINT, 130, true},
		{"ignores cancellation", []string{"call", "kit:stubborn", "delay_ms=20000"}, syscall.SIGINT, 130, false},
		{"SIGTERM", []string{"call", "kit:slow", "steps=20", "delay_ms=2000"}, syscall.SIGTERM, 143, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := t.TempDir() + "/journal"
			path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
				"kit": map[string]any{"command": exe, "env": map[string]string{journalVar: j}},
			}})
			cmd := exec.Command(exe, append(tt.args, "--config", path, "--home", t.TempDir())...)
			cmd.Env = append(os.Environ(), "SWITCHBOARD_CLI_RUN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !proc.Eventually(20*time.Second, func() bool { return strings.Contains(journal(j), "call") }) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the call never reached the server\nstderr: %s", stderr.String())
			}
			servers := proc.Live(proc.Children(cmd.Process.Pid))
			if len(servers) == 0 {
				t.Fatal("no server process under the CLI")
			}
			start := time.Now()
			cmd.Process.Signal(tt.sig)
			err := cmd.Wait()
			elapsed := time.Since(start)
			code := cmd.ProcessState.ExitCode()
			if code != tt.want || elapsed > 1500*time.Millisecond {
				t.Errorf("exit %d after %v (%v), want %d within 1.5s\nstdout: %s\nstderr: %s", code, elapsed.Round(time.Millisecond), err, tt.want, stdout.String(), stderr.String())
			}
			if tt.json {
				if !strings.Contains(stdout.String(), `"code": "interrupted"`) {
					t.Errorf("--json: stdout %s", stdout.String())
				}
			} else if !strings.Contains(stderr.String(), "switchboard: interrupted") {
				t.Errorf("stderr %s", stderr.String())
			}
			if !proc.Eventually(2*time.Second, func() bool { return strings.Contains(journal(j), "cancelled") }) {
				t.Errorf("the server was not sent notifications/cancelled; its journal:\n%s", journal(j))
			}
			for _, s := range servers {
				if proc.Alive(s.PID) {
					t.Errorf("server process left running: %v", s)
					syscall.Kill(-s.PGID, syscall.SIGKILL)
				}
			}
		})
	}
}
