package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runScript runs scripts/run.sh with its home at home until the gateway
// prints its token, then interrupts it; it returns the banner's token
// line.
func runScript(t *testing.T, home string) string {
	t.Helper()
	// The script's go build uses the user's build cache, not one under
	// this run's $XDG_CACHE_HOME, where it would compile every package
	// again, the standard library included.
	goenv := exec.Command("go", "env", "GOCACHE")
	goenv.Env = append(os.Environ(), "XDG_CACHE_HOME="+userCacheHome)
	gocache, err := goenv.Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cmd := exec.Command("bash", "../../scripts/run.sh", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SWITCHBOARD_DEMO_HOME="+home, "GOCACHE="+strings.TrimSpace(string(gocache)))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		line := ""
		for sc.Scan() {
			if strings.Contains(sc.Text(), "token:") && line == "" {
				line = sc.Text()
				found <- line
			}
		}
		close(found)
	}()
	var line string
	select {
	case line = <-found:
	case <-time.After(3 * time.Minute): // the build comes first
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	cmd.Wait()
	if line == "" {
		t.Fatal("scripts/run.sh printed no token")
	}
	return line
}

// TestRunScriptKeepsItsHome: the main job keeps its home where the next
// run finds it: the token file it names is there after it stopped, and
// the next run serves with the same token.
func TestRunScriptKeepsItsHome(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	home := filepath.Join(t.TempDir(), "demo")
	first := runScript(t, home)
	kept := regexp.MustCompile(`kept in (\S+) (for the next starts|since an earlier start)`)
	m := kept.FindStringSubmatch(first)
	if m == nil || m[2] != "for the next starts" {
		t.Fatalf("first run: %s", first)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the token file the first run kept for the next starts is gone: %v", err)
	}
	second := runScript(t, home)
	token := func(line string) string { return line[strings.LastIndex(line, " ")+1:] }
	if m2 := kept.FindStringSubmatch(second); m2 == nil || m2[1] != m[1] || m2[2] != "since an earlier start" || token(second) != token(first) {
		t.Errorf("the second run did not serve with the first run's token from %s:\n%s", m[1], second)
	}
}
