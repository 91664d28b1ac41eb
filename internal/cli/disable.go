package cli

func disableCommand(r *run) *command {
	return &command{
		name: "disable", args: "NAME",
		summary:  "disable a server",
		examples: []string{"switchboard disable files"},
		flags:    r.edit.scopeFlag,
		run:      func(r *run) int { return r.setEnabled(false) },
		complete: firstServer,
	}
}
