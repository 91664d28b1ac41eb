package cli

import (
	"fmt"
	"net"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/demo"
)

func demoServerCommand(*run) *command {
	var addr string
	return &command{
		name: "demo-server", args: "[--http ADDR]",
		summary:  "serve the demo MCP server on stdio, or Streamable HTTP at ADDR",
		examples: []string{"switchboard demo-server", "switchboard demo-server --http 127.0.0.1:9001"},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&addr, "http", "", "serve Streamable HTTP at `addr` instead of stdio")
		},
		run: func(r *run) int { return runDemoServer(r, addr) },
	}
}

func runDemoServer(r *run, addr string) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	ctx := r.ctx
	var err error
	if addr != "" {
		err = demo.ServeHTTP(ctx, addr, r.env.Version, func(a net.Addr) {
			fmt.Fprintf(r.env.Stderr, "demo server: http://%s/mcp\n", a)
		})
	} else {
		err = demo.ServeStdio(ctx, r.env.Version)
	}
	if err != nil && ctx.Err() == nil {
		return r.failf(ExitUpstream, codeError, "demo server: %v", err)
	}
	return ExitOK
}
