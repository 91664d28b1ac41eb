package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// The editing commands: add, add-json, remove, enable, disable, get.
// add, add-json and enable connect to the server and discover it before
// anything is written (unless --no-verify); a failure writes nothing and
// exits 3. Values given for env and headers are credentials: they go to
// creds.json in the home, and the configuration references them as
// ${cred:NAME}. No command prints a credential's value.

// editFlags are the flags that the commands editing the configuration
// (add, add-json, edit, remove, enable, disable, import, connect --move)
// share with the code that saves an edit: where it goes, and whether the
// server is checked first. The control API's edits for serve go to the
// user's configuration, checked.
type editFlags struct {
	scope    string // user | project
	noVerify bool
}

// scopeFlag registers --scope, where an editing command writes.
func (f *editFlags) scopeFlag(fs *pflag.FlagSet) {
	fs.StringVar(&f.scope, "scope", "user", "`where`: user (the configuration file) or project (.mcp.json in the working directory)")
}

// noVerifyFlag registers --no-verify.
func (f *editFlags) noVerifyFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noVerify, "no-verify", false, "save without connecting to the server first")
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

// sweepCreds deletes from creds.json what an edit killed before it saved
// the configuration left there (creds.Sweep): the credentials it added
// that neither the configuration nor the working directory's project file
// refers to. It says what it deleted.
func (r *run) sweepCreds(cpath string) {
	var files [][]byte
	home, _ := r.homeDir()
	if p, _, err := config.Locate(home, r.cfgFile); err == nil {
		if b, err := os.ReadFile(p); err == nil {
			files = append(files, b)
		}
	}
	if b, err := os.ReadFile(filepath.Join(r.workDir(), config.ProjectFileName)); err == nil {
		files = append(files, b)
	}
	used := func(name string) bool {
		ref := []byte(config.CredRef(name))
		return slices.ContainsFunc(files, func(b []byte) bool { return bytes.Contains(b, ref) })
	}
	removed, err := creds.Sweep(cpath, used)
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "warning: creds.json: %s\n", launcher.Escape(err.Error()))
	}
	if len(removed) > 0 {
		fmt.Fprintf(r.env.Stderr, "switchboard: removed from creds.json what an interrupted command added for a server it never saved: %s\n",
			launcher.Escape(strings.Join(removed, ", ")))
	}
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

// errNoServer is the error for a name the file's servers do not have.
func errNoServer(name, path string, servers *confedit.Object) error {
	names := make([]string, len(servers.Members))
	for i, m := range servers.Members {
		names[i] = m.Key
	}
	return fmt.Errorf("no server %q in %s%s", name, path, didYouMean(name, names))
}

// entry is a server's configuration being added: its JSON object, and
// the credentials it references that are not stored yet.
type entry struct {
	name  string
	obj   *confedit.Object
	creds map[string]string
	// own are the credentials of the server edited that no other server
	// references: saving may replace their values.
	own map[string]bool
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

// moveEnvSecrets replaces each literal secret in the values of e.obj's
// env (config.SecretEnv: a secret-named variable's or a token-shaped
// value, a connection string's password) by a ${cred:NAME} reference
// under the name import gives it (config.EnvCredName), keeping the value
// in e.creds. Other values stay as written.
func (e *entry) moveEnvSecrets() error {
	m, err := e.obj.Object("env")
	if err != nil || len(m.Members) == 0 {
		return err
	}
	for i, mem := range m.Members {
		var v string
		if json.Unmarshal(mem.Value, &v) != nil {
			continue // not a string: the strict parser says so
		}
		before, secret, after, ok := config.SecretEnv(mem.Key, v)
		if !ok {
			continue
		}
		name := e.credName(config.EnvCredName(mem.Key, before == "" && after == ""), secret)
		b, _ := json.Marshal(before + config.CredRef(name) + after)
		m.Members[i].Value = b
	}
	return e.obj.SetValue("env", m)
}

// moveArgSecrets does for e.obj's args what moveEnvSecrets does for its
// env, by config.SecretArg (--api-key VALUE, a token, a connection
// string's password) and config.ArgCredName.
func (e *entry) moveArgSecrets() error {
	raw, ok := e.obj.Get("args")
	if !ok {
		return nil
	}
	var args []string
	if json.Unmarshal(raw, &args) != nil {
		return nil // not strings: the strict parser says so
	}
	changed := false
	for i := range args {
		flag, before, secret, after, ok := config.SecretArg(args, i)
		if !ok {
			continue
		}
		args[i] = before + config.CredRef(e.credName(config.ArgCredName(e.name, flag), secret)) + after
		changed = true
	}
	if !changed {
		return nil
	}
	return e.obj.SetValue("args", args)
}

// credName keeps value in e.creds under want, or under the name
// config.FreeCredName gives it when another of e's values has want.
func (e *entry) credName(want, value string) string {
	name := config.FreeCredName(e.name, want, value, func(n string) (string, bool) { v, ok := e.creds[n]; return v, ok })
	e.creds[name] = value
	return name
}

// rename gives e's credentials the names placed maps them to (as
// creds.Place placed them), in e.creds and in e.obj's references.
func (e *entry) rename(placed map[string]string) error {
	changed := false
	for from, to := range placed {
		changed = changed || from != to
	}
	if !changed {
		return nil
	}
	data, err := e.obj.MarshalJSON()
	if err != nil {
		return err
	}
	text := credRefs.ReplaceAllStringFunc(string(data), func(ref string) string {
		if to, ok := placed[credRefs.FindStringSubmatch(ref)[1]]; ok {
			return config.CredRef(to)
		}
		return ref
	})
	obj, err := confedit.ParseObject([]byte(text))
	if err != nil {
		return err
	}
	*e.obj = *obj
	renamed := make(map[string]string, len(e.creds))
	for from, v := range e.creds {
		if to, ok := placed[from]; ok {
			from = to
		}
		renamed[from] = v
	}
	e.creds = renamed
	return nil
}

// credRefs finds the ${cred:NAME} references in a server's raw JSON.
var credRefs = regexp.MustCompile(`\$\{cred:([A-Za-z0-9_.-]+)\}`)

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

// runEnable enables a server, after checking that it starts.

// runDisable disables a server.

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
				return errNoServer(name, path, servers)
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

// suggestServer is " (did you mean X?)" for a server name close to name.
func suggestServer(cfg *config.Config, name string) string {
	names := make([]string, len(cfg.Servers))
	for i, s := range cfg.Servers {
		names[i] = s.Name
	}
	return didYouMean(name, names)
}

// didYouMean is " (did you mean X?)" for the one of names that name most
// likely misspells (the same letters in another case, or a few edits
// away), or "".
func didYouMean(name string, names []string) string {
	best, dist := "", max(2, len(name)/3)+1
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
		if d := suggest.Distance(strings.ToLower(name), strings.ToLower(n)); d < dist {
			best, dist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
