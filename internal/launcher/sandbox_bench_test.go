//go:build linux

package launcher

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/sandbox"
)

// benchModes are the sandbox settings compared: none, and the default
// sandbox (with its cgroup where this user may make one).
var benchModes = []struct {
	name     string
	settings *sandbox.Settings
}{{"off", nil}, {"on", &sandbox.Settings{}}}

func benchSpec(b *testing.B, settings *sandbox.Settings) Spec {
	spec := childSpec(b, "mcp")
	spec.Sandbox = settings
	spec.SwitchboardHome = b.TempDir()
	spec.CacheDir = b.TempDir()
	spec.StopStage = 5 * time.Second
	return spec
}

// BenchmarkSandboxStart: from Start to the MCP handshake done, then the
// stop: what a server's start-up costs with and without the sandbox.
func BenchmarkSandboxStart(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			spec := benchSpec(b, m.settings)
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0.0.1"}, nil)
			for b.Loop() {
				p, err := Start(spec)
				if err != nil {
					b.Fatal(err)
				}
				cs, err := client.Connect(context.Background(), p.Transport(), nil)
				if err != nil {
					b.Fatal(err)
				}
				cs.Close()
				p.Stop()
			}
		})
	}
}

// BenchmarkSandboxCall: one tool call to a running server, with and
// without the sandbox.
func BenchmarkSandboxCall(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			p, err := Start(benchSpec(b, m.settings))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Stop()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0.0.1"}, nil)
			cs, err := client.Connect(context.Background(), p.Transport(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "bench"}}
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
