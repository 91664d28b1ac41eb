package cli

import "strings"

func promptCommand(*run) *command {
	return &command{
		name: "prompt", args: "ID [key=value ...]",
		summary:  "render a prompt with arguments",
		examples: []string{"switchboard prompt demo:review code='x := 1' language=go"},
		host:     &hostUse{},
		run:      runPrompt,
	}
}

func runPrompt(r *run) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	args := map[string]string{}
	for _, a := range r.args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return r.usagef("argument %q is not key=value", a)
		}
		args[k] = v
	}
	res, err := r.host.GetPrompt(r.ctx, r.args[0], args, nil)
	if err != nil {
		return r.fail(err)
	}
	return r.printText(res, res.Text)
}
