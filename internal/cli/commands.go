package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/demo"
	"github.com/switchboard-mcp/switchboard/internal/fixture"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
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

func runServers(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	if r.tokens {
		return runTokens(r)
	}
	return r.showServers(r.host.Servers(), hostCounts(r.host), r.configInUse(), r.cfg)
}

// showServers prints servers (of this process's host, or of a running
// gateway's: cfg nil), with counts and the configuration in use.
func (r *run) showServers(servers []host.ServerStatus, counts, source string, cfg *config.Config) int {
	if r.json {
		if !r.verbose {
			for i := range servers {
				servers[i].Stderr = ""
			}
		}
		if code := r.printJSON(servers); code != ExitOK || !r.edit.check {
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
		rows = append(rows, []string{s.Name, s.Transport, s.Trust, state, orDash(s.ProtocolVersion),
			fmt.Sprint(s.Tools), fmt.Sprint(s.Resources), fmt.Sprint(s.Templates), fmt.Sprint(s.Prompts), fmt.Sprint(len(s.Findings)), orDash(oneLine(s.LastError, 60))})
	}
	r.table("NAME\tTRANSPORT\tTRUST\tSTATE\tPROTOCOL\tTOOLS\tRESOURCES\tTEMPLATES\tPROMPTS\tFINDINGS\tLAST ERROR", rows)
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
	if r.edit.check {
		return r.checkServers(servers)
	}
	return ExitOK
}

func runTools(r *run) int {
	if !r.wantArgs(0, 1) {
		return ExitUsage
	}
	if r.format != "" {
		if len(r.args) != 0 || r.raw {
			return r.usagef("tools --format lists every tool a model is given: no NAME, no --raw")
		}
		p, err := r.host.ProviderTools(r.format)
		if err != nil {
			return r.usagef("%v", err)
		}
		var out any = json.RawMessage(p.JSON())
		return r.printJSON(out)
	}
	if r.raw {
		if len(r.args) != 1 {
			return r.usagef("tools --raw needs a NAME (a model-facing name or <server>:<tool>)")
		}
		raw, err := r.host.RawTool(r.args[0])
		if server := r.host.Starting(err); server != "" {
			if err = r.await(server); err == nil {
				raw, err = r.host.RawTool(r.args[0])
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

func runCall(r *run) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	tool, err := r.tool(r.args[0])
	if c := fault.CodeOf(err); c == fault.CodeDefinitionChanged || c == fault.CodeHeldInjection {
		// Asked for all the same, without the schema that is held back
		// with it: the host refuses the call and logs the refusal, as it
		// does for the gateway's clients.
		tool, err = host.Tool{Name: r.args[0]}, nil
	}
	if err != nil {
		return r.fail(err)
	}
	args, err := callArgs(r.args[1:], tool.InputSchema, r.env.Stdin)
	if err != nil {
		return r.usagef("%v", err)
	}
	check := checkArgs(args, tool.InputSchema)
	for _, w := range check.warnings {
		fmt.Fprintf(r.env.Stderr, "warning: %s: %s\n", launcher.Escape(tool.Name), launcher.Escape(w))
	}
	if len(check.problems) > 0 {
		return r.report(ExitUsage, failure{Code: string(fault.CodeInvalidInput), Server: tool.Server, Message: fmt.Sprintf("arguments of %s do not match its input schema: %s", tool.Name, strings.Join(check.problems, "; "))},
			fmt.Sprintf("'switchboard tools %s' shows the schema", tool.Name))
	}
	// A person reads the result: it is printed whole, never spilled.
	opts := &host.CallOptions{Confirm: r.confirm, KeepWhole: true}
	start := time.Now()
	if r.verbose {
		opts.Progress = func(p host.Progress) {
			total := ""
			if p.Total > 0 {
				total = fmt.Sprintf("/%g", p.Total)
			}
			fmt.Fprintf(r.env.Stderr, "progress %g%s %s (%s)\n", p.Progress, total, launcher.Escape(p.Message), since(start))
		}
	}
	// r.ctx ends on Ctrl-C: the call is cancelled upstream.
	res, err := r.host.Call(r.ctx, tool.Name, args, opts)
	if err != nil {
		return r.fail(err)
	}
	if r.json {
		if code := r.printJSON(res); code != ExitOK {
			return code
		}
	} else {
		fmt.Fprintln(r.env.Stdout, launcher.Escape(res.Text))
	}
	if res.IsError {
		fmt.Fprintf(r.env.Stderr, "switchboard: tool %s returned an error result\n", launcher.Escape(tool.Name))
		return ExitToolError
	}
	return ExitOK
}

// tool describes a tool; when its server is still starting, it waits for
// that server (with progress on a terminal) and looks again.
func (r *run) tool(name string) (host.Tool, error) {
	// Find, not Tool: a name missing from a saved catalogue that may be
	// stale has its server discovered again, as Call would.
	t, err := r.host.Find(r.ctx, name)
	if server := r.host.Starting(err); server != "" {
		if err = r.await(server); err == nil {
			t, err = r.host.Find(r.ctx, name)
		}
	}
	return t, err
}

// callArgs builds the arguments object: one JSON object, "-" for a JSON
// object on stdin, or key=value pairs whose values are strings where the
// schema says string and JSON otherwise (falling back to a string).
func callArgs(args []string, schema json.RawMessage, stdin io.Reader) (json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) == 1 && (args[0] == "-" || strings.HasPrefix(strings.TrimSpace(args[0]), "{")) {
		data := []byte(args[0])
		if args[0] == "-" {
			var err error
			if data, err = io.ReadAll(io.LimitReader(stdin, 64<<20)); err != nil {
				return nil, fmt.Errorf("reading arguments from stdin: %v", err)
			}
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("arguments must be one JSON object, e.g. '{\"text\":\"hi\"}': %v", err)
		}
		return data, nil
	}
	types := propertyTypes(schema)
	obj := make(map[string]json.RawMessage, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q is not key=value (or pass one JSON object)", a)
		}
		if _, dup := obj[k]; dup {
			return nil, fmt.Errorf("argument %q given twice", k)
		}
		obj[k] = argValue(v, types[k])
	}
	return json.Marshal(obj)
}

func argValue(v string, types []string) json.RawMessage {
	for _, t := range types {
		if t == "string" {
			b, _ := json.Marshal(v)
			return b
		}
	}
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}

// propertyTypes reads the JSON types of the schema's top-level properties.
func propertyTypes(schema json.RawMessage) map[string][]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	out := map[string][]string{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for k, p := range s.Properties {
		var one string
		var many []string
		if json.Unmarshal(p.Type, &one) == nil {
			out[k] = []string{one}
		} else if json.Unmarshal(p.Type, &many) == nil {
			out[k] = many
		}
	}
	return out
}

func runResources(r *run) int {
	res := r.host.Resources()
	rows := make([][]string, 0, len(res))
	for _, x := range res {
		rows = append(rows, []string{x.ID, orDash(x.MIMEType), oneLine(orDash(x.Description), 60)})
	}
	return r.listing(res, "ID\tMIME TYPE\tDESCRIPTION", rows)
}

func runTemplates(r *run) int {
	res := r.host.Templates()
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

func runRead(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	res, err := r.host.ReadResource(r.ctx, r.args[0])
	if err != nil {
		return r.fail(err)
	}
	if r.json {
		return r.printJSON(res)
	}
	fmt.Fprintln(r.env.Stdout, launcher.Escape(res.Text))
	return ExitOK
}

func runPrompts(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	res := r.host.Prompts()
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
	if r.json {
		return r.printJSON(res)
	}
	fmt.Fprintln(r.env.Stdout, launcher.Escape(res.Text))
	return ExitOK
}

func runVersion(r *run) int {
	v := r.env.Version
	sdk := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdk = d.Version
			}
		}
	}
	if r.json {
		return r.printJSON(map[string]string{"version": v, "goSDK": sdk})
	}
	fmt.Fprintf(r.env.Stdout, "switchboard %s (go-sdk %s; MCP 2026-07-28 and 2024-11-05…2025-11-25)\n", v, sdk)
	return ExitOK
}

func runFixture(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	var err error
	if r.http != "" {
		var lc net.ListenConfig
		ln, lerr := lc.Listen(r.ctx, "tcp", r.http)
		if lerr != nil {
			return r.usagef("conformance-fixture: %v", lerr)
		}
		err = fixture.Serve(r.ctx, ln, nil, func(a net.Addr) {
			fmt.Fprintf(r.env.Stderr, "conformance fixture: http://%s/mcp\n", a)
		})
	} else {
		err = fixture.ServeStdio(r.ctx, nil)
	}
	if err != nil && r.ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return r.failf(ExitUpstream, codeError, "conformance-fixture: %v", err)
	}
	return ExitOK
}

func runDemoServer(r *run) int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	ctx := r.ctx
	var err error
	if r.http != "" {
		err = demo.ServeHTTP(ctx, r.http, r.env.Version, func(a net.Addr) {
			fmt.Fprintf(r.env.Stderr, "demo server: http://%s/mcp\n", a)
		})
	} else {
		err = demo.ServeStdio(ctx, r.env.Version)
	}
	if err != nil && ctx.Err() == nil {
		return r.failf(ExitUpstream, codeError, "demo server: %v", err)
	}
	return ExitOK
}

func runSearch(r *run) int {
	if !r.wantArgs(1, -1) {
		return ExitUsage
	}
	tools, err := r.host.SearchContext(r.ctx, strings.Join(r.args, " "), r.limit)
	if err != nil {
		return r.failf(ExitUpstream, codeError, "%v", err)
	}
	r.noteUndiscovered()
	if r.json {
		if tools == nil {
			tools = []host.Tool{}
		}
		return r.printJSON(tools)
	}
	if len(tools) == 0 {
		fmt.Fprintln(r.env.Stderr, "no tool matches; `switchboard tools` lists them all")
		return ExitOK
	}
	r.toolTable(tools)
	return ExitOK
}

// noteUndiscovered names, on stderr, the servers search could not look
// into: enabled, and with no catalogue saved under their configuration
// (it starts no server).
func (r *run) noteUndiscovered() {
	for _, s := range r.host.Servers() {
		sc := r.cfg.Server(s.Name)
		if s.State != host.StateIdle || s.Tools > 0 || sc == nil {
			continue
		}
		if c, err := r.store.Catalog(r.ctx, s.Name); err == nil && c.Fingerprint == sc.Fingerprint() {
			continue
		}
		fmt.Fprintf(r.env.Stderr, "note: server %q has not been discovered yet, so its tools are not searched ('switchboard tools %s' discovers it)\n", launcher.Escape(s.Name), launcher.Escape(s.Name))
	}
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
	for _, t := range r.host.ModelTools() {
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
	for _, t := range h.ModelTools() {
		if t.Server == "" {
			builtin++
		}
	}
	return counts(len(h.Tools()), servers, builtin)
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
