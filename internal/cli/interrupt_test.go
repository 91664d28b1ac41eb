package cli_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// TestCallInterrupted runs `switchboard call` as a real process, sends it
// SIGINT once the upstream has the call, and checks that it exits 130 at
// once, that the upstream was sent notifications/cancelled, and that no
// server process is left: for a tool that honours cancellation and for
// one that ignores it (its server does not exit when its stdin closes).
func TestCallInterrupted(t *testing.T) {
	exe, _ := os.Executable()
	httpJournal := t.TempDir() + "/http-journal"
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return journalled(httpJournal) }, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	tests := []struct {
		name    string
		args    []string
		journal string // "" for the stdio server's own journal
		json    bool
	}{
		{"stdio slow", []string{"call", "kit:slow", "steps=20", "delay_ms=2000"}, "", false},
		{"stdio slow json", []string{"call", "kit:slow", "steps=20", "delay_ms=2000", "--json"}, "", true},
		{"stdio ignores cancellation", []string{"call", "kit:stubborn", "delay_ms=20000"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdioJournal := t.TempDir() + "/journal"
			os.Remove(httpJournal)
			path := writeConfig(t, map[string]any{"mcpServers": map[string]any{
				"kit": map[string]any{"command": exe, "env": map[string]string{journalVar: stdioJournal}},
				"web": map[string]any{"url": "http://" + ln.Addr().String() + "/mcp", "trust": "trusted"},
			}})
			j := tt.journal
			if j == "" {
				j = stdioJournal
			}
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
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			elapsed := time.Since(start)
			code := cmd.ProcessState.ExitCode()
			if code != 130 || elapsed > 1500*time.Millisecond {
				t.Errorf("exit %d after %v (%v), want 130 within 1.5s\nstdout: %s\nstderr: %s", code, elapsed.Round(time.Millisecond), err, stdout.String(), stderr.String())
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
