package cli

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/host"
)

func promptsCommand(*run) *command {
	return &command{
		name: "prompts", summary: "list prompts by ID (<server>:<prompt>)",
		examples: []string{"switchboard prompts"},
		host:     &hostUse{},
		run:      runPrompts,
	}
}

func runPrompts(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	res := r.host.View(host.Caller{}).Prompts()
	if r.json {
		return r.printJSON(res)
	}
	var rows [][]string
	for _, p := range res {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name)
			} else {
				args = append(args, "["+a.Name+"]")
			}
		}
		rows = append(rows, []string{p.ID, orDash(strings.Join(args, " ")), oneLine(orDash(p.Description), 60)})
	}
	r.table("ID\tARGUMENTS\tDESCRIPTION", rows)
	return ExitOK
}
