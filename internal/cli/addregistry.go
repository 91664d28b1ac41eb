package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/mcpregistry"
	"github.com/switchboard-mcp/switchboard/internal/state"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// registryFlags are add's flags for a server from the MCP registry.
type registryFlags struct {
	ref    string   // --registry NAME[@VERSION]
	url    string   // --registry-url
	pkg    int      // --package N
	remote bool     // --remote
	vars   []string // --var KEY=VALUE
}

// flags registers them on fs.
func (f *registryFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&f.ref, "registry", "", "add the server the MCP registry lists as `NAME[@VERSION]` (the latest version by default), pinned to that version and held until approved")
	registryURLFlag(fs, &f.url)
	fs.IntVar(&f.pkg, "package", 0, "with --registry: run the server's package `N` (from 1) of its server.json")
	fs.BoolVar(&f.remote, "remote", false, "with --registry: connect to the server's remote (Streamable HTTP before SSE) rather than run a package")
	fs.Func("var", "with --registry: the value of an argument or variable the server.json names (`KEY=VALUE`, repeatable)", func(v string) error {
		f.vars = append(f.vars, v)
		return nil
	})
}

// registryAdd is what add --registry writes: the entry, what the
// registry said and how it runs.
type registryAdd struct {
	registry string
	server   *mcpregistry.Server
	launch   *mcpregistry.Launch
	e        *entry
}

// runAddRegistry adds the server the MCP registry describes:
// switchboard add --registry NAME[@VERSION] [LOCALNAME].
func runAddRegistry(r *run, f *entryFlags, rf *registryFlags) int {
	if r.dashAt >= 0 || len(r.args) > 1 {
		return r.usagef("usage: switchboard add --registry NAME[@VERSION] [LOCALNAME]: the registry says what runs")
	}
	if f.transport != "" || f.bearerEnv != "" {
		return r.usagef("--transport and --bearer-env are not for --registry: the server.json says how to connect")
	}
	name, version, err := mcpregistry.ParseRef(rf.ref)
	if err != nil {
		return r.usagef("--registry %v", err)
	}
	c, err := r.registryClient(rf.url)
	if err != nil {
		return r.usagef("%v", err)
	}
	got, err := c.Get(r.ctx, name, version)
	if err != nil {
		return r.registryFailure(err)
	}
	s := &got.Server
	if o := got.Meta.Official; o != nil && o.Status != "" && o.Status != "active" {
		fmt.Fprintf(r.env.Stderr, "warning: the registry marks %s %s %s\n", launcher.Escape(s.Name), launcher.Escape(s.Version), launcher.Escape(o.Status))
	}
	choice, err := mcpregistry.Choose(s, mcpregistry.ChooseOptions{Package: rf.pkg, Remote: rf.remote, Installed: r.installed})
	if err != nil {
		return r.usagef("%v", err)
	}
	ans, err := newAnswers(f, rf, terminalAsker(r.env))
	if err != nil {
		return r.usagef("%v", err)
	}
	l, err := mcpregistry.Translate(s, choice, ans.ask)
	if err != nil {
		var me *mcpregistry.MissingError
		if errors.As(err, &me) {
			return r.usagef("%s of %s %s needs a value and there is no terminal to ask at: give it with %s", me.Question.Kind, s.Name, s.Version, flagFor(me.Question))
		}
		return r.usagef("%s %s: %v", s.Name, s.Version, err)
	}
	if err := ans.unused(); err != nil {
		return r.usagef("%s %s: %v", s.Name, s.Version, err)
	}
	local := registryLocalName(s.Name)
	if len(r.args) == 1 {
		local = r.args[0]
	}
	e, err := registryEntry(local, l, f)
	if err != nil {
		return r.usagef("%v", err)
	}
	return r.saveRegistry(&registryAdd{registry: c.URL(), server: s, launch: l, e: e})
}

// registryLocalName is the name a server called name in the registry
// gets by default: the last part of its name, under the rules
// SuggestName has for a package ("brave-search-mcp-server" is
// "brave-search").
func registryLocalName(name string) string {
	return SuggestName("", []string{"npx", lastSegment(name)})
}

// registryEntry is the configuration of the server called name that runs
// l: every text escaped ("${" is literal), every secret kept as a
// credential under the name add gives it: an environment variable's own
// name, SERVER_FLAG (SERVER_TOKEN) for an argument's, SERVER.header.NAME
// for a header's.
func registryEntry(name string, l *mcpregistry.Launch, f *entryFlags) (*entry, error) {
	e := &entry{name: name, obj: &confedit.Object{}, creds: map[string]string{}}
	text := func(v mcpregistry.Value, cred func() string) string {
		if !v.Secret {
			return strings.ReplaceAll(v.Text, "${", "$${")
		}
		return config.CredRef(cred())
	}
	named := func(kind string, vars []mcpregistry.Var) *confedit.Object {
		o := &confedit.Object{}
		for _, v := range vars {
			o.SetValue(v.Name, text(v.Value, func() string { //nolint:errcheck // a string always encodes
				if kind == "env" {
					return e.credName(config.EnvCredName(v.Name, true), v.Value.Text)
				}
				cred := credName(name, kind, v.Name)
				e.creds[cred] = v.Value.Text
				return cred
			}))
		}
		return o
	}
	switch l.Transport {
	case "stdio":
		e.obj.SetValue("command", l.Command) //nolint:errcheck // a string always encodes
		if len(l.Args) > 0 {
			args := make([]string, len(l.Args))
			for i, a := range l.Args {
				args[i] = text(a, func() string {
					flag := "" // the flag before it, if any
					if i > 0 && strings.HasPrefix(l.Args[i-1].Text, "-") {
						flag = strings.TrimLeft(l.Args[i-1].Text, "-")
					}
					return e.credName(config.ArgCredName(name, flag), a.Text)
				})
			}
			e.obj.SetValue("args", args) //nolint:errcheck // strings always encode
		}
		if len(l.Env) > 0 {
			e.obj.SetValue("env", named("env", l.Env)) //nolint:errcheck // an object always encodes
		}
	case "http", "sse":
		if l.Transport == "sse" {
			e.obj.SetValue("type", "sse") //nolint:errcheck // a string always encodes
		}
		e.obj.SetValue("url", strings.ReplaceAll(l.URL, "${", "$${")) //nolint:errcheck // a string always encodes
		if len(l.Headers) > 0 {
			e.obj.SetValue("headers", named("header", l.Headers)) //nolint:errcheck // an object always encodes
		}
	default:
		return nil, fmt.Errorf("transport %q", l.Transport)
	}
	if f.trust {
		e.obj.SetValue("trust", string(config.TrustTrusted)) //nolint:errcheck // a string always encodes
	}
	if f.disabled {
		e.obj.SetValue("enabled", false) //nolint:errcheck // a bool always encodes
	}
	return e, nil
}

// saveRegistry writes a server from the registry: its credentials to
// creds.json, then the server to the configuration, held. Unlike save,
// it does not start the server to check it, since nothing of it is
// approved yet, and it approves nothing.
func (r *run) saveRegistry(ra *registryAdd) int {
	e := ra.e
	// Held: every definition of the server waits for `switchboard
	// approve` ("approval": "manual"); add approves what a person typed
	// at add time, a server.json from the registry is not.
	e.obj.SetValue("approval", config.ApprovalManual) //nolint:errcheck // a string always encodes
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	add := addServer(path, e)
	lookup, err := r.lookupCred(e.creds)
	if err != nil {
		return r.configError(err)
	}
	old, err := confedit.ReadFile(path)
	if err != nil {
		return r.configError(err)
	}
	doc, err := confedit.ParseObject(old)
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err))
	}
	if err := add(doc); err != nil {
		return r.usagef("%v", err)
	}
	data, _ := doc.MarshalJSON()
	if _, err := config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup}); err != nil {
		return r.configError(err)
	}
	if se := r.write(path, e, add, nil); se != nil {
		return r.reportSave(se)
	}
	// Its launch waits for a person too: even a store that pins no
	// launch yet (a fresh home), which would pin a new server's at its
	// first start, holds a server that appears unapproved from now on.
	if code := r.withStore(func(st store.Store) int {
		if err := state.MarkLaunchesPinned(r.ctx, st); err != nil {
			return r.configError(fmt.Errorf("server %q was added, but its launch cannot be held for approval: %w", e.name, err))
		}
		return ExitOK
	}); code != ExitOK {
		return code
	}
	return r.addedFromRegistry(ra, path)
}

// addedFromRegistry says what was added, and that it waits for approval.
func (r *run) addedFromRegistry(ra *registryAdd, path string) int {
	s, l, e := ra.server, ra.launch, ra.e
	var env, headers, omitted []string
	for _, v := range l.Env {
		env = append(env, v.Name)
	}
	for _, v := range l.Headers {
		headers = append(headers, v.Name)
	}
	for _, q := range l.Omitted {
		omitted = append(omitted, q.Kind+" "+q.Key)
	}
	creds := sortedKeys(e.creds)
	if r.json {
		return r.printJSON(map[string]any{"server": e.name, "file": path, "registry": ra.registry,
			"name": s.Name, "version": s.Version, "runs": l.What, "env": orEmpty(env), "headers": orEmpty(headers),
			"credentials": orEmpty(creds), "omitted": orEmpty(omitted), "held": true})
	}
	out := r.env.Stdout
	fmt.Fprintf(out, "added server %q to %s from %s\n", e.name, launcher.Escape(path), launcher.Escape(ra.registry))
	fmt.Fprintf(out, "  %s %s: %s\n", launcher.Escape(s.Name), launcher.Escape(s.Version), launcher.Escape(l.What))
	if cmd := e.commandLine(); cmd != "" {
		fmt.Fprintf(out, "  runs: %s\n", launcher.Escape(cmd))
	} else {
		fmt.Fprintf(out, "  connects to: %s (%s)\n", launcher.Escape(l.URL), l.Transport)
	}
	if len(env) > 0 {
		fmt.Fprintf(out, "  environment: %s\n", launcher.Escape(strings.Join(env, ", ")))
	}
	if len(headers) > 0 {
		fmt.Fprintf(out, "  headers: %s\n", launcher.Escape(strings.Join(headers, ", ")))
	}
	for _, c := range creds {
		fmt.Fprintf(out, "  credential %s kept in creds.json\n", launcher.Escape(c))
	}
	if len(omitted) > 0 {
		fmt.Fprintf(out, "  left out (optional, not given): %s\n", launcher.Escape(strings.Join(omitted, ", ")))
	}
	fmt.Fprintf(out, "held until approved: review it in %s, then run 'switchboard approve %s'\n", launcher.Escape(path), launcher.Escape(e.name))
	return ExitOK
}

// commandLine is e's command and arguments as the configuration has
// them (credentials as references), or "" for a URL.
func (e *entry) commandLine() string {
	var cmd string
	var args []string
	if raw, ok := e.obj.Get("command"); !ok || json.Unmarshal(raw, &cmd) != nil {
		return ""
	}
	if raw, ok := e.obj.Get("args"); ok {
		json.Unmarshal(raw, &args) //nolint:errcheck // written above as strings
	}
	return strings.Join(append([]string{cmd}, args...), " ")
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// answers answers the translator's questions: from --env, --header and
// --var, else at the terminal (secrets without echo) for what is
// required or secret and has no default, else not (the default applies,
// or the value is left out).
type answers struct {
	given map[string]map[string][]string // kind ("env", "header", "var") → key → values
	used  map[string]bool                // "kind key"
	term  *asker                         // nil without a terminal
}

func newAnswers(f *entryFlags, rf *registryFlags, term *asker) (*answers, error) {
	a := &answers{given: map[string]map[string][]string{"env": {}, "header": {}, "var": {}}, used: map[string]bool{}, term: term}
	for _, kv := range f.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", k)
		}
		a.given["env"][k] = append(a.given["env"][k], v)
	}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--header %q: want 'NAME: VALUE'", strings.TrimSpace(k))
		}
		key := strings.ToLower(strings.TrimSpace(k))
		a.given["header"][key] = append(a.given["header"][key], strings.TrimSpace(v))
	}
	for _, kv := range rf.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--var %q: want KEY=VALUE", k)
		}
		a.given["var"][k] = append(a.given["var"][k], v)
	}
	return a, nil
}

// flagKind is the flag that gives a question's value.
func flagKind(q mcpregistry.Question) (kind, key string) {
	switch q.Kind {
	case mcpregistry.KindEnv:
		return "env", q.Key
	case mcpregistry.KindHeader:
		return "header", strings.ToLower(q.Key)
	}
	return "var", q.Key
}

// flagFor shows the flag that gives q's value.
func flagFor(q mcpregistry.Question) string {
	kind, _ := flagKind(q)
	if kind == "header" {
		return fmt.Sprintf("--header '%s: VALUE'", q.Key)
	}
	return fmt.Sprintf("--%s %s=VALUE", kind, q.Key)
}

func (a *answers) ask(q mcpregistry.Question) ([]string, error) {
	kind, key := flagKind(q)
	if vs, ok := a.given[kind][key]; ok {
		a.used[kind+" "+key] = true
		return vs, nil
	}
	if a.term == nil || (q.Default != "" && !q.Secret) || (!q.Required && !q.Secret) {
		return nil, nil
	}
	for {
		var v string
		var ok bool
		if q.Secret {
			v, ok = a.term.password(question(q))
		} else {
			v, ok = a.term.line(question(q))
		}
		if !ok {
			return nil, errors.New("no answer at the terminal")
		}
		if v == "" && q.Default != "" {
			return []string{q.Default}, nil
		}
		if v == "" && !q.Required {
			return nil, nil
		}
		if v != "" {
			return []string{v}, nil
		}
	}
}

// unused reports the values given that no question asked for: a typo,
// or a value the server.json does not name.
func (a *answers) unused() error {
	var extra []string
	for kind, m := range a.given {
		for k := range m {
			if !a.used[kind+" "+k] {
				extra = append(extra, "--"+kind+" "+k)
			}
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return fmt.Errorf("its server.json names no %s", strings.Join(extra, ", no "))
}
