package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func (r *run) table(header string, rows [][]string) {
	w := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for _, row := range rows {
		for i := range row {
			row[i] = launcher.Escape(row[i])
		}
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	w.Flush()
}

// oneLine shortens untrusted text to one line for a table cell.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(firstLine(s)), " ")
	if utf8.RuneCountInString(s) > n {
		rs := []rune(s)
		s = string(rs[:n-1]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// counts says how many tools servers give and how many are built in,
// in the one wording every command uses: "36 tools from 3 servers, plus 5
// built-in" (the built-in part only when there are some).
func counts(tools, servers, builtin int) string {
	out := plural(tools, "tool") + " from " + plural(servers, "server")
	if builtin > 0 {
		out += fmt.Sprintf(", plus %d built-in", builtin)
	}
	return out
}

// plural is "1 tool", "2 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// hostCounts is counts of what h serves: the tools of its servers
// (deferred ones included, as 'switchboard tools' lists them), the
// servers that are not disabled, and the built-in tools that are on.
func hostCounts(h *host.Host) string {
	servers := 0
	for _, s := range h.Servers() {
		if s.State != host.StateDisabled {
			servers++
		}
	}
	builtin := 0
	for _, t := range h.View(host.Caller{}).Tools() {
		if t.Server == "" {
			builtin++
		}
	}
	return counts(len(h.Tools()), servers, builtin)
}

// printText prints v as JSON with --json, else text, escaped: what read
// and prompt print.
func (r *run) printText(v any, text string) int {
	if r.json {
		return r.printJSON(v)
	}
	fmt.Fprintln(r.env.Stdout, launcher.Escape(text))
	return ExitOK
}
