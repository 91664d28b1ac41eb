//go:build linux

package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// doomedVar makes the test binary a host process for
// TestOrphansDieWhenTheHostIsSIGKILLed to kill: it opens a host whose one
// server leaves a grandchild in its process group and another in a
// session of its own, says "ready" and waits.
const doomedVar = "SWITCHBOARD_HOST_TEST_DOOMED"

// maybeRunDoomedHost is called from TestMain.
func maybeRunDoomedHost() {
	if os.Getenv(doomedVar) == "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"spawner": map[string]any{
		"command": "sh",
		"args":    []string{"-c", `sleep 1000 & setsid sleep 1000 & exec "$0"`, self},
		"env":     testkit.ChildEnv(testkit.ModeServer),
	}}})
	cfg, err := config.Parse(data, "doomed.json", &config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := host.Open(context.Background(), cfg, &host.Options{StopTimeout: 500 * time.Millisecond}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// TestOrphansDieWhenTheHostIsSIGKILLed: a host process killed by SIGKILL
// runs no stop sequence; its server, the server's grandchild in its
// process group and the one that called setsid must die all the same.
func TestOrphansDieWhenTheHostIsSIGKILLed(t *testing.T) {
	cmd := exec.Command(self(t), "-test.run=^$")
	cmd.Env = append(os.Environ(), doomedVar+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tree []proc.Info
	t.Cleanup(func() {
		cmd.Process.Kill()
		for _, p := range tree {
			if proc.Alive(p.PID) {
				syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("host process said %q (%v)", line, err)
	}

	// Both sleeps, the one in the server's group and the one that left it.
	var inGroup, setsid bool
	if !proc.Eventually(10*time.Second, func() bool {
		tree = proc.Descendants(cmd.Process.Pid)
		inGroup, setsid = false, false
		for _, p := range tree {
			if len(p.Cmdline) > 0 && p.Cmdline[0] == "sleep" {
				if p.PGID == p.PID {
					setsid = true
				} else {
					inGroup = true
				}
			}
		}
		return inGroup && setsid
	}) {
		t.Fatalf("the server's descendants did not all start: %v", tree)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !proc.Eventually(20*time.Second, func() bool {
		for _, p := range tree {
			if proc.Alive(p.PID) {
				return false
			}
		}
		return true
	}) {
		var left []proc.Info
		for _, p := range tree {
			if info, err := proc.Get(p.PID); err == nil && !info.Zombie() {
				left = append(left, info)
			}
		}
		t.Fatalf("survived the host's SIGKILL: %v", left)
	}
}
