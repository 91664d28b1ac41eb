package cli

import (
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

func enableCommand(r *run) *command {
	return &command{
		name: "enable", args: "NAME",
		summary:  "enable a server, after checking that it starts",
		examples: []string{"switchboard enable files"},
		flags: func(fs *pflag.FlagSet) {
			r.edit.scopeFlag(fs)
			r.edit.noVerifyFlag(fs)
		},
		run:      func(r *run) int { return r.setEnabled(true) },
		complete: firstServer,
	}
}

// setEnabled sets a server's enabled state in its JSON object.
func setEnabled(obj *confedit.Object, on bool) {
	if _, ok := obj.Get("disabled"); ok {
		obj.SetValue("disabled", !on)
		if _, ok := obj.Get("enabled"); !ok {
			return
		}
	}
	obj.SetValue("enabled", on)
}
