package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func getCommand(*run) *command {
	return &command{
		name: "get", args: "NAME",
		summary:  "show one server: its configuration (secrets masked), state, protocol, capabilities, tools, findings, last error, stderr",
		examples: []string{"switchboard get demo", "switchboard get demo --json"},
		// It touches its one server: the others are not started, and
		// not warned about.
		host:     &hostUse{noStart: true, ownServer: true},
		run:      runGet,
		complete: firstServer,
	}
}

// serverDetail is what get prints with --json.
type serverDetail struct {
	Config *config.Server    `json:"config"` // as written, credentials and literal secrets masked
	Status host.ServerStatus `json:"status"`
	Tools  []string          `json:"tools"`
	Caps   map[string]bool   `json:"capabilities"`
}

// runGet shows one server: its configuration (secrets masked), state,
// protocol, capabilities, tools, findings, last error and stderr tail.
func runGet(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	name := r.args[0]
	sc := r.cfg.Server(name)
	if sc == nil {
		return r.usagef("no server %q in %s%s", name, r.configInUse(), suggestServer(r.cfg, name))
	}
	if sc.Enabled && sc.Unusable == nil {
		// Started and discovered now, so that its protocol and stderr
		// are there to show; a failure is in its state.
		hostlink.Of(r.host).Refresh(r.ctx, name) //nolint:errcheck // see above
	}
	var st host.ServerStatus
	for _, s := range r.host.Servers() {
		if s.Name == name {
			st = s
		}
	}
	d := serverDetail{Config: sc.Redacted(), Status: st, Tools: []string{}, Caps: map[string]bool{
		"tools": st.Tools > 0, "resources": st.Resources > 0 || st.Templates > 0, "prompts": st.Prompts > 0,
	}}
	for _, t := range r.host.Tools() {
		if t.Server == name {
			d.Tools = append(d.Tools, t.Name)
		}
	}
	if r.json {
		return r.printJSON(d)
	}
	w := r.env.Stdout
	p := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-13s %s\n", k+":", launcher.Escape(v))
		}
	}
	c := d.Config
	p("name", c.Name)
	p("transport", string(c.Transport))
	p("auth", st.Auth)
	p("command", c.Command)
	if len(c.Args) > 0 {
		p("args", shellQuote(c.Args))
	}
	for _, k := range sortedKeys(c.Env) {
		p("env", k+"="+c.Env[k])
	}
	p("url", c.URL)
	for _, k := range sortedKeys(c.Headers) {
		p("header", k+": "+c.Headers[k])
	}
	p("bearer env", c.BearerTokenEnvVar)
	p("enabled", fmt.Sprint(c.Enabled))
	p("trust", string(c.Trust))
	p("state", string(st.State))
	printSandbox(w, st.Sandbox)
	p("protocol", st.ProtocolVersion)
	if st.ServerInfo != nil {
		p("server", st.ServerInfo.Name+" "+st.ServerInfo.Version)
	}
	p("capabilities", fmt.Sprintf("%d tools, %d resources, %d templates, %d prompts", st.Tools, st.Resources, st.Templates, st.Prompts))
	if len(d.Tools) > 0 {
		p("tools", strings.Join(d.Tools, ", "))
	}
	for _, f := range st.Findings {
		p("finding", findingLine(f))
	}
	p("last error", st.LastError)
	if st.Stderr != "" {
		fmt.Fprintf(w, "stderr (tail):\n%s\n", launcher.Escape(st.Stderr))
	}
	return ExitOK
}

// sortedKeys returns m's keys, sorted; never nil (a JSON list).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shellQuote writes args as a shell would read them back.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
