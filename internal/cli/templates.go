package cli

import "github.com/switchboard-mcp/switchboard/host"

func templatesCommand(*run) *command {
	return &command{
		name: "templates", summary: "list resource templates",
		examples: []string{"switchboard templates"},
		host:     &hostUse{},
		run:      runTemplates,
	}
}

func runTemplates(r *run) int {
	res := r.host.View(host.Caller{}).Templates()
	rows := make([][]string, 0, len(res))
	for _, x := range res {
		rows = append(rows, []string{x.ID, orDash(x.MIMEType), oneLine(orDash(x.Description), 60)})
	}
	return r.listing(res, "ID\tMIME TYPE\tDESCRIPTION", rows)
}
