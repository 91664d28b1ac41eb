package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/shell"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// The editing commands: add, add-json, remove, enable, disable, get.
// add, add-json and enable connect to the server and discover it before
// anything is written (unless --no-verify); a failure writes nothing and
// exits 3. Values given for env and headers are credentials: they go to
// creds.json in the home, and the configuration references them as
// ${cred:NAME}. No command prints a credential's value.

func init() {
	for name, ex := range map[string][]string{
		"add": {"switchboard add -- npx -y @modelcontextprotocol/server-filesystem /srv/docs",
			`switchboard add files 'npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"'`,
			"switchboard add gh --env GITHUB_TOKEN=ghp_xxx -- npx -y @modelcontextprotocol/server-github",
			"switchboard add https://mcp.example.com/mcp --bearer-env EXAMPLE_TOKEN",
			"switchboard add legacy http://127.0.0.1:9001/sse --transport sse --header 'X-Api-Key: k'"},
		"add-json": {`switchboard add-json demo2 '{"command": "switchboard", "args": ["demo-server"]}'`},
		"remove":   {"switchboard remove files"},
		"edit":     {"switchboard edit files"},
		"enable":   {"switchboard enable files"},
		"disable":  {"switchboard disable files"},
		"get":      {"switchboard get demo", "switchboard get demo --json"},
		"list":     {"switchboard list", "switchboard list --check"},
	} {
		examples[name] = ex
	}
}

// editFlags are the flags of the editing commands.
type editFlags struct {
	env       []string // --env KEY=VALUE
	headers   []string // --header 'K: V'
	bearerEnv string   // --bearer-env VAR
	bearer    string   // a bearer token typed into the form; kept in creds.json
	transport string   // --transport http|sse
	trust     bool
	disabled  bool
	scope     string // user | project
	noVerify  bool
	check     bool // servers/list --check
}

func (f *editFlags) register(fs *flag.FlagSet, cmd string) {
	switch cmd {
	case "add":
		fs.Func("env", "set the server's environment variable (`KEY=VALUE`, repeatable); the value is kept in creds.json", func(v string) error {
			f.env = append(f.env, v)
			return nil
		})
		fs.Func("header", "send an HTTP header (`'K: V'`, repeatable); the value is kept in creds.json", func(v string) error {
			f.headers = append(f.headers, v)
			return nil
		})
		fs.StringVar(&f.bearerEnv, "bearer-env", "", "send 'Authorization: Bearer' with the value of environment variable `VAR`")
		fs.StringVar(&f.transport, "transport", "", "`http` (Streamable HTTP, the default for a URL) or sse (the legacy HTTP+SSE transport)")
		fs.BoolVar(&f.trust, "trust", false, "mark the server trusted (\"trust\": \"trusted\")")
		fs.BoolVar(&f.disabled, "disabled", false, "add the server disabled")
		fallthrough
	case "add-json", "edit", "enable":
		fs.StringVar(&f.scope, "scope", "user", "`where`: user (the configuration file) or project (.mcp.json in the working directory)")
		fs.BoolVar(&f.noVerify, "no-verify", false, "save without connecting to the server first")
	case "servers", "list":
		fs.BoolVar(&f.check, "check", false, "start every enabled server and discover it again; exit 3 when one does not work")
	case "remove", "disable":
		fs.StringVar(&f.scope, "scope", "user", "`where`: user (the configuration file) or project (.mcp.json in the working directory)")
	}
}

// editPath is the file an editing command changes: .mcp.json in the
// working directory for --scope project, else the configuration file
// (--config, or config.json in the home, which need not exist yet).
func (r *run) editPath() (string, error) {
	switch r.edit.scope {
	case "project":
		if r.cfgFile != "" {
			return "", errors.New("--scope project writes .mcp.json in the working directory: no --config")
		}
		return filepath.Join(r.workDir(), config.ProjectFileName), nil
	case "", "user":
	default:
		return "", fmt.Errorf("--scope is user or project, not %q", r.edit.scope)
	}
	home, err := r.homeDir()
	if err != nil && r.cfgFile == "" {
		return "", err
	}
	path, _, err := config.Locate(home, r.cfgFile)
	return path, err
}

// credsPath is the credential store: creds.json in the home.
func (r *run) credsPath() (string, error) {
	home, err := r.homeDir()
	if err != nil {
		return "", err
	}
	return creds.Path(home), nil
}

// lookupCred returns the LookupCred of config.LoadOptions for the
// credentials in the home, with extra ones (not stored yet) over them.
func (r *run) lookupCred(extra map[string]string) (func(string) (string, bool), error) {
	return r.lookupCredIn("", extra)
}

// lookupCredIn is lookupCred for the home directory home ("" is the
// usual one). Without a home there are no credentials; a credential
// file others may read is an error.
func (r *run) lookupCredIn(home string, extra map[string]string) (func(string) (string, bool), error) {
	if home == "" {
		h, err := r.homeDir()
		if err != nil {
			h = ""
		}
		home = h
	}
	stored := map[string]string{}
	if home != "" {
		var err error
		if stored, err = creds.Load(creds.Path(home)); err != nil {
			return nil, err
		}
	}
	return func(name string) (string, bool) {
		if v, ok := extra[name]; ok {
			return v, true
		}
		v, ok := stored[name]
		return v, ok
	}, nil
}

// serversKey is the key of the servers' object in a configuration: the
// one the file uses, else "mcpServers".
func serversKey(o *confedit.Object) string {
	if _, ok := o.Get("mcpServers"); !ok {
		if _, ok := o.Get("servers"); ok {
			return "servers"
		}
	}
	return "mcpServers"
}

// editServers applies f to the servers' object of o.
func editServers(o *confedit.Object, f func(servers *confedit.Object) error) error {
	key := serversKey(o)
	servers, err := o.Object(key)
	if err != nil {
		return err
	}
	if err := f(servers); err != nil {
		return err
	}
	return o.SetValue(key, servers)
}

// errNoServer is the error for a name the file does not have.
func errNoServer(name, path string) error {
	return fmt.Errorf("no server %q in %s", name, path)
}

// entry is a server's configuration being added: its JSON object, and
// the credentials it references that are not stored yet.
type entry struct {
	name  string
	obj   *confedit.Object
	creds map[string]string
}

// credName is the credential name for a value of server's field kind
// (env or header) key: "<server>.<kind>.<key>", with the characters a
// credential name cannot hold replaced by '_'.
func credName(server, kind, key string) string {
	clean := func(s string) string {
		return strings.Map(func(c rune) rune {
			if c < 0x80 && config.ValidCredName(string(c)) {
				return c
			}
			return '_'
		}, s)
	}
	return clean(server) + "." + kind + "." + clean(key)
}

// moveSecrets replaces each value of the object member field (env or
// headers) of e.obj that is not a reference by a ${cred:NAME} reference,
// keeping the value in e.creds.
func (e *entry) moveSecrets(field, kind string) error {
	m, err := e.obj.Object(field)
	if err != nil || len(m.Members) == 0 {
		return err
	}
	for i, mem := range m.Members {
		var v string
		if json.Unmarshal(mem.Value, &v) != nil || v == "" || strings.Contains(v, "${") {
			continue // not a string (the strict parser says so), empty, or a reference already
		}
		name := credName(e.name, kind, mem.Key)
		e.creds[name] = v
		b, _ := json.Marshal(config.CredRef(name))
		m.Members[i].Value = b
	}
	return e.obj.SetValue(field, m)
}

// runAdd adds a server: switchboard add [NAME] URL, or
// switchboard add [NAME] -- COMMAND [ARGS...]; without arguments at a
// terminal, in the form.
func runAdd(r *run) int {
	if len(r.args) == 0 && r.dashAt < 0 {
		if in, ok := r.formInput(); ok {
			return r.form(in, "", &formValues{transport: "http"}, nil)
		}
	}
	e, err := r.addEntry()
	if err != nil {
		return r.usagef("%v", err)
	}
	return r.save(e)
}

// addEntry builds the entry of add's arguments and flags.
func (r *run) addEntry() (*entry, error) {
	args := r.args
	before := args // the positional arguments before "--"
	var argv []string
	if r.dashAt >= 0 {
		before, argv = args[:r.dashAt], args[r.dashAt:]
	}
	var name, rawURL string
	switch {
	case len(before) == 0 && len(argv) == 0:
		return nil, errors.New("usage: switchboard add [NAME] URL, or switchboard add [NAME] -- COMMAND [ARGS...]")
	case len(argv) > 0:
		if len(before) > 1 {
			return nil, fmt.Errorf("one NAME before \"--\", not %d arguments", len(before))
		}
		if len(before) == 1 {
			name = before[0]
		}
	case len(before) == 1:
		rawURL = before[0]
	case len(before) == 2:
		name, rawURL = before[0], before[1]
	default:
		return nil, errors.New("too many arguments: a command goes after \"--\": switchboard add NAME -- COMMAND [ARGS...]")
	}
	if rawURL != "" && !isURL(rawURL) {
		// A command line in one argument, as a shell would have it.
		argv, rawURL = []string{rawURL}, ""
	}
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t\n'\"\\") {
		fields, err := SplitCommand(argv[0])
		if err != nil {
			return nil, fmt.Errorf("the command %q: %v", argv[0], err)
		}
		argv = fields
	} else {
		for i, a := range argv {
			argv[i] = strings.ReplaceAll(a, "${", "$${") // exact words, no references
		}
	}
	if len(argv) == 0 && rawURL == "" {
		return nil, errors.New("no command after \"--\"")
	}
	if name == "" {
		if rawURL != "" {
			name = SuggestName(rawURL, nil)
		} else {
			name = SuggestName("", argv)
		}
	}
	return entryOf(name, rawURL, argv, &r.edit)
}

// entryOf builds the entry of server name: at rawURL, or running argv
// (its words as the configuration has them), with f's settings.
func entryOf(name, rawURL string, argv []string, f *editFlags) (*entry, error) {
	e := &entry{name: name, obj: &confedit.Object{}, creds: map[string]string{}}
	if rawURL != "" {
		switch f.transport {
		case "", "http":
			if f.transport == "http" {
				e.obj.SetValue("type", "http")
			}
		case "sse":
			e.obj.SetValue("type", "sse")
		default:
			return nil, fmt.Errorf("--transport is http or sse, not %q", f.transport)
		}
		e.obj.SetValue("url", strings.ReplaceAll(rawURL, "${", "$${"))
		if len(f.env) > 0 {
			return nil, errors.New("--env is for a command's environment; an HTTP server takes --header or --bearer-env")
		}
	} else {
		if f.transport != "" || len(f.headers) > 0 || f.bearerEnv != "" || f.bearer != "" {
			return nil, errors.New("--transport, --header and --bearer-env are for a URL; a command takes --env")
		}
		e.obj.SetValue("command", argv[0])
		if len(argv) > 1 {
			e.obj.SetValue("args", argv[1:])
		}
	}
	if len(f.env) > 0 {
		env := &confedit.Object{}
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("--env %q: want KEY=VALUE", k)
			}
			env.SetValue(k, v)
		}
		e.obj.SetValue("env", env)
	}
	if len(f.headers) > 0 {
		h := &confedit.Object{}
		for _, kv := range f.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("--header %q: want 'NAME: VALUE'", strings.TrimSpace(k))
			}
			h.SetValue(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		e.obj.SetValue("headers", h)
	}
	if f.bearerEnv != "" {
		e.obj.SetValue("bearerTokenEnvVar", f.bearerEnv)
	}
	if f.trust {
		e.obj.SetValue("trust", string(config.TrustTrusted))
	}
	if f.disabled {
		e.obj.SetValue("enabled", false)
	}
	if err := e.moveSecrets("env", "env"); err != nil {
		return nil, err
	}
	if err := e.moveSecrets("headers", "header"); err != nil {
		return nil, err
	}
	if f.bearer != "" {
		h, err := e.obj.Object("headers")
		if err != nil {
			return nil, err
		}
		cred := credName(name, "bearer", "token")
		e.creds[cred] = f.bearer
		h.SetValue("Authorization", "Bearer "+config.CredRef(cred))
		e.obj.SetValue("headers", h)
	}
	return e, nil
}

// runAddJSON adds a server from its JSON configuration:
// switchboard add-json NAME JSON.
func runAddJSON(r *run) int {
	if !r.wantArgs(2, 2) {
		return ExitUsage
	}
	obj, err := confedit.ParseObject([]byte(r.args[1]))
	if err != nil || len(strings.TrimSpace(r.args[1])) == 0 {
		return r.usagef("add-json takes the server's configuration as one JSON object")
	}
	e := &entry{name: r.args[0], obj: obj, creds: map[string]string{}}
	for _, f := range [][2]string{{"env", "env"}, {"headers", "header"}} {
		if err := e.moveSecrets(f[0], f[1]); err != nil {
			return r.usagef("%v", err)
		}
	}
	return r.save(e)
}

// saveError is why a server was not saved: what report prints, and the
// exit code.
type saveError struct {
	exit   int
	f      failure
	advice []string
}

func (e *saveError) Error() string {
	return strings.Join(append([]string{e.f.Message}, e.advice...), "\n")
}

// reportSave reports se and returns its exit code.
func (r *run) reportSave(se *saveError) int { return r.report(se.exit, se.f, se.advice...) }

func usageErr(err error) *saveError {
	return &saveError{exit: ExitUsage, f: failure{Code: codeUsage, Message: err.Error()}}
}

func configErr(err error) *saveError {
	return &saveError{exit: ExitUsage, f: failure{Code: codeConfig, Message: err.Error()}}
}

// save checks e (unless --no-verify) and writes it: its credentials to
// creds.json, then the server to the configuration. The server must not
// be there already.
func (r *run) save(e *entry) int {
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	add := addServer(path, e)
	if se := r.check(path, e, add); se != nil {
		return r.reportSave(se)
	}
	if se := r.write(path, e, add, nil); se != nil {
		return r.reportSave(se)
	}
	return r.done(fmt.Sprintf("added server %q to %s", e.name, path), e.name, path, sortedKeys(e.creds))
}

// addServer is the edit that adds e to the servers of the file at path,
// which must not have it yet.
func addServer(path string, e *entry) func(*confedit.Object) error {
	return func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			for _, m := range servers.Members {
				if strings.EqualFold(m.Key, e.name) {
					return fmt.Errorf("%s already has a server %q: remove it first ('switchboard remove %s'), or choose another NAME", path, m.Key, m.Key)
				}
			}
			return servers.SetValue(e.name, e.obj)
		})
	}
}

// check builds the candidate configuration, the file at path with apply
// done and e's credentials over the stored ones, and checks e's server in
// it (unless --no-verify). Nothing is written.
func (r *run) check(path string, e *entry, apply func(*confedit.Object) error) *saveError {
	lookup, err := r.lookupCred(e.creds)
	if err != nil {
		return configErr(err)
	}
	old, err := confedit.ReadFile(path)
	if err != nil {
		return configErr(err)
	}
	doc, err := confedit.ParseObject(old)
	if err != nil {
		return configErr(fmt.Errorf("%s: %w", path, err))
	}
	if err := apply(doc); err != nil {
		return usageErr(err)
	}
	data, _ := doc.MarshalJSON()
	cfg, err := config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
	if err != nil {
		return configErr(err)
	}
	if r.edit.noVerify {
		fmt.Fprintf(r.env.Stderr, "warning: server %q saved without checking that it starts (--no-verify)\n", e.name)
		return nil
	}
	return r.probe(cfg, e.name)
}

// write saves e: its credentials to creds.json, then apply to the file at
// path under its lock; then it removes the credentials in drop. When the
// file cannot be written, the credentials are put back as they were.
func (r *run) write(path string, e *entry, apply func(*confedit.Object) error, drop []string) *saveError {
	cpath, err := r.credsPath()
	if err != nil {
		return configErr(err)
	}
	undo := func() error { return nil }
	if len(e.creds) > 0 {
		if undo, err = creds.Set(cpath, e.creds); err != nil {
			return configErr(err)
		}
	}
	err = confedit.Edit(path, nil, apply) // again, under the lock: another writer may have been first
	if err != nil {
		undo() //nolint:errcheck // best effort: the error reported is the file's
		return configErr(err)
	}
	if len(drop) > 0 {
		if err := creds.Update(cpath, nil, drop); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: credentials no longer used stay in creds.json: %s\n", launcher.Escape(err.Error()))
		}
	}
	return nil
}

// done reports a change that was written.
func (r *run) done(msg, name, path string, credentials []string) int {
	if r.json {
		return r.printJSON(map[string]any{"server": name, "file": path, "credentials": credentials})
	}
	fmt.Fprintf(r.env.Stdout, "%s\n", launcher.Escape(msg))
	for _, c := range credentials {
		fmt.Fprintf(r.env.Stdout, "  credential %s kept in creds.json\n", launcher.Escape(c))
	}
	return ExitOK
}

// verify connects to cfg's server name alone and discovers it, unless
// --no-verify. It reports a failure (exit 3) and returns its exit code.
func (r *run) verify(cfg *config.Config, name string) int {
	if cfg.Server(name) == nil {
		return r.usagef("no server %q", name)
	}
	if r.edit.noVerify {
		fmt.Fprintf(r.env.Stderr, "warning: server %q saved without checking that it starts (--no-verify)\n", name)
		return ExitOK
	}
	if se := r.probe(cfg, name); se != nil {
		return r.reportSave(se)
	}
	return ExitOK
}

// probe is checkServer for a change that was not written.
func (r *run) probe(cfg *config.Config, name string) *saveError {
	return r.checkServer(cfg, name, "nothing was written")
}

// checkServer connects to cfg's server name alone and discovers it, with
// progress on stderr: nil when it works, else what failed (exit 3, or the
// signal's when interrupted); written says what became of the change on
// failure ("nothing was written").
func (r *run) checkServer(cfg *config.Config, name, written string) *saveError {
	s := cfg.Server(name)
	if s == nil {
		return usageErr(fmt.Errorf("no server %q", name))
	}
	if s.Unusable != nil {
		return &saveError{ExitUpstream, failure{Code: codeConfig, Message: s.Unusable.Error(), Server: name},
			[]string{written + "; set what is missing, or save anyway with --no-verify"}}
	}
	one := *cfg
	sc := *s
	sc.Enabled = true
	one.Servers = []*config.Server{&sc}
	fmt.Fprintf(r.env.Stderr, "checking server %q...\n", name)
	h, err := host.Open(r.ctx, &one, &host.Options{ClientVersion: r.env.Version, StopTimeout: oneShotStop, OAuth: r.oauthOptions()})
	if err != nil {
		return &saveError{ExitUpstream, failureOf(err, codeError), []string{written}}
	}
	st := h.Servers()[0]
	h.Close()
	if needsLogin(st) {
		// It answered, and asked for a login: the grant is the person's to give.
		fmt.Fprintf(r.env.Stderr, "server %q answers and asks for a login: run 'switchboard login %s'\n", name, launcher.Escape(name))
		return nil
	}
	if st.State != host.StateReady && st.State != host.StateIdle {
		msg := st.LastError
		if msg == "" {
			msg = fmt.Sprintf("server %q is %s", name, st.State)
		}
		advice := []string{written + "; fix it and try again, or save anyway with --no-verify"}
		if st.Stderr != "" {
			advice = append(advice, "its stderr ends:", oneLine(st.Stderr, 400))
		}
		if code, ok := r.interrupted(); ok {
			return &saveError{code, failure{Code: codeInterrupted, Message: "interrupted"}, advice[:1]}
		}
		return &saveError{ExitUpstream, failure{Code: "unavailable", Message: msg, Server: name}, advice}
	}
	fmt.Fprintf(r.env.Stderr, "server %q works: %s, %d tools, %d resources, %d prompts\n", name, orDash(st.ProtocolVersion), st.Tools, st.Resources, st.Prompts)
	return nil
}

// credRefs finds the ${cred:NAME} references in a server's raw JSON.
var credRefs = regexp.MustCompile(`\$\{cred:([A-Za-z0-9_.-]+)\}`)

// runRemove removes a server and the credentials only it referenced.
func runRemove(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	name := r.args[0]
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	// An HTTP server's OAuth grants go with it, unless another server
	// names the same resource.
	var resource string
	if cfg, err := r.loadConfig(); err == nil {
		if sc := cfg.Server(name); sc != nil && sc.Transport == config.TransportHTTP && sc.URL != "" {
			resource = sc.URL
			for _, other := range cfg.Servers {
				if other.Name != name && other.URL == sc.URL {
					resource = ""
				}
			}
		}
	}
	var gone []string
	err = confedit.Edit(path, &confedit.Options{Check: r.checkFile(path)}, func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			raw, ok := servers.Get(name)
			if !ok {
				return errNoServer(name, path)
			}
			servers.Delete(name)
			for _, m := range credRefs.FindAllStringSubmatch(string(raw), -1) {
				gone = append(gone, m[1])
			}
			// A credential another server references stays.
			rest, _ := servers.MarshalJSON()
			still := map[string]bool{}
			for _, m := range credRefs.FindAllStringSubmatch(string(rest), -1) {
				still[m[1]] = true
			}
			gone = slices.DeleteFunc(gone, func(c string) bool { return still[c] })
			return nil
		})
	})
	if err != nil {
		return r.editError(err)
	}
	if cpath, err := r.credsPath(); err == nil {
		if len(gone) > 0 {
			if err := creds.Update(cpath, nil, gone); err != nil {
				fmt.Fprintf(r.env.Stderr, "warning: the server's credentials stay in creds.json: %s\n", launcher.Escape(err.Error()))
			}
		}
		if resource != "" {
			if _, err := creds.ForgetTokens(cpath, resource); err != nil {
				fmt.Fprintf(r.env.Stderr, "warning: the server's OAuth grants stay in creds.json: %s\n", launcher.Escape(err.Error()))
			}
		}
	}
	return r.done(fmt.Sprintf("removed server %q from %s", name, path), name, path, nil)
}

// editError reports a failed edit: a name not found is a usage error.
func (r *run) editError(err error) int {
	if strings.HasPrefix(err.Error(), "no server ") {
		return r.usagef("%v", err)
	}
	return r.configError(err)
}

// checkFile returns a confedit check: the strict configuration parser,
// with the stored credentials.
func (r *run) checkFile(path string) func([]byte) error {
	return func(data []byte) error {
		lookup, err := r.lookupCred(nil)
		if err != nil {
			return err
		}
		_, err = config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
		return err
	}
}

// setEnabled sets a server's enabled state in its JSON object.
func setEnabled(obj *confedit.Object, on bool) {
	if _, ok := obj.Get("disabled"); ok {
		obj.SetValue("disabled", !on)
		if _, ok := obj.Get("enabled"); !ok {
			return
		}
	}
	obj.SetValue("enabled", on)
}

// runEnable enables a server, after checking that it starts.
func runEnable(r *run) int { return r.setEnabled(true) }

// runDisable disables a server.
func runDisable(r *run) int { return r.setEnabled(false) }

func (r *run) setEnabled(on bool) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	name := r.args[0]
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	edit := func(o *confedit.Object) error {
		return editServers(o, func(servers *confedit.Object) error {
			if _, ok := servers.Get(name); !ok {
				return errNoServer(name, path)
			}
			obj, err := servers.Object(name)
			if err != nil {
				return err
			}
			setEnabled(obj, on)
			return servers.SetValue(name, obj)
		})
	}
	if on {
		old, err := confedit.ReadFile(path)
		if err != nil {
			return r.configError(err)
		}
		doc, err := confedit.ParseObject(old)
		if err != nil {
			return r.configError(fmt.Errorf("%s: %w", path, err))
		}
		if err := edit(doc); err != nil {
			return r.editError(err)
		}
		lookup, err := r.lookupCred(nil)
		if err != nil {
			return r.configError(err)
		}
		data, _ := doc.MarshalJSON()
		cfg, err := config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
		if err != nil {
			return r.configError(err)
		}
		if code := r.verify(cfg, name); code != ExitOK {
			return code
		}
	}
	if err := confedit.Edit(path, &confedit.Options{Check: r.checkFile(path)}, edit); err != nil {
		return r.editError(err)
	}
	word := "disabled"
	if on {
		word = "enabled"
	}
	return r.done(fmt.Sprintf("%s server %q in %s", word, name, path), name, path, nil)
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
		r.host.Refresh(r.ctx, name) //nolint:errcheck // see above
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

// suggestServer is " (did you mean X?)" for a server name close to name.
func suggestServer(cfg *config.Config, name string) string {
	for _, s := range cfg.Servers {
		if strings.EqualFold(s.Name, name) {
			return fmt.Sprintf(" (did you mean %q?)", s.Name)
		}
	}
	return ""
}

// SplitCommand splits a command line written as in a POSIX shell into
// its words: quotes and backslashes are honoured, and no shell runs. A
// variable ($VAR, ${VAR}) and ~ become configuration references (${VAR},
// ${HOME}) expanded when the server starts, never now; a literal "${"
// becomes "$${". Command substitution, and anything else that would need
// a shell, is an error.
func SplitCommand(line string) ([]string, error) {
	const open, shut = "\uE000", "\uE001" // private-use marks around a variable's name
	fields, err := shell.Fields(line, func(name string) string {
		if name == "IFS" { // what unquoted expansions are split on
			return " \t\n"
		}
		return open + name + shut
	})
	if err != nil {
		return nil, err
	}
	for i, f := range fields {
		f = strings.ReplaceAll(f, "${", "$${")
		f = strings.ReplaceAll(f, open, "${")
		fields[i] = strings.ReplaceAll(f, shut, "}")
	}
	return fields, nil
}

// isURL reports whether s is an http or https URL with a host.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// SuggestName proposes a server name: from the URL's host
// ("https://mcp.github.com/x" is "github"), else from the package a
// command runs ("npx -y @modelcontextprotocol/server-filesystem" is
// "filesystem"), else from the command's file name.
func SuggestName(rawURL string, argv []string) string {
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil {
			return "server"
		}
		host := u.Hostname()
		if net.ParseIP(host) != nil || host == "localhost" {
			return clean(lastSegment(strings.Trim(u.Path, "/")), "local")
		}
		labels := strings.Split(host, ".")
		for len(labels) > 2 && slices.Contains([]string{"www", "mcp", "api", "app", "server"}, labels[0]) {
			labels = labels[1:]
		}
		if len(labels) == 2 && slices.Contains([]string{"mcp", "api", "www"}, labels[0]) {
			labels = labels[1:]
		}
		return clean(labels[0], "server")
	}
	if len(argv) == 0 {
		return "server"
	}
	pkg := ""
	switch filepath.Base(argv[0]) {
	case "npx", "bunx", "uvx", "pnpx", "pipx", "docker", "pnpm", "yarn", "npm", "uv", "deno", "bun":
		skip := map[string]bool{"run": true, "exec": true, "dlx": true, "x": true, "tool": true, "-i": true, "--rm": true, "-y": true, "--yes": true}
		for _, a := range argv[1:] {
			if skip[a] || strings.HasPrefix(a, "-") {
				continue
			}
			pkg = a
			break
		}
	}
	if pkg == "" {
		pkg = filepath.Base(argv[0])
		if (pkg == "node" || pkg == "python" || pkg == "python3") && len(argv) > 1 {
			pkg = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(argv[len(argv)-1]), ".js"), ".py")
		}
	}
	if at := strings.LastIndex(pkg, "@"); at > 0 {
		pkg = pkg[:at] // a version
	}
	pkg = lastSegment(strings.TrimPrefix(pkg, "npm:"))
	pkg, _, _ = strings.Cut(pkg, ":") // a docker tag
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		pkg = strings.TrimPrefix(pkg, p)
	}
	for _, s := range []string{"-mcp-server", "-server", "-mcp", "_mcp"} {
		pkg = strings.TrimSuffix(pkg, s)
	}
	return clean(pkg, "server")
}

func lastSegment(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// clean keeps a-z 0-9 _ - of s, lowercased; def when nothing is left.
func clean(s, def string) string {
	out := strings.Map(func(c rune) rune {
		switch {
		case c >= 'A' && c <= 'Z':
			return c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
			return c
		case c == '.':
			return '-'
		}
		return -1
	}, s)
	out = strings.Trim(out, "-_")
	if out == "" {
		return def
	}
	return out
}

// checkServers reports the enabled servers that do not work (servers
// --check): exit 3 when there is one.
func (r *run) checkServers(servers []host.ServerStatus) int {
	bad := 0
	for _, s := range servers {
		switch s.State {
		case host.StateReady, host.StateIdle, host.StateDisabled:
			continue
		}
		bad++
		fmt.Fprintf(r.env.Stderr, "switchboard: server %q is %s: %s\n", s.Name, s.State, launcher.Escape(firstLine(s.LastError)))
	}
	if bad > 0 {
		return ExitUpstream
	}
	return ExitOK
}
