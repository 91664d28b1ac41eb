package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// toolsFlags are the flags of tools.
type toolsFlags struct {
	raw     bool   // --raw: the definition as its server sent it
	format  string // --format: the tools as an LLM provider's API takes them
	refresh bool
}

func toolsCommand(*run) *command {
	f := &toolsFlags{}
	return &command{
		name: "tools", args: "[NAME | SERVER] [--raw] [--format FMT]",
		summary:  "list tools by model-facing name (SERVER: that server's only), or describe one (--raw: as its server sent it; --format: the model's tools for an LLM provider's API)",
		examples: []string{"switchboard tools", "switchboard tools demo", "switchboard tools demo__echo", "switchboard tools --format openai"},
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&f.raw, "raw", false, "show NAME's definition exactly as its server sent it, escaped (for review; never for a model)")
			fs.StringVar(&f.format, "format", "", "print the tools a model is given as `FMT`'s API takes them: "+strings.Join(host.Formats(), ", "))
			fs.BoolVar(&f.refresh, "refresh", false, refreshUsage)
		},
		host: &hostUse{findings: true, refresh: func() bool { return f.refresh }},
		run:  f.run,
		complete: func(r *run, args []string) []string {
			if len(args) > 0 {
				return nil
			}
			return append(r.configuredServers(), r.toolNames()...)
		},
	}
}

func (f *toolsFlags) run(r *run) int {
	if !r.wantArgs(0, 1) {
		return ExitUsage
	}
	if f.format != "" {
		if len(r.args) != 0 || f.raw {
			return r.usagef("tools --format lists every tool a model is given: no NAME, no --raw")
		}
		p, err := r.host.View(host.Caller{}).ProviderTools(f.format)
		if err != nil {
			return r.usagef("%v", err)
		}
		var out any = json.RawMessage(p.JSON())
		return r.printJSON(out)
	}
	if f.raw {
		if len(r.args) != 1 {
			return r.usagef("tools --raw needs a NAME (a model-facing name or <server>:<tool>)")
		}
		raw, err := hostlink.Of(r.host).RawTool(r.args[0])
		if server := startingServer(err); server != "" {
			if err = r.await(server); err == nil {
				raw, err = hostlink.Of(r.host).RawTool(r.args[0])
			}
		}
		if err != nil {
			return r.fail(err)
		}
		// Escaped: the point is to see what the server hid.
		if r.json {
			return r.printJSON(raw)
		}
		fmt.Fprintln(r.env.Stdout, launcher.Escape(string(raw)))
		return ExitOK
	}
	if len(r.args) == 1 {
		t, err := r.tool(r.args[0])
		if fault.CodeOf(err) == fault.CodeNotFound {
			return r.serverTools(r.args[0], err)
		}
		if err != nil {
			return r.fail(err)
		}
		if r.json {
			return r.printJSON(t)
		}
		fmt.Fprintf(r.env.Stdout, "name:        %s\nid:          %s\n", launcher.Escape(t.Name), launcher.Escape(t.ID))
		if t.Title != "" {
			fmt.Fprintf(r.env.Stdout, "title:       %s\n", launcher.Escape(t.Title))
		}
		fmt.Fprintf(r.env.Stdout, "description: %s\n", launcher.Escape(t.Description))
		fmt.Fprintf(r.env.Stdout, "input:       %s\n", launcher.Escape(indentJSON(t.InputSchema)))
		if len(t.OutputSchema) > 0 {
			fmt.Fprintf(r.env.Stdout, "output:      %s\n", launcher.Escape(indentJSON(t.OutputSchema)))
		}
		return ExitOK
	}
	tools := r.host.Tools()
	if r.json {
		return r.printJSON(tools)
	}
	r.toolTable(tools)
	fmt.Fprintln(r.env.Stdout, hostCounts(r.host))
	return ExitOK
}

// serverTools lists the tools of the configured server called name, for
// `tools NAME` when no tool is called name; notTool is why not. A name
// that is neither is a usage error that names the servers.
func (r *run) serverTools(name string, notTool error) int {
	var status *host.ServerStatus
	servers := r.host.Servers()
	names := make([]string, 0, len(servers))
	near, dist := "", 3
	for i, s := range servers {
		names = append(names, fmt.Sprintf("%q", s.Name))
		if s.Name == name {
			status = &servers[i]
		}
		if d := suggest.Distance(strings.ToLower(name), strings.ToLower(s.Name)); d < dist {
			near, dist = fmt.Sprintf(" (did you mean %q?)", s.Name), d
		}
	}
	if status == nil {
		f := failureOf(notTool, codeUsage)
		f.Message += fmt.Sprintf("; nor a server%s: the servers are %s", near, orDash(strings.Join(names, ", ")))
		return r.report(ExitUsage, f, "'switchboard tools SERVER' lists one server's tools")
	}
	tools := []host.Tool{}
	for _, t := range r.host.Tools() {
		if t.Server == name {
			tools = append(tools, t)
		}
	}
	if r.json {
		return r.printJSON(tools)
	}
	r.toolTable(tools)
	fmt.Fprintln(r.env.Stdout, counts(len(tools), 1, 0))
	if len(tools) == 0 && status.State != host.StateReady {
		fmt.Fprintf(r.env.Stderr, "server %q is %s: 'switchboard servers -v' says why\n", launcher.Escape(name), status.State)
	}
	return ExitOK
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "             ", "  ")
	return string(b)
}

// toolTable prints tools by name and description, marking deferred ones.
func (r *run) toolTable(tools []host.Tool) {
	var rows [][]string
	deferred := 0
	for _, t := range tools {
		name, desc := t.Name, oneLine(t.Description, 80)
		if t.Deferred {
			name += " (deferred)"
			deferred++
		}
		if t.Held {
			desc = host.HeldStatus + " (server " + t.Server + ")"
		}
		rows = append(rows, []string{name, desc})
	}
	r.table("NAME\tDESCRIPTION", rows)
	if deferred > 0 {
		fmt.Fprintf(r.env.Stdout, "%d deferred tool(s) are not listed to a model until %s finds them (context.deferTools)\n", deferred, host.ToolSearch)
	}
}
