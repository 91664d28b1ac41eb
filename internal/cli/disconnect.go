package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func disconnectCommand(*run) *command {
	f := &connectFlags{}
	return &command{
		name: "disconnect", args: clientNames(),
		summary:  "take the gateway out of a client's configuration again, keeping later edits",
		examples: []string{"switchboard disconnect cursor"},
		flags: func(fs *pflag.FlagSet) {
			f.register(fs, "disconnect")
		},
		run:      f.disconnect,
		complete: firstClient,
	}
}

func (f *connectFlags) disconnect(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := f.clientFile(r)
	if !ok {
		return code
	}
	ch, err := clientconf.Disconnect(c, path, clientconf.Options{Force: f.force})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "disconnect: %v", err)
	}
	if r.json {
		return r.printJSON(map[string]any{"client": c.ID, "file": ch.Path, "removed": ch.After == nil, "restored": ch.Restored})
	}
	if ch.After == nil {
		fmt.Fprintf(r.env.Stdout, "%s: removed %s, which connect had created\n", c.Name, launcher.Escape(ch.Path))
		return ExitOK
	}
	fmt.Fprintf(r.env.Stdout, "%s: took the %q entry out of %s", c.Name, clientconf.DefaultName, launcher.Escape(ch.Path))
	if len(ch.Restored) > 0 {
		fmt.Fprintf(r.env.Stdout, " and put back %s", launcher.Escape(strings.Join(ch.Restored, ", ")))
	}
	fmt.Fprintln(r.env.Stdout)
	return ExitOK
}
