package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// build builds the example program.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weather")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// use calls the example's tool, reads its resources and gets its prompt,
// as any MCP client would.
func use(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_forecast", Arguments: map[string]any{"city": "Lisbon", "days": 2}})
	if err != nil || res.IsError {
		t.Fatalf("get_forecast: %+v %v", res, err)
	}
	if got := res.StructuredContent.(map[string]any); got["city"] != "Lisbon" || len(got["highC"].([]any)) != 2 {
		t.Errorf("get_forecast: %v", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_forecast", Arguments: map[string]any{"city": "Lisbon", "days": 9}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "1 to 7") {
		t.Errorf("a bad day count: %+v %v", res, err)
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weather://cities/Porto"})
	if err != nil || r.Contents[0].Text != "Porto: a city with weather." {
		t.Errorf("read: %+v %v", r, err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan_trip", Arguments: map[string]string{"city": "Porto"}})
	if err != nil || p.Description != "Plan a trip to Porto" {
		t.Errorf("prompt: %+v %v", p, err)
	}
}

func client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "example-test", Version: "1"}, nil)
}

// TestStdio launches the program as a client that runs its servers would.
func TestStdio(t *testing.T) {
	bin := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client().Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	use(t, cs)
}

// TestHTTP serves the program on a loopback port and uses it in both eras.
func TestHTTP(t *testing.T) {
	bin := build(t)
	cmd := exec.Command(bin, "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt) //nolint:errcheck // it may be gone
		cmd.Wait()                       //nolint:errcheck // interrupted
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "serving ")
	if err != nil || !ok {
		t.Fatalf("the program said %q, %v", line, err)
	}
	for _, version := range []string{"", "2025-11-25"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			cancel()
			t.Fatalf("%q: %v", version, err)
		}
		use(t, cs)
		cs.Close()
		cancel()
	}
}
