package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// serversFlags are the flags of servers and of list, its other name.
type serversFlags struct {
	tokens  bool // --tokens: what the tool definitions cost
	check   bool // --check: exit 3 when a server does not work
	refresh bool
}

func serversCommand(r *run) *command {
	return serversNamed("servers", "[--tokens] [--check]", "list configured servers with state, protocol version and counts (-v: stderr tail; --tokens: what their tool definitions cost; --check: exit 3 when one does not work)",
		[]string{"switchboard servers", "switchboard servers -v", "switchboard servers --tokens"})
}

func listCommand(r *run) *command {
	return serversNamed("list", "[--check]", "the same as servers", []string{"switchboard list", "switchboard list --check"})
}

func serversNamed(name, args, summary string, examples []string) *command {
	f := &serversFlags{}
	return &command{
		name: name, args: args, summary: summary, examples: examples,
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&f.tokens, "tokens", false, "estimate the tokens each server's tool definitions take in a model's context")
			fs.BoolVar(&f.check, "check", false, "start every enabled server and discover it again; exit 3 when one does not work")
			fs.BoolVar(&f.refresh, "refresh", false, refreshUsage)
		},
		host: &hostUse{listing: true, findings: true, refresh: func() bool { return f.refresh || f.check }},
		live: func() liveFunc {
			if f.tokens || f.refresh || f.check {
				return nil // this process's own host
			}
			return f.onGateway
		},
		run: f.run,
	}
}

// refreshUsage is the usage of --refresh, which the commands that list
// or call tools have.
const refreshUsage = "discover every enabled server again first, ignoring the saved catalogues (starts the servers)"

// onGateway lists the servers of the gateway c.
func (f *serversFlags) onGateway(r *run, c *control.Client) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	st, err := c.Status(r.ctx)
	if err != nil {
		return r.fail(err)
	}
	servers := make([]host.ServerStatus, 0, len(st.Servers))
	enabled := 0
	for _, s := range st.Servers {
		servers = append(servers, s.ServerStatus)
		if s.State != host.StateDisabled {
			enabled++
		}
	}
	return r.showServers(servers, counts(st.Tools, enabled, st.Builtin), st.Config+" (gateway "+c.Base()+")", nil, f.check)
}

func (f *serversFlags) run(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	if f.tokens {
		return runTokens(r)
	}
	return r.showServers(r.host.Servers(), hostCounts(r.host), r.configInUse(), r.cfg, f.check)
}

// showServers prints servers (of this process's host, or of a running
// gateway's: cfg nil), with counts and the configuration in use; check
// exits 3 when one does not work.
func (r *run) showServers(servers []host.ServerStatus, counts, source string, cfg *config.Config, check bool) int {
	if r.json {
		if !r.verbose {
			for i := range servers {
				servers[i].Stderr = ""
			}
		}
		if code := r.printJSON(servers); code != ExitOK || !check {
			return code
		}
		return r.checkServers(servers)
	}
	var rows [][]string
	for _, s := range servers {
		state := string(s.State)
		if sc := cfg.Server(s.Name); sc != nil && sc.Unusable != nil && sc.Unusable.Code == config.CodeProjectUntrusted {
			state = "untrusted" // misconfigured, for want of trust-project
		}
		rows = append(rows, []string{s.Name, s.Transport, s.Trust, state, sandboxCell(s.Sandbox), orDash(s.ProtocolVersion),
			fmt.Sprint(s.Tools), fmt.Sprint(s.Resources), fmt.Sprint(s.Templates), fmt.Sprint(s.Prompts), fmt.Sprint(len(s.Findings)), orDash(oneLine(s.LastError, 60))})
	}
	r.table("NAME\tTRANSPORT\tTRUST\tSTATE\tSANDBOX\tPROTOCOL\tTOOLS\tRESOURCES\tTEMPLATES\tPROMPTS\tFINDINGS\tLAST ERROR", rows)
	fmt.Fprintf(r.env.Stdout, "%s\nconfig: %s\n", counts, launcher.Escape(source))
	if cfg != nil && cfg.Project != "" {
		fmt.Fprintf(r.env.Stdout, "project: %s\n", launcher.Escape(cfg.Project))
	}
	printAuth(r.env.Stdout, servers)
	for _, s := range servers {
		if len(s.Held) > 0 {
			fmt.Fprintf(r.env.Stdout, "%s: %d definition(s) changed since approved and held back: switchboard diff %s, then switchboard approve %s\n",
				launcher.Escape(s.Name), len(s.Held), launcher.Escape(s.Name), launcher.Escape(s.Name))
		}
		for _, t := range s.HeldInjection {
			id := launcher.Escape(s.Name + ":" + t)
			fmt.Fprintf(r.env.Stdout, "%s: held back, its metadata matches an injection pattern: switchboard diff %s, then switchboard approve %s\n", id, id, id)
		}
	}
	if r.verbose {
		for _, s := range servers {
			fmt.Fprintf(r.env.Stdout, "\n== %s\n", launcher.Escape(s.Name))
			if s.ServerInfo != nil {
				fmt.Fprintf(r.env.Stdout, "server: %s %s\n", launcher.Escape(s.ServerInfo.Name), launcher.Escape(s.ServerInfo.Version))
			}
			if s.LastError != "" {
				fmt.Fprintf(r.env.Stdout, "error: %s\n", launcher.Escape(s.LastError))
			}
			if s.Instructions != "" {
				fmt.Fprintf(r.env.Stdout, "instructions: %s\n", launcher.Escape(s.Instructions))
			}
			fmt.Fprintf(r.env.Stdout, "trust score: %.2f (0.5 is neutral)\n", s.TrustScore)
			printSandbox(r.env.Stdout, s.Sandbox)
			for _, t := range s.Held {
				fmt.Fprintf(r.env.Stdout, "held: %s\n", launcher.Escape(t))
			}
			for _, t := range s.HeldInjection {
				fmt.Fprintf(r.env.Stdout, "held (injection pattern): %s\n", launcher.Escape(t))
			}
			for _, f := range s.Findings {
				fmt.Fprintf(r.env.Stdout, "finding: %s\n", launcher.Escape(findingLine(f)))
			}
			if s.Stderr != "" {
				fmt.Fprintf(r.env.Stdout, "stderr (tail):\n%s\n", launcher.Escape(s.Stderr)) // escaped by the launcher too; Escape is idempotent
			}
		}
	}
	if check {
		return r.checkServers(servers)
	}
	return ExitOK
}

// runTokens estimates what each server's tool definitions cost in a
// model's context (internal/tokens: a tokenizer-free estimate calibrated on
// OpenAI's tokenizers), all of them and those listed to a model now (after
// deferral), with the built-in tools on a line of their own.
func runTokens(r *run) int {
	type row struct {
		Server string `json:"server"`
		Tools  int    `json:"tools"`
		Tokens int    `json:"tokens"`
		Listed int    `json:"listedTokens"`
	}
	listed := map[string]int{} // tokens of what the model is given, by server
	builtin := row{Server: "(switchboard built-in)"}
	for _, t := range r.host.View(host.Caller{}).Tools() {
		listed[t.Server] += t.Tokens()
		if t.Server == "" {
			builtin.Tools++
			builtin.Tokens += t.Tokens()
			builtin.Listed += t.Tokens()
		}
	}
	by := map[string]*row{}
	var rows []*row
	for _, s := range r.host.Servers() {
		by[s.Name] = &row{Server: s.Name}
		rows = append(rows, by[s.Name])
	}
	for _, t := range r.host.Tools() {
		rw := by[t.Server]
		if rw == nil {
			continue
		}
		rw.Tools++
		rw.Tokens += t.Tokens()
		rw.Listed = listed[t.Server]
	}
	if builtin.Tools > 0 {
		rows = append(rows, &builtin)
	}
	total := row{Server: "total"}
	for _, rw := range rows {
		total.Tools += rw.Tools
		total.Tokens += rw.Tokens
		total.Listed += rw.Listed
	}
	if r.json {
		return r.printJSON(struct {
			Servers []*row `json:"servers"`
			Total   row    `json:"total"`
		}{rows, total})
	}
	var table [][]string
	for _, rw := range append(rows, &total) {
		table = append(table, []string{rw.Server, fmt.Sprint(rw.Tools), fmt.Sprint(rw.Tokens), fmt.Sprint(rw.Listed)})
	}
	r.table("SERVER\tTOOLS\tTOKENS\tLISTED", table)
	fmt.Fprintln(r.env.Stdout, "TOKENS: all tool definitions; LISTED: what a model is given now (deferred tools are not, until tool_search finds them).\n"+
		"An estimate without a tokenizer, within about 5% of OpenAI's on tool definitions; other models' tokenizers differ.")
	return ExitOK
}

// sandboxCell is the SANDBOX column: the mode, and how many protections
// are missing here; "-" for a server that is not stdio.
func sandboxCell(st *host.SandboxStatus) string {
	switch {
	case st == nil:
		return "-"
	case strings.HasPrefix(st.Summary, "not sandboxed"):
		return "none"
	case len(st.Missing) > 0 && (st.Mode == "on" || st.Mode == "required"):
		return fmt.Sprintf("%s (%d missing)", st.Mode, len(st.Missing))
	}
	return st.Mode
}

// printSandbox prints a stdio server's sandbox: its summary, then each
// missing protection with its reason code.
func printSandbox(w io.Writer, st *host.SandboxStatus) {
	if st == nil {
		return
	}
	fmt.Fprintf(w, "%-13s %s\n", "sandbox:", launcher.Escape(st.Summary))
	for _, m := range st.Missing {
		fmt.Fprintf(w, "%-13s %s: %s (%s)\n", "  missing:", m.Protection, launcher.Escape(m.Detail), m.Code)
	}
}
