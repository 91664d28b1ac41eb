package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// callFlags are the flags of call.
type callFlags struct {
	yes     bool // --yes: confirm what the policy asks to
	refresh bool
}

func callCommand(*run) *command {
	f := &callFlags{}
	return &command{
		name: "call", args: "NAME [JSON | key=value ... | -] [--yes]",
		summary:  "call a tool; arguments as one JSON object, key=value pairs, or - for JSON on stdin",
		examples: []string{"switchboard call demo__echo text=hello", `switchboard call demo__add '{"a": 2, "b": 40}'`},
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&f.yes, "yes", false, "confirm the call if the policy asks for confirmation (policy.confirm)")
			fs.BoolVar(&f.refresh, "refresh", false, refreshUsage)
		},
		host: &hostUse{findings: true, refresh: func() bool { return f.refresh }},
		run:  f.run,
		complete: func(r *run, args []string) []string {
			if len(args) > 0 {
				return nil
			}
			return r.toolNames()
		},
	}
}

func (f *callFlags) run(r *run) int {
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
	opts := &host.CallOptions{Confirm: r.confirmer(f.yes), Approve: r.approver(), KeepWhole: true}
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
	v := r.host.View(host.Caller{})
	t, err := v.Find(r.ctx, name)
	if server := startingServer(err); server != "" {
		if err = r.await(server); err == nil {
			t, err = v.Find(r.ctx, name)
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
			if data, err = bytesize.ReadAll(stdin, 64<<20); err != nil {
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
