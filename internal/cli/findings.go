package cli

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// warnFindings prints the servers' findings of severity warn or above on
// stderr, once per command (tools, call, servers, without -v: then the
// host logs them), escaped: they quote what servers sent. Info findings
// wait for servers -v and --json.
func (r *run) warnFindings() {
	for _, f := range r.host.Findings() {
		if f.Severity.AtLeast(host.SeverityWarn) {
			fmt.Fprintf(r.env.Stderr, "warning: %s\n", launcher.Escape(findingLine(f)))
		}
	}
}

// findingLine is a finding as one line, its severity first.
func findingLine(f host.Finding) string {
	return "[" + string(f.Severity) + "] " + f.String()
}
