package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleSessionMemory measures what an idle legacy session costs a
// running gateway: `serve` in a child process, N sessions opened by raw
// initialize requests and left idle, its resident set before and after.
// It runs only when SWITCHBOARD_MEASURE_SESSIONS names N (the figure in
// docs/PERFORMANCE.md).
func TestIdleSessionMemory(t *testing.T) {
	// Serial: it measures a process's memory.
	n, _ := strconv.Atoi(os.Getenv("SWITCHBOARD_MEASURE_SESSIONS"))
	if n <= 0 {
		t.Skip("set SWITCHBOARD_MEASURE_SESSIONS=N to measure")
	}
	const token = "measure-token-0123456789abcdefghij"
	endpoint, _, pid, _ := startServeProc(t, []string{"MEASURE_TOKEN=" + token},
		"--token-env", "MEASURE_TOKEN", "--max-sessions", strconv.Itoa(n+10), "--max-sessions-per-client", strconv.Itoa(n+10))
	open := func() {
		t.Helper()
		const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %s", resp.Status)
		}
	}
	for range 50 { // the first sessions' one-time costs
		open()
	}
	before := rss(t, pid)
	start := time.Now()
	for range n {
		open()
	}
	took := time.Since(start)
	after := rss(t, pid)
	t.Logf("%d idle sessions in %v: RSS %.1f → %.1f MiB, %.1f KiB per session",
		n, took.Round(time.Millisecond), float64(before)/(1<<20), float64(after)/(1<<20), float64(after-before)/float64(n)/1024)
}

// rss returns the resident set of process pid, in bytes.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
