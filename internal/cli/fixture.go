package cli

import (
	"errors"
	"fmt"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/fixture"
)

func fixtureCommand(*run) *command {
	var addr string
	return &command{
		name: "conformance-fixture", args: "[--http ADDR]", hidden: true,
		summary: "serve the MCP conformance-suite fixture (for scripts/conformance-all.sh)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&addr, "http", "", "serve Streamable HTTP at `addr` instead of stdio")
		},
		run: func(r *run) int { return runFixture(r, addr) },
	}
}

func runFixture(r *run, addr string) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	var err error
	if addr != "" {
		var lc net.ListenConfig
		ln, lerr := lc.Listen(r.ctx, "tcp", addr)
		if lerr != nil {
			return r.usagef("conformance-fixture: %v", lerr)
		}
		err = fixture.Serve(r.ctx, ln, nil, func(a net.Addr) {
			fmt.Fprintf(r.env.Stderr, "conformance fixture: http://%s/mcp\n", a)
		})
	} else {
		err = fixture.ServeStdio(r.ctx, nil)
	}
	if err != nil && r.ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return r.failf(ExitUpstream, codeError, "conformance-fixture: %v", err)
	}
	return ExitOK
}
