package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
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
//
// At once: the calls would run for ten minutes or more and the exit is
// awaited for one, so only a CLI that does not wait for its call exits in
// time; and a server that outlives its closed stdin, as the one busy with a
// call it ignores the cancellation of does, is sent SIGTERM after a
// one-shot stop stage of under a second (the -v log says how long it
// waited), not the 5 s a server of `serve` gets.
func TestCallInterrupted(t *testing.T) {
	// Serial: the server that ignores the cancellation has a one-shot
	// stop stage (0.4 s) to read it before it is sent SIGTERM.
	exe, _ := os.Executable()
	tests := []struct {
		name  string
		args  []string
		sig   syscall.Signal
		want  int // exit code
		json  bool
		stage bool // the server surely outlives its stdin: it is sent SIGTERM after a stop stage
	}{
		{"slow", []string{"call", "kit:slow", "steps=20", "delay_ms=60000"}, syscall.SIGINT, 130, false, false},
		{"slow json", []string{"call", "kit:slow", "steps=20", "delay_ms=60000", "--json"}, syscall.SIGINT, 130, true, false},
		{"ignores cancellation", []string{"call", "kit:stubborn", "delay_ms=600000"}, syscall.SIGINT, 130, false, true},
		{"SIGTERM", []string{"call", "kit:slow", "steps=20", "delay_ms=60000"}, syscall.SIGTERM, 143, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := t.TempDir() + "/journal"
			path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
				"kit": map[string]any{"command": exe, "env": map[string]string{journalVar: j}},
			}})
			cmd := exec.Command(exe, append(tt.args, "-v", "--config", path, "--home", t.TempDir())...)
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
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			start := time.Now()
			cmd.Process.Signal(tt.sig)
			var err error
			select {
			case err = <-exited:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("still running a minute after %v: it waits for its call\nstdout: %s\nstderr: %s", tt.sig, stdout.String(), stderr.String())
			}
			t.Logf("exited %v after %v", time.Since(start).Round(time.Millisecond), tt.sig)
			if code := cmd.ProcessState.ExitCode(); code != tt.want {
				t.Errorf("exit %d (%v), want %d\nstdout: %s\nstderr: %s", code, err, tt.want, stdout.String(), stderr.String())
			}
			stages := sigtermAfterRE.FindAllStringSubmatch(stderr.String(), -1)
			if tt.stage && len(stages) == 0 {
				t.Errorf("the server that outlives its stdin was not sent SIGTERM:\n%s", stderr.String())
			}
			for _, m := range stages {
				if waited, err := time.ParseDuration(m[1]); err != nil || waited >= time.Second {
					t.Errorf("a server was sent SIGTERM after a stop stage of %s, want under a second:\n%s", m[1], stderr.String())
				}
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

// sigtermAfterRE finds, in a -v log, the stop stage a server that outlived
// its closed stdin was given before SIGTERM.
var sigtermAfterRE = regexp.MustCompile(`sending SIGTERM[^\n]* waited=(\S+)`)
