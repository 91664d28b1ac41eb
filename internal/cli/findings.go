package cli

import (
	"fmt"
	"log/slog"

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

// logFindings logs the findings of severity warn or above, for serve's
// start-up; the host logs the ones that appear later.
func logFindings(log *slog.Logger, fs []host.Finding) {
	for _, f := range fs {
		if f.Severity.AtLeast(host.SeverityWarn) {
			log.Warn("server metadata: "+f.Kind, "server", f.Server, "item", f.Item, "detail", f.Detail, "severity", f.Severity)
		}
	}
}

// findingLine is a finding as one line, its severity first.
func findingLine(f host.Finding) string {
	return "[" + string(f.Severity) + "] " + f.String()
}
