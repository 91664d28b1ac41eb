package cli

import "github.com/switchboard-mcp/switchboard/host"

func resourcesCommand(*run) *command {
	return &command{
		name: "resources", summary: "list resources by ID (<server>:<uri>)",
		examples: []string{"switchboard resources"},
		host:     &hostUse{},
		run:      runResources,
	}
}

func runResources(r *run) int {
	res := r.host.View(host.Caller{}).Resources()
	rows := make([][]string, 0, len(res))
	for _, x := range res {
		rows = append(rows, []string{x.ID, orDash(x.MIMEType), oneLine(orDash(x.Description), 60)})
	}
	return r.listing(res, "ID\tMIME TYPE\tDESCRIPTION", rows)
}

// listing prints a listing command's result: v as JSON with --json, else
// the rows as a table.
func (r *run) listing(v any, header string, rows [][]string) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	if r.json {
		return r.printJSON(v)
	}
	r.table(header, rows)
	return ExitOK
}
