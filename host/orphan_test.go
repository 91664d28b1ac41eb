//go:build linux

package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/testkit/proc"
)

// doomedVar makes the test binary a host process for
// TestOrphansDieWhenTheHostIsSIGKILLed to kill: it opens a host whose one
// server leaves a grandchild in its process group and another in a
// session of its own, with the variable's value as its LeftoverDir, says
// "ready" and whether its server has a PID namespace, and waits.
const doomedVar = "SWITCHBOARD_HOST_TEST_DOOMED"

// maybeRunDoomedHost is called from TestMain.
func maybeRunDoomedHost() {
	dir := os.Getenv(doomedVar)
	if dir == "" {
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
	// A store of its own: the user's home holds the launch pinned by an
	// earlier run, from another build of the test binary.
	opts := &host.Options{StopTimeout: 500 * time.Millisecond, LeftoverDir: dir, StateDir: filepath.Join(dir, "state")}
	if _, err := host.Open(context.Background(), cfg, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready", launcher.PIDNamespaces())
	select {}
}

// TestOrphansDieWhenTheHostIsSIGKILLed: a host process killed by SIGKILL
// runs no stop sequence; its server, the server's grandchild in its
// process group and the one that called setsid must die all the same.
// Where the kernel gives servers no PID namespace, the grandchild in the
// group dies at the next start, and the one that left it survives.
func TestOrphansDieWhenTheHostIsSIGKILLed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(self(t), "-test.run=^$")
	cmd.Env = append(os.Environ(), doomedVar+"="+dir)
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
	namespaces, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if !ok {
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
	if namespaces != "true" {
		// Without a namespace: the next start kills the group's survivors.
		cfg := parse(t, map[string]any{"next": child(t, testkit.ModeServer, nil)}, nil)
		h, err := host.Open(context.Background(), cfg, &host.Options{StopTimeout: 500 * time.Millisecond, LeftoverDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
		for i, p := range tree {
			if p.PGID == p.PID && len(p.Cmdline) > 0 && p.Cmdline[0] == "sleep" {
				t.Logf("without a PID namespace, a descendant that left the group survives: %v", p)
				syscall.Kill(p.PID, syscall.SIGKILL)
				tree = append(tree[:i:i], tree[i+1:]...)
				break
			}
		}
	}
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
