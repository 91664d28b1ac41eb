package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func importCommand(r *run) *command {
	f := &importFlags{}
	return &command{
		name: "import", args: "[--from CLIENT|FILE] [--dry-run] [--prefix P]",
		summary: "add the servers of your MCP clients' configurations (every one found, or --from one), each checked first; inline secrets move to creds.json",
		examples: []string{"switchboard import --dry-run", "switchboard import --from claude-desktop", "switchboard import --from ./mcp.json --prefix work-",
			"switchboard import --from vscode --secret PERPLEXITY_KEY=pplx-xxx"},
		flags: func(fs *pflag.FlagSet) {
			f.register(fs, "import", &r.edit.noVerify)
		},
		run: func(r *run) int { return (&importer{run: r, imp: f}).importAll() },
	}
}

// importFlags are the flags of `switchboard import`, and of `connect
// --move`, which imports first.
type importFlags struct {
	from    string            // a client's ID or a file; "" for every client found
	dryRun  bool              // show the plan, write nothing
	prefix  string            // every imported name is prefixed with it
	trust   bool              // the imported servers are marked trusted
	secrets map[string]string // --secret NAME=VALUE: prompted credentials given
	move    bool              // connect: import the client's servers, then keep only the gateway in its file
}

func (f *importFlags) register(fs *pflag.FlagSet, name string, noVerify *bool) {
	switch name {
	case "import":
		fs.StringVar(&f.from, "from", "", "import from `SOURCE` only: a client ("+clientNames()+") or a file in one of their shapes")
		fs.BoolVar(&f.dryRun, "dry-run", false, "show what would be added and skipped; write nothing")
	case "connect":
		fs.BoolVar(&f.move, "move", false, "also import the client's own servers (each checked) and take them out of its file, so the gateway is its one entry")
	default:
		return
	}
	fs.StringVar(&f.prefix, "prefix", "", "prefix every imported server's name with `P` (a way around name clashes)")
	fs.BoolVar(&f.trust, "trust", false, "mark the imported servers trusted (\"trust\": \"trusted\"), as 'add --trust' does")
	fs.BoolVar(noVerify, "no-verify", false, "save without connecting to each server first")
	fs.Func("secret", "the value of a prompted credential (`NAME=VALUE`, repeatable; the import's plan names them)", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || !config.ValidCredName(k) {
			return fmt.Errorf("want NAME=VALUE, NAME of A-Z a-z 0-9 _ . -")
		}
		if f.secrets == nil {
			f.secrets = map[string]string{}
		}
		f.secrets[k] = val
		return nil
	})
}

// importItem is one server of a source, and what becomes of it.
type importItem struct {
	src     importSource
	entry   clientconf.Entry
	name    string // the name in Switchboard
	obj     *confedit.Object
	creds   map[string]string   // credential name → value, stored on success
	prompts []clientconf.Secret // credentials to ask for (Name already final)
	credIDs []string            // every credential the server refers to
	replace string              // the existing server it replaces, if any
	skip    string              // why it is not imported; "" when it is
	same    bool                // skipped because Switchboard has it already
	failed  *saveError
}

// importer is an import under way: import's, or connect --move's.
type importer struct {
	*run
	imp *importFlags
	// imported is what the import did, as import --json prints it.
	imported map[string]any
	// left names the servers of the client's file that connect --move
	// leaves there, with why: not imported (a failed check, a clash, a
	// server the file describes in a way Switchboard cannot take).
	left []leftServer
}

// A leftServer is a server connect --move leaves in the client's file.
type leftServer struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// importAll imports the servers of --from, or of every client configuration
// found.
func (r *importer) importAll() int {
	if !r.wantArgs(0, 0) {
		return ExitUsage
	}
	srcs, err := r.importSources(r.imp.from)
	if err != nil {
		return r.usagef("import: %v", err)
	}
	if len(srcs) == 0 {
		if r.json {
			return r.printJSON(map[string]any{"files": []string{}, "servers": []importJSON{}, "notes": []string{}})
		}
		fmt.Fprintln(r.env.Stdout, "found no client configuration to import (name a file with --from FILE)")
		return ExitOK
	}
	code, _ := r.importFrom(srcs, false)
	return code
}

// importFrom imports the servers of srcs into the configuration: it shows
// the plan, then (unless --dry-run) checks each server and saves the ones
// that work. strict (connect --move) leaves out the project servers of a
// client's file (they stay in it) and records in r.left each server of
// the files that is not in Switchboard afterwards, which connect leaves
// where it is. It returns the exit code and whether every server of the
// files is in Switchboard afterwards.
func (r *importer) importFrom(srcs []importSource, strict bool) (int, bool) {
	path, err := r.editPath()
	if err != nil {
		return r.usagef("%v", err), false
	}
	cpath, err := r.credsPath()
	if err != nil {
		return r.configError(err), false
	}
	stored, err := creds.Load(cpath)
	if err != nil {
		return r.configError(err), false
	}
	old, err := confedit.ReadFile(path)
	if err != nil {
		return r.configError(err), false
	}
	if len(old) > 0 {
		// Switchboard's own file stays strict: an unknown field is an
		// error here, as everywhere, before anything is planned.
		if err := r.checkFile(path)(old); err != nil {
			return r.configError(err), false
		}
	}
	doc, err := confedit.ParseObject(old)
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err)), false
	}
	existing, err := doc.Object(serversKey(doc))
	if err != nil {
		return r.configError(fmt.Errorf("%s: %w", path, err)), false
	}

	var items []*importItem
	var notes []importNote
	blocked := false             // a server of a file that is not imported whole (strict)
	taken := map[string]string{} // credential name → value, stored or planned
	for k, v := range stored {
		taken[k] = v
	}
	for _, src := range srcs {
		res, err := clientconf.Read(src.client, src.path)
		if err != nil {
			return r.configError(err), false
		}
		for _, n := range res.Notes {
			notes = append(notes, importNote{src.path, n})
			if n.Server != "" && n.Key == "" {
				blocked = true
			}
		}
		for _, e := range res.Servers {
			if strict && e.Project != "" {
				continue // stays in the client's file: Move takes out its own servers only
			}
			it := &importItem{src: src, entry: e, creds: map[string]string{}}
			items = append(items, it)
			if r.isGateway(e) {
				it.skip, it.same = "the gateway itself", true
				continue
			}
			it.name = r.imp.prefix + importName(e.Name)
			it.obj = r.importObject(e, res.Secrets, taken, it)
		}
	}

	// Names: a clash with a server already there, or one imported earlier.
	names := map[string]*importItem{}
	ask := r.asker()
	for _, it := range items {
		if it.skip != "" {
			continue
		}
		var clash string
		for _, m := range existing.Members {
			if strings.EqualFold(m.Key, it.name) {
				clash = m.Key
				if sameJSON(m.Value, it.obj) {
					it.skip, it.same = fmt.Sprintf("Switchboard has server %q with this configuration already", m.Key), true
				}
			}
		}
		if it.skip != "" {
			continue
		}
		if other, ok := names[strings.ToLower(it.name)]; ok {
			if sameJSON(mustJSON(other.obj), it.obj) {
				it.skip, it.same = fmt.Sprintf("the same as %q from %s", other.name, other.src.path), true
				continue
			}
			clash = other.name
		}
		if clash != "" {
			r.resolveClash(it, clash, ask, existing, names)
		}
		if it.skip == "" {
			names[strings.ToLower(it.name)] = it
		}
	}
	if strict {
		for _, it := range items {
			if it.skip != "" && !it.same {
				blocked = true
			}
		}
	}

	r.showPlan(srcs, items, notes)
	// Prompted credentials: --secret, else a person at a terminal.
	if !r.imp.dryRun {
		for _, it := range items {
			if it.skip != "" {
				continue
			}
			for _, s := range it.prompts {
				v, ok := r.imp.secrets[s.Name]
				if !ok && ask != nil {
					v, ok = r.promptSecret(ask, it, s)
				}
				if !ok {
					it.failed = &saveError{ExitUpstream, failure{Code: codeConfig, Server: it.name,
						Message: fmt.Sprintf("server %q needs input %q (%s): run at a terminal, or pass --secret %s=VALUE", it.name, s.Name, s.Prompt, s.Name)}, nil}
					break
				}
				it.creds[s.Name] = v
			}
		}
	}

	if r.imp.dryRun {
		return r.importReport(srcs, items, notes, "add"), !blocked
	}

	// Check each server alone, with the credentials it brings.
	pending := map[string]string{}
	for _, it := range items {
		if it.skip != "" || it.failed != nil {
			continue
		}
		for k, v := range it.creds {
			pending[k] = v
		}
	}
	lookup, err := r.lookupCred(pending)
	if err != nil {
		return r.configError(err), false
	}
	for _, it := range items {
		if it.skip != "" || it.failed != nil {
			continue
		}
		cand, _ := confedit.ParseObject(old)
		if err := editServers(cand, func(servers *confedit.Object) error {
			if it.replace != "" {
				servers.Delete(it.replace)
			}
			return servers.SetValue(it.name, it.obj)
		}); err != nil {
			it.failed = &saveError{ExitUsage, failure{Code: codeConfig, Message: err.Error(), Server: it.name}, nil}
			continue
		}
		data, _ := cand.MarshalJSON()
		cfg, err := config.Parse(data, path, &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
		if err != nil {
			it.failed = &saveError{ExitUsage, failure{Code: codeConfig, Message: err.Error(), Server: it.name}, nil}
			continue
		}
		if r.edit.noVerify {
			fmt.Fprintf(r.env.Stderr, "warning: server %q saved without checking that it starts (--no-verify)\n", it.name)
			continue
		}
		it.failed = r.checkServer(cfg, it.name, "it is not imported")
	}
	failed := 0
	for _, it := range items {
		if it.failed != nil {
			failed++
			if !r.json {
				fmt.Fprintf(r.env.Stderr, "switchboard: %s\n", launcher.Escape(it.failed.f.Message))
				for _, a := range it.failed.advice {
					fmt.Fprintf(r.env.Stderr, "  %s\n", a)
				}
			}
		}
	}
	// Save: the credentials, then every server that works, in one edit.
	save := map[string]string{}
	var add []*importItem
	for _, it := range items {
		if it.skip == "" && it.failed == nil {
			add = append(add, it)
			for k, v := range it.creds {
				save[k] = v
			}
		}
	}
	if len(add) > 0 {
		r.sweepCreds(cpath)
		undo := func() error { return nil }
		if len(save) > 0 {
			var err error
			if undo, err = creds.Set(cpath, save); err != nil {
				return r.configError(err), false
			}
		}
		err := confedit.Edit(path, &confedit.Options{Check: r.checkFile(path)}, func(o *confedit.Object) error {
			return editServers(o, func(servers *confedit.Object) error {
				for _, it := range add {
					if it.replace != "" {
						servers.Delete(it.replace)
					} else if _, ok := servers.Get(it.name); ok {
						return fmt.Errorf("%s has a server %q now: another writer was first; run import again", path, it.name)
					}
					if err := servers.SetValue(it.name, it.obj); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			undo() //nolint:errcheck // best effort: the error reported is the file's
			return r.configError(err), false
		}
		creds.Saved(cpath)
	}
	if strict {
		for _, n := range notes {
			if n.Server != "" && n.Key == "" {
				r.left = append(r.left, leftServer{n.Server, n.Reason})
			}
		}
		for _, it := range items {
			switch {
			case it.failed != nil:
				r.left = append(r.left, leftServer{it.entry.Name, it.failed.f.Message})
			case it.skip != "" && !it.same:
				r.left = append(r.left, leftServer{it.entry.Name, it.skip})
			}
		}
	}
	code := r.importReport(srcs, items, notes, "added")
	if !r.json && len(add) > 0 {
		fmt.Fprintf(r.env.Stdout, "imported %d server(s) into %s\n", len(add), launcher.Escape(path))
	}
	if failed > 0 {
		return ExitUpstream, false
	}
	return code, !blocked
}

// importName makes a client's server name one Switchboard accepts:
// whitespace and unprintable characters become '-'.
func importName(name string) string {
	return strings.Map(func(c rune) rune {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return '-'
		}
		return c
	}, name)
}

// isGateway reports whether e is the gateway's own entry, which connect
// wrote: importing it would make Switchboard launch itself.
func (r *importer) isGateway(e clientconf.Entry) bool {
	if e.Transport == clientconf.Stdio {
		self := e.Command == r.env.Executable || strings.TrimSuffix(filepath.Base(e.Command), ".exe") == "switchboard"
		return self && slices.Contains(e.Args, "serve")
	}
	return e.Name == clientconf.DefaultName
}

// importObject writes e as a server of Switchboard's configuration. Its
// inline secrets become ${cred:NAME} references, under the name Read
// suggests unless creds.json (or this import) holds another value under
// it; their values go to it.creds, and the credentials to prompt for to
// it.prompts.
func (r *importer) importObject(e clientconf.Entry, secrets []clientconf.Secret, taken map[string]string, it *importItem) *confedit.Object {
	rename := map[string]string{} // ${Name} → ${cred:final}
	for _, s := range secrets {
		if s.Server != e.Name {
			continue
		}
		if _, done := rename["${"+s.Name+"}"]; done {
			continue
		}
		value := s.Value
		if value == "" {
			value = "\x00prompt " + it.src.path + " " + s.Name // shared by the file's servers, never equal to a value
		}
		final := s.Name
		for i := 2; ; i++ {
			if v, ok := taken[final]; !ok || v == value {
				break
			}
			final = fmt.Sprintf("%s_%d", s.Name, i)
		}
		taken[final] = value
		rename["${"+s.Name+"}"] = config.CredRef(final)
		it.credIDs = append(it.credIDs, final)
		if s.Value != "" {
			it.creds[final] = s.Value
		} else {
			p := s
			p.Name = final
			it.prompts = append(it.prompts, p)
		}
	}
	fix := func(v string) string {
		for from, to := range rename {
			v = strings.ReplaceAll(v, from, to)
		}
		return v
	}
	fixMap := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = fix(v)
		}
		return out
	}
	o := &confedit.Object{}
	switch e.Transport {
	case clientconf.Stdio:
		o.SetValue("command", fix(e.Command))
		if len(e.Args) > 0 {
			args := make([]string, len(e.Args))
			for i, a := range e.Args {
				args[i] = fix(a)
			}
			o.SetValue("args", args)
		}
		if len(e.Env) > 0 {
			o.SetValue("env", fixMap(e.Env))
		}
		cwd := e.Cwd
		if cwd == "" && e.Project != "" {
			cwd = e.Project // Claude Code starts a project's servers there
		}
		if cwd != "" {
			o.SetValue("cwd", fix(cwd))
		}
	default:
		o.SetValue("type", string(e.Transport))
		o.SetValue("url", fix(e.URL))
		if len(e.Headers) > 0 {
			o.SetValue("headers", fixMap(e.Headers))
		}
	}
	if e.BearerTokenEnvVar != "" {
		o.SetValue("bearerTokenEnvVar", e.BearerTokenEnvVar)
	}
	if e.EnabledTools != nil {
		o.SetValue("enabledTools", e.EnabledTools)
	}
	if e.DisabledTools != nil {
		o.SetValue("disabledTools", e.DisabledTools)
	}
	if r.imp.trust {
		o.SetValue("trust", string(config.TrustTrusted))
	}
	if e.Disabled {
		o.SetValue("enabled", false)
	}
	return o
}

func mustJSON(o *confedit.Object) json.RawMessage {
	b, _ := o.MarshalJSON()
	return b
}

// sameJSON reports whether raw and o hold the same JSON value.
func sameJSON(raw json.RawMessage, o *confedit.Object) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal(mustJSON(o), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}
