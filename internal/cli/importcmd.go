package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
	"github.com/switchboard-mcp/switchboard/internal/creds"

	"github.com/switchboard-mcp/switchboard/internal/clientconf"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// connectFlags are the flags of `switchboard connect` and `disconnect`.
type connectFlags struct {
	file     string // the client's file, instead of where the client keeps it
	print    bool   // connect: print the entry, write nothing
	stdio    bool   // connect: a stdio entry, whatever the client
	tokenEnv string // connect: the token header refers to this variable
	addr     string // connect: where serve listens
	force    bool   // disconnect: keep servers added back since connect
}

func (f *connectFlags) register(fs *flag.FlagSet, name string) {
	fs.StringVar(&f.file, "file", "", "the client's configuration `file` (default: where the client keeps it)")
	if name == "disconnect" {
		fs.BoolVar(&f.force, "force", false, "keep a server that was moved out and has since been added back with other content")
		return
	}
	fs.BoolVar(&f.print, "print", false, "print the entry that would be written, and where; write nothing")
	fs.BoolVar(&f.stdio, "stdio", false, "have the client launch `switchboard serve --stdio` instead of reaching the HTTP gateway (Claude Desktop always does)")
	fs.StringVar(&f.addr, "http", "", "the `addr` 'switchboard serve --http' listens on (default 127.0.0.1:8939; a bare port means 127.0.0.1:PORT)")
	fs.StringVar(&f.tokenEnv, "token-env", "", "write the token header as a reference to environment `variable` VAR, as 'serve --token-env VAR' reads it (default: the token kept in the home)")
}

// clientNames lists the clients connect and disconnect know.
func clientNames() string {
	var ids []string
	for _, c := range clientconf.Clients() {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, "|")
}

// clientFile resolves the client named by the first argument and its file.
func (r *run) clientFile() (*clientconf.Client, string, int, bool) {
	c, err := clientconf.Lookup(r.args[0])
	if err != nil {
		return nil, "", r.usagef("%s: %v", r.cmd.name, err), false
	}
	if r.conn.file != "" {
		return c, r.conn.file, ExitOK, true
	}
	p, err := r.place()
	if err != nil {
		return nil, "", r.usagef("%s: cannot find %s's file: %v; name it with --file", r.cmd.name, c.Name, err), false
	}
	path, _ := c.Find(p)
	return c, path, ExitOK, true
}

// gatewayEntry is the entry that reaches this Switchboard: a stdio entry
// that launches it with this configuration and home for Claude Desktop
// (and with --stdio), else an HTTP entry for the gateway at --http (as
// serve reads it) with the token header.
func (r *run) gatewayEntry(c *clientconf.Client) (clientconf.Entry, error) {
	if r.conn.stdio || c.ID == "claude-desktop" {
		if r.conn.tokenEnv != "" {
			return clientconf.Entry{}, fmt.Errorf("--token-env is for the HTTP gateway; a stdio entry needs no token")
		}
		exe := r.env.Executable
		if exe == "" {
			exe = "switchboard"
		}
		return clientconf.Entry{Transport: clientconf.Stdio, Command: exe, Args: r.stdioArgs()}, nil
	}
	addr := serveAddr(r.conn.addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return clientconf.Entry{}, fmt.Errorf("--http %s: %v", r.conn.addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1" // every interface: the client is on this machine
	}
	url := "http://" + net.JoinHostPort(host, port) + frontdoor.DefaultPath
	e := clientconf.Entry{Transport: clientconf.HTTP, URL: url}
	if r.conn.tokenEnv != "" {
		e.BearerTokenEnvVar = r.conn.tokenEnv
		return e, nil
	}
	home, err := r.homeDir()
	if err != nil {
		return e, err
	}
	tok, _, err := keptToken(filepath.Join(home, TokenFile))
	if err != nil {
		return e, err
	}
	e.Headers = map[string]string{"Authorization": "Bearer " + tok}
	return e, nil
}

func runConnect(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := r.clientFile()
	if !ok {
		return code
	}
	gw, err := r.gatewayEntry(c)
	if err != nil {
		return r.usagef("connect: %v", err)
	}
	if r.conn.print && r.imp.move {
		return r.usagef("connect: --print shows the entry only; it does not go with --move")
	}
	// The entry holds the token kept in the home unless it refers to a
	// variable (--token-env) or launches serve --stdio.
	tokenFile := ""
	if gw.Transport != clientconf.Stdio && r.conn.tokenEnv == "" {
		home, _ := r.homeDir() // gatewayEntry read the token there
		tokenFile = filepath.Join(home, TokenFile)
	}
	if r.conn.print {
		return r.printEntry(c, path, gw, tokenFile)
	}
	if r.imp.move {
		// The client's servers go into Switchboard first, each checked;
		// unless every one is there, the client's file is left alone.
		if _, err := os.Stat(path); err != nil {
			return r.usagef("connect --move: %v", err)
		}
		if code, ok := r.importFrom([]importSource{{c, path}}, true); !ok || code != ExitOK {
			if code == ExitOK {
				code = ExitUsage
			}
			return code
		}
	}
	ch, err := clientconf.Connect(c, path, gw, clientconf.Options{Move: r.imp.move, Private: tokenFile != ""})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "connect: %v", err)
	}
	if r.json {
		out := map[string]any{"client": c.ID, "file": ch.Path, "backup": ch.Backup, "replaced": ch.Replaced, "private": tokenFile != ""}
		if r.imp.move {
			out["moved"] = append([]string{}, ch.Removed...)
			out["import"] = r.imported
		}
		return r.printJSON(out)
	}
	verb := "added"
	if ch.Replaced {
		verb = "updated"
	}
	fmt.Fprintf(r.env.Stdout, "%s: %s the %q entry in %s (backup: %s; 'switchboard disconnect %s' restores it)\n",
		c.Name, verb, clientconf.DefaultName, launcher.Escape(ch.Path), launcher.Escape(ch.Backup), c.ID)
	if tokenFile != "" {
		fmt.Fprintf(r.env.Stdout, "%s: the file holds the gateway's token now, so it is readable by you only (mode 0600); 'connect --token-env VAR' writes a reference to a variable instead\n", c.Name)
	}
	if len(ch.Removed) > 0 {
		fmt.Fprintf(r.env.Stdout, "%s: moved %s into Switchboard; the gateway is its one entry\n", c.Name, launcher.Escape(strings.Join(ch.Removed, ", ")))
	}
	return ExitOK
}

// printEntry prints the entry connect would write for c in path, with the
// token kept in tokenFile ("" when the entry holds none) masked: a secret
// is never printed. It says how to get the real one.
func (r *run) printEntry(c *clientconf.Client, path string, gw clientconf.Entry, tokenFile string) int {
	gw.Name = clientconf.DefaultName
	if tokenFile != "" {
		gw.Headers = map[string]string{"Authorization": "Bearer " + maskedToken}
	}
	b, err := clientconf.Render(c, gw)
	if err != nil {
		return r.usagef("connect: %v", err)
	}
	if r.json {
		out := map[string]string{"client": c.ID, "file": path, "entry": string(b)}
		if tokenFile != "" {
			out["tokenFile"] = tokenFile
		}
		return r.printJSON(out)
	}
	fmt.Fprintf(r.env.Stdout, "# %s: %s\n%s", c.Name, launcher.Escape(path), b)
	if tokenFile != "" {
		fmt.Fprintf(r.env.Stdout, "# the token is masked: it is kept in %s (mode 0600); 'switchboard connect %s' writes the real one, or use --token-env VAR to refer to a variable holding it\n",
			launcher.Escape(tokenFile), c.ID)
	}
	return ExitOK
}

// maskedToken stands for the gateway's token in a printed entry.
const maskedToken = "[redacted]"

func runDisconnect(r *run) int {
	if !r.wantArgs(1, 1) {
		return ExitUsage
	}
	c, path, code, ok := r.clientFile()
	if !ok {
		return code
	}
	ch, err := clientconf.Disconnect(c, path, clientconf.Options{Force: r.conn.force})
	if err != nil {
		return r.failf(ExitUsage, codeConfig, "disconnect: %v", err)
	}
	if r.json {
		return r.printJSON(map[string]any{"client": c.ID, "file": ch.Path, "removed": ch.After == nil, "restored": ch.Restored})
	}
	if ch.After == nil {
		fmt.Fprintf(r.env.Stdout, "%s: removed %s, which connect had created\n", c.Name, launcher.Escape(ch.Path))
		return ExitOK
	}
	fmt.Fprintf(r.env.Stdout, "%s: took the %q entry out of %s", c.Name, clientconf.DefaultName, launcher.Escape(ch.Path))
	if len(ch.Restored) > 0 {
		fmt.Fprintf(r.env.Stdout, " and put back %s", launcher.Escape(strings.Join(ch.Restored, ", ")))
	}
	fmt.Fprintln(r.env.Stdout)
	return ExitOK
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

func (f *importFlags) register(fs *flag.FlagSet, name string, noVerify *bool) {
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

// place is where the clients' user files are: the user's home directory
// ($HOME, %USERPROFILE% on Windows) and the environment.
func (r *run) place() (clientconf.Place, error) {
	key := "HOME"
	if runtime.GOOS == "windows" {
		key = "USERPROFILE"
	}
	home, ok := r.env.LookupEnv(key)
	if !ok || home == "" {
		return clientconf.Place{}, fmt.Errorf("$%s is not set", key)
	}
	return clientconf.Place{Home: home, OS: runtime.GOOS, Getenv: func(k string) string {
		v, _ := r.env.LookupEnv(k)
		return v
	}}, nil
}

// importSource is one client file to import from.
type importSource struct {
	client *clientconf.Client
	path   string
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

// importJSON is an item as import --json reports it.
type importJSON struct {
	Name        string   `json:"name"`
	From        string   `json:"from"` // the name in the client's file
	Client      string   `json:"client"`
	File        string   `json:"file"`
	Transport   string   `json:"transport"`
	Status      string   `json:"status"` // add (--dry-run), added, skipped, failed
	Reason      string   `json:"reason,omitempty"`
	Replaces    string   `json:"replaces,omitempty"`
	Credentials []string `json:"credentials"`
	Prompts     []string `json:"prompts"`
}

// importSources finds the files to import from: --from's client or file,
// else every client file found in the user's home and the working
// directory.
func (r *run) importSources(from string) ([]importSource, error) {
	if from == "" {
		found, err := r.discover()
		if err != nil {
			return nil, err
		}
		var out []importSource
		for _, f := range found {
			out = append(out, importSource{f.Client, f.Path})
		}
		return out, nil
	}
	c, err := clientconf.Lookup(from)
	if err != nil {
		data, rerr := os.ReadFile(from)
		if rerr != nil {
			if strings.ContainsAny(from, `/\.`) {
				return nil, fmt.Errorf("--from %s: %v", from, rerr)
			}
			return nil, fmt.Errorf("--from: %v, and no file %s", err, from)
		}
		return []importSource{{sniffClient(from, data), from}}, nil
	}
	found, err := r.discover()
	if err != nil {
		return nil, err
	}
	var out []importSource
	for _, f := range found {
		if f.Client == c {
			out = append(out, importSource{f.Client, f.Path})
		}
	}
	if len(out) == 0 {
		p, _ := r.place()
		where := c.Paths(p)
		if wd, err := os.Getwd(); err == nil && c.ProjectPath(wd) != "" {
			where = append(where, c.ProjectPath(wd))
		}
		return nil, fmt.Errorf("no %s configuration found (looked at %s)", c.Name, strings.Join(where, ", "))
	}
	return out, nil
}

// sniffClient picks the client of a file named on the command line: the
// client whose usual place it is, by its last two path elements
// (".gemini/settings.json", "Claude/claude_desktop_config.json"), else the
// client whose shape it has (clientconf.Sniff).
func sniffClient(path string, data []byte) *clientconf.Client {
	tail := func(p string) string {
		return filepath.Join(filepath.Base(filepath.Dir(p)), filepath.Base(p))
	}
	want := tail(path)
	if abs, err := filepath.Abs(path); err == nil {
		want = tail(abs)
	}
	p := clientconf.Place{Home: "/home", OS: runtime.GOOS}
	byBase := map[string][]*clientconf.Client{} // a file name → the clients that use it
	for _, c := range clientconf.Clients() {
		places := c.Paths(p)
		if pp := c.ProjectPath("/project"); pp != "" {
			places = append(places, pp)
		}
		for _, place := range places {
			if tail(place) == want {
				return c
			}
			b := filepath.Base(place)
			if !slices.Contains(byBase[b], c) {
				byBase[b] = append(byBase[b], c)
			}
		}
	}
	if cs := byBase[filepath.Base(path)]; len(cs) == 1 {
		return cs[0] // a name only one client uses: claude_desktop_config.json, mcp_config.json
	}
	return clientconf.Sniff(path, data)
}

func (r *run) discover() ([]clientconf.Found, error) {
	p, err := r.place()
	if err != nil {
		return nil, fmt.Errorf("cannot find the clients' files: %v; name one with --from FILE", err)
	}
	wd, _ := os.Getwd()
	return clientconf.Discover(p, wd), nil
}

func runImport(r *run) int {
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
// that work. strict (connect --move) refuses to write anything unless
// every server of the files is in Switchboard afterwards. It returns the
// exit code and whether that is so.
func (r *run) importFrom(srcs []importSource, strict bool) (int, bool) {
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
	if strict && blocked {
		r.importReport(srcs, items, notes, "add")
		return r.failf(ExitUsage, codeConfig, "not every server of the file can be imported (see the notes above); nothing was moved"), false
	}
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
	if strict && failed > 0 {
		r.importReport(srcs, items, notes, "")
		return r.failf(ExitUpstream, "unavailable", "%d server(s) of %s do not work: nothing was imported or moved (fix them, or pass --no-verify)", failed, srcs[0].path), false
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
func (r *run) isGateway(e clientconf.Entry) bool {
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
func (r *run) importObject(e clientconf.Entry, secrets []clientconf.Secret, taken map[string]string, it *importItem) *confedit.Object {
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

// asker asks a person at a terminal.
type asker struct {
	f  *os.File
	in *bufio.Reader
	w  io.Writer
}

// asker returns an asker when stdin is a terminal, else nil.
func (r *run) asker() *asker {
	f, ok := r.env.Stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &asker{f, bufio.NewReader(f), r.env.Stderr}
}

func (a *asker) line(q string) (string, bool) {
	fmt.Fprint(a.w, q)
	s, err := a.in.ReadString('\n')
	if err != nil && s == "" {
		return "", false
	}
	return strings.TrimRight(s, "\r\n"), true
}

func (a *asker) password(q string) (string, bool) {
	fmt.Fprint(a.w, q)
	b, err := term.ReadPassword(int(a.f.Fd()))
	fmt.Fprintln(a.w)
	return string(b), err == nil
}

// promptSecret asks for a prompted credential, masked when the client
// marks it a password. A value given once serves every server that
// refers to it.
func (r *run) promptSecret(a *asker, it *importItem, s clientconf.Secret) (string, bool) {
	if v, ok := r.imp.secrets[s.Name]; ok {
		return v, true
	}
	q := fmt.Sprintf("%s (credential %s for server %q): ", launcher.Escape(s.Prompt), s.Name, it.name)
	var v string
	var ok bool
	if s.Password {
		v, ok = a.password(q)
	} else {
		v, ok = a.line(q)
	}
	if !ok || v == "" {
		return "", false
	}
	if r.imp.secrets == nil {
		r.imp.secrets = map[string]string{}
	}
	r.imp.secrets[s.Name] = v
	return v, true
}

// resolveClash settles a name it shares with clash, a server already
// there or imported before it: a person at a terminal chooses to rename,
// skip or replace; otherwise it is skipped.
func (r *run) resolveClash(it *importItem, clash string, a *asker, existing *confedit.Object, names map[string]*importItem) {
	free := func(n string) bool {
		if _, ok := names[strings.ToLower(n)]; ok {
			return false
		}
		for _, m := range existing.Members {
			if strings.EqualFold(m.Key, n) {
				return false
			}
		}
		return true
	}
	suggestion := it.name + "-" + it.src.client.ID
	for i := 2; !free(suggestion); i++ {
		suggestion = fmt.Sprintf("%s-%s-%d", it.name, it.src.client.ID, i)
	}
	_, isImported := names[strings.ToLower(clash)]
	why := fmt.Sprintf("a server named %q is there already", clash)
	if isImported {
		why = fmt.Sprintf("a server named %q is imported from another file", clash)
	}
	if a == nil || r.imp.dryRun {
		it.skip = why + ": import with --prefix P, or remove it first"
		if a != nil {
			it.skip = why + ": you will be asked to rename, skip or replace it"
		}
		return
	}
	opts := "[r]ename to " + suggestion + ", [s]kip"
	if !isImported {
		opts += ", re[p]lace"
	}
	for {
		ans, ok := a.line(fmt.Sprintf("Server %q from %s: %s. %s? ", launcher.Escape(it.entry.Name), launcher.Escape(it.src.path), launcher.Escape(why), opts))
		if !ok {
			it.skip = why
			return
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "r", "rename", "":
			it.name = suggestion
			return
		case "s", "skip":
			it.skip = why + ": skipped"
			return
		case "p", "replace":
			if !isImported {
				it.replace = clash
				return
			}
		}
	}
}

// describe is an entry in one line: its transport and command or URL
// (credentials in the URL's user part masked).
func describe(e clientconf.Entry) string {
	if e.Transport == clientconf.Stdio {
		return "stdio: " + shellQuote(append([]string{e.Command}, e.Args...))
	}
	u := e.URL
	if pu, err := url.Parse(u); err == nil && pu.User != nil {
		u = pu.Redacted()
	}
	return string(e.Transport) + ": " + u
}

type importNote struct {
	path string
	clientconf.Note
}

// showPlan prints, file by file, what import will add and skip and why.
func (r *run) showPlan(srcs []importSource, items []*importItem, notes []importNote) {
	if r.json {
		return
	}
	w := r.env.Stdout
	for _, src := range srcs {
		fmt.Fprintf(w, "%s: %s\n", src.client.Name, launcher.Escape(src.path))
		for _, it := range items {
			if it.src != src {
				continue
			}
			from := ""
			if it.name != it.entry.Name {
				from = fmt.Sprintf(" (%q in the file)", it.entry.Name)
			}
			if it.skip != "" {
				fmt.Fprintf(w, "  skip %s: %s\n", launcher.Escape(strconv.Quote(it.entry.Name)), launcher.Escape(it.skip))
				continue
			}
			verb := "add"
			if it.replace != "" {
				verb = fmt.Sprintf("replace %q with", it.replace)
			}
			fmt.Fprintf(w, "  %s %s%s: %s\n", verb, launcher.Escape(strconv.Quote(it.name)), launcher.Escape(from), launcher.Escape(describe(it.entry)))
			for _, c := range it.credIDs {
				if _, ok := it.creds[c]; ok {
					fmt.Fprintf(w, "      credential %s moves to creds.json\n", c)
				}
			}
			for _, p := range it.prompts {
				fmt.Fprintf(w, "      credential %s is asked for: %s\n", p.Name, launcher.Escape(p.Prompt))
			}
		}
		for _, n := range notes {
			if n.path == src.path {
				fmt.Fprintf(w, "  note: %s\n", launcher.Escape(n.Note.String()))
			}
		}
	}
}

// importReport reports the outcome: with --json the whole import as one
// object (kept for connect --move, which prints its own), else the
// servers added. status is what a server to be added is: "add" for the
// plan, "added" once written.
func (r *run) importReport(srcs []importSource, items []*importItem, notes []importNote, status string) int {
	files := make([]map[string]string, len(srcs))
	for i, s := range srcs {
		files[i] = map[string]string{"client": s.client.ID, "file": s.path}
	}
	servers := make([]importJSON, 0, len(items))
	for _, it := range items {
		j := importJSON{Name: it.name, From: it.entry.Name, Client: it.src.client.ID, File: it.src.path,
			Transport: string(it.entry.Transport), Status: status, Replaces: it.replace,
			Credentials: slices.Clone(it.credIDs), Prompts: []string{}}
		if j.Credentials == nil {
			j.Credentials = []string{}
		}
		for _, p := range it.prompts {
			j.Prompts = append(j.Prompts, p.Name)
		}
		switch {
		case it.skip != "":
			j.Status, j.Reason = "skipped", it.skip
		case it.failed != nil:
			j.Status, j.Reason = "failed", it.failed.f.Message
		case status == "":
			j.Status = "checked"
		}
		servers = append(servers, j)
	}
	ns := make([]string, len(notes))
	for i, n := range notes {
		ns[i] = n.path + ": " + n.Note.String()
	}
	r.imported = map[string]any{"files": files, "servers": servers, "notes": ns, "dryRun": r.imp.dryRun}
	if r.json {
		if r.imp.move {
			return ExitOK
		}
		return r.printJSON(r.imported)
	}
	w := r.env.Stdout
	if r.imp.dryRun {
		fmt.Fprintln(w, "dry run: nothing was written")
		return ExitOK
	}
	for _, it := range items {
		if it.skip != "" || it.failed != nil || status != "added" {
			continue
		}
		fmt.Fprintf(w, "added server %q", it.name)
		if names := sortedKeys(it.creds); len(names) > 0 {
			fmt.Fprintf(w, " (credentials %s kept in creds.json)", strings.Join(names, ", "))
		}
		fmt.Fprintln(w)
	}
	return ExitOK
}
