package cli

func readCommand(*run) *command {
	return &command{
		name: "read", args: "ID",
		summary:  "read a resource: <server>:<uri> or a listed URI, also a URI filled in from a template",
		examples: []string{"switchboard read demo:demo://readme"},
		host:     &hostUse{},
		run:      runRead,
	}
}

func runRead(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	res, err := r.host.ReadResource(r.ctx, r.args[0])
	if err != nil {
		return r.fail(err)
	}
	return r.printText(res, res.Text)
}
