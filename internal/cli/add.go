package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/confedit"
)

// entryFlags are the settings of a server that add takes as flags (and
// the form as answers).
type entryFlags struct {
	env       []string // --env KEY=VALUE
	headers   []string // --header 'K: V'
	bearerEnv string   // --bearer-env VAR
	bearer    string   // a bearer token typed into the form; kept in creds.json
	transport string   // --transport http|sse
	trust     bool
	disabled  bool
}

func addCommand(r *run) *command {
	f := &entryFlags{}
	rf := &registryFlags{}
	return &command{
		name: "add", args: "[NAME] URL | [NAME] -- COMMAND [ARGS...] | --registry NAME[@VERSION] [NAME]",
		summary: "add a server, after checking that it starts; --env and --header values are kept in creds.json; without arguments at a terminal, a form asks; --registry adds one from the MCP registry, held until approved",
		examples: []string{"switchboard add -- npx -y @modelcontextprotocol/server-filesystem /srv/docs",
			`switchboard add files 'npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"'`,
			"switchboard add gh --env GITHUB_TOKEN=ghp_xxx -- npx -y @modelcontextprotocol/server-github",
			"switchboard add https://mcp.example.com/mcp --bearer-env EXAMPLE_TOKEN",
			"switchboard add legacy http://127.0.0.1:9001/sse --transport sse --header 'X-Api-Key: k'",
			"switchboard add --registry io.github.modelcontextprotocol/filesystem@1.0.2 files --var target_dir=/srv/docs",
			"switchboard add --registry io.github.brave/brave-search-mcp-server --env BRAVE_API_KEY=xxx"},
		flags: func(fs *pflag.FlagSet) {
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
			r.edit.scopeFlag(fs)
			r.edit.noVerifyFlag(fs)
			rf.flags(fs)
		},
		run: func(r *run) int {
			if rf.ref != "" {
				return runAddRegistry(r, f, rf)
			}
			if rf.url != "" || rf.pkg != 0 || rf.remote || len(rf.vars) > 0 {
				return r.usagef("--registry-url, --package, --remote and --var go with --registry NAME[@VERSION]")
			}
			return runAdd(r, f)
		},
		completeFiles: true, // a command, a file among its arguments
	}
}

// runAdd adds a server: switchboard add [NAME] URL, or
// switchboard add [NAME] -- COMMAND [ARGS...]; without arguments at a
// terminal, in the form.
func runAdd(r *run, f *entryFlags) int {
	if len(r.args) == 0 && r.dashAt < 0 {
		if in, ok := r.formInput(); ok {
			return r.form(in, "", &formValues{transport: "http"}, nil)
		}
	}
	e, err := r.addEntry(f)
	if err != nil {
		return r.usagef("%v", err)
	}
	return r.save(e)
}

// addEntry builds the entry of add's arguments and flags f.
func (r *run) addEntry(f *entryFlags) (*entry, error) {
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
	return entryOf(name, rawURL, argv, f)
}

// entryOf builds the entry of server name: at rawURL, or running argv
// (its words as the configuration has them), with f's settings.
func entryOf(name, rawURL string, argv []string, f *entryFlags) (*entry, error) {
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
	if err := e.moveEnvSecrets(); err != nil {
		return nil, err
	}
	if err := e.moveArgSecrets(); err != nil {
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

// jsonSyntax says where data is not valid JSON: "is not valid JSON at line
// 2, column 5: invalid character ...", or "ends early"; nil when it is.
func jsonSyntax(data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	se, ok := errors.AsType[*json.SyntaxError](err)
	if !ok {
		return nil // valid, or not a syntax error: a type error is reported later
	}
	at := min(int(max(se.Offset, 1)), len(data))
	if at == len(data) && strings.Contains(se.Error(), "unexpected end") {
		return errors.New("ends early: a closing quote, ] or } is missing")
	}
	before := data[:at]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return fmt.Errorf("is not valid JSON at line %d, column %d: %v", line, col, se)
}

// checkArgument checks add-json's argument as a server's configuration on
// its own, so that a problem names the argument and the JSON path within
// it ("the JSON argument: $.comand: unknown field"), not the configuration
// file it would be written to.
func (r *run) checkArgument(e *entry) error {
	doc := &confedit.Object{}
	servers := &confedit.Object{}
	if err := servers.SetValue(e.name, e.obj); err != nil {
		return err
	}
	if err := doc.SetValue("mcpServers", servers); err != nil {
		return err
	}
	data, err := doc.MarshalJSON()
	if err != nil {
		return err
	}
	lookup, err := r.lookupCred(e.creds)
	if err != nil {
		return err
	}
	_, err = config.Parse(data, "", &config.LoadOptions{LookupEnv: r.env.LookupEnv, LookupCred: lookup})
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var msgs []string
	for _, err := range errs {
		ce, ok := errors.AsType[*config.Error](err)
		if !ok {
			msgs = append(msgs, err.Error())
			continue
		}
		path := ce.Path
		for _, p := range []string{"$.mcpServers." + e.name, "$.mcpServers[" + strconv.Quote(e.name) + "]"} {
			if rest, ok := strings.CutPrefix(path, p); ok {
				path = "$" + rest
			}
		}
		switch {
		case path == "$" && strings.Contains(ce.Msg, "server name"):
			msgs = append(msgs, fmt.Sprintf("NAME %q: %s", e.name, ce.Msg))
		case path == "$":
			msgs = append(msgs, fmt.Sprintf("the JSON argument: %s", ce.Msg))
		case path == ce.Path:
			msgs = append(msgs, fmt.Sprintf("server %q: %s", e.name, ce.Msg))
		default:
			msgs = append(msgs, fmt.Sprintf("the JSON argument: %s: %s", path, ce.Msg))
		}
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// SplitCommand splits a command line written as in a POSIX shell into
// its words: quotes and backslashes are honoured, and no shell runs. A
// variable ($VAR, ${VAR}) and ~ become configuration references (${VAR},
// ${HOME}) expanded when the server starts, never now; a literal "${"
// becomes "$${". Command substitution, and anything else that would need
// a shell, is an error.
func SplitCommand(line string) ([]string, error) {
	const open, shut = "\uE000", "\uE001" // private-use marks around a variable's name
	var words []*syntax.Word
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(line)) {
		if err != nil {
			return nil, err
		}
		words = append(words, w)
	}
	cfg := &expand.Config{
		Env: expand.FuncEnviron(func(name string) string {
			if name == "IFS" { // what unquoted expansions are split on
				return " \t\n"
			}
			return open + name + shut
		}),
		// Without a shell there is no process to substitute. (Left nil,
		// the expander would call it: mvdan.cc/sh v3.14.1 checks for a
		// nil command substitution, not for a nil process substitution.)
		ProcSubst: func(*syntax.ProcSubst) (string, error) {
			return "", errors.New("process substitution needs a shell")
		},
	}
	fields, err := expand.Fields(cfg, words...)
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
// "filesystem"), else from the script node or python runs (see
// scriptName), else from the command's file name.
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
		if pkg == "node" || pkg == "python" || pkg == "python3" {
			for _, a := range argv[1:] {
				if !strings.HasPrefix(a, "-") {
					pkg = scriptName(a)
					break
				}
			}
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

// scriptName names the program a script path belongs to: the package
// under node_modules ("…/node_modules/@scope/server-memory/dist/index.js"
// is "@scope/server-memory"), else the file's name without its extension
// unless that says nothing ("index", "main"), else the nearest directory
// that is not a build output ("~/weather/build/index.js" is "weather").
func scriptName(path string) string {
	path = filepath.ToSlash(path)
	if i := strings.LastIndex(path, "node_modules/"); i >= 0 {
		rest := strings.Split(path[i+len("node_modules/"):], "/")
		if strings.HasPrefix(rest[0], "@") && len(rest) > 1 {
			return rest[0] + "/" + rest[1]
		}
		return rest[0]
	}
	parts := strings.Split(path, "/")
	base := parts[len(parts)-1]
	if ext := filepath.Ext(base); slices.Contains([]string{".js", ".mjs", ".cjs", ".ts", ".py"}, ext) {
		base = strings.TrimSuffix(base, ext)
	}
	if !slices.Contains([]string{"index", "main", "__main__", "server", "cli", "app", "mod", "stdio"}, base) {
		return base
	}
	for i := len(parts) - 2; i >= 0; i-- {
		if !slices.Contains([]string{"", ".", "..", "dist", "build", "lib", "src", "bin", "out", "esm", "cjs"}, parts[i]) {
			return parts[i]
		}
	}
	return base
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
