package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

func addJSONCommand(r *run) *command {
	return &command{
		name: "add-json", args: "NAME JSON",
		summary:  "add a server from its JSON configuration, after checking that it starts",
		examples: []string{`switchboard add-json demo2 '{"command": "switchboard", "args": ["demo-server"]}'`},
		flags: func(fs *pflag.FlagSet) {
			r.edit.scopeFlag(fs)
			r.edit.noVerifyFlag(fs)
		},
		run: runAddJSON,
	}
}

// runAddJSON adds a server from its JSON configuration:
// switchboard add-json NAME JSON.
func runAddJSON(r *run) int {
	if !r.wantArgs(2, 2) {
		return ExitUsage
	}
	arg := []byte(r.args[1])
	if err := jsonSyntax(arg); err != nil {
		return r.usagef("add-json: the JSON argument %v", err)
	}
	obj, err := confedit.ParseObject(arg)
	if err != nil || len(strings.TrimSpace(r.args[1])) == 0 {
		return r.usagef("add-json takes the server's configuration as one JSON object")
	}
	e := &entry{name: r.args[0], obj: obj, creds: map[string]string{}}
	for _, move := range []func() error{e.moveEnvSecrets, e.moveArgSecrets, func() error { return e.moveSecrets("headers", "header") }} {
		if err := move(); err != nil {
			return r.usagef("%v", err)
		}
	}
	if err := r.checkArgument(e); err != nil {
		return r.usagef("%v", err)
	}
	return r.save(e)
}
