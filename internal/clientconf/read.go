package clientconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/bytesize"
)

// maxFile caps the size of a client file Read or Connect accepts: Claude
// Code's ~/.claude.json carries history and grows, but not to this.
const maxFile = 64 << 20

// Read reads the servers of the client's file at path. A missing file is an
// error wrapping fs.ErrNotExist. The file is never written.
func Read(c *Client, path string) (*Result, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	res, err := Parse(c, path, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

func readFile(path string) ([]byte, error) {
	b, err := bytesize.ReadFile(path, maxFile)
	if errors.Is(err, bytesize.ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, err
}

// Parse is Read on bytes already read; path names the file (its base name
// selects VS Code's settings.json shape).
func Parse(c *Client, path string, data []byte) (*Result, error) {
	if c.Format == TOML {
		return parseTOML(c, data)
	}
	return parseJSON(c, path, data)
}

// rawServer is one server's members, decoded as JSON.
type rawServer struct {
	name string
	keys map[string]json.RawMessage
}

func parseJSON(c *Client, path string, data []byte) (*Result, error) {
	root, data, dups, err := readJSONC(data)
	if err != nil {
		return nil, err
	}
	if root.Kind != jsonscan.KindObject {
		return nil, errors.New("not a JSON object")
	}
	r := newReader(c, data)
	r.repeated = dups
	sp := c.serversPath(path)
	if c.dedicated && len(sp) == 1 {
		for _, m := range root.Fields {
			k := m.Key
			if k == sp[0] || (c.ID == "vscode" && k == "inputs") || k == "$schema" {
				continue
			}
			r.note("", k, fmt.Sprintf("a %s setting, not a server", c.Name))
		}
	}
	servers, err := objectAt(root, sp)
	if err != nil {
		return nil, err
	}
	if c.ID == "vscode" {
		if in, _ := objectAt(root, sp[:len(sp)-1]); in != nil {
			r.readInputs(in.Get("inputs"))
		}
	}
	r.readServers(servers, "")
	if c.ID == "claude-code" {
		if projects := root.Get("projects"); projects != nil && projects.Kind == jsonscan.KindObject {
			for _, pm := range projects.Fields {
				if pm.Value.Kind != jsonscan.KindObject {
					continue
				}
				if s := pm.Value.Get("mcpServers"); s != nil && s.Kind == jsonscan.KindObject {
					r.readServers(s, pm.Key)
				}
			}
		}
	}
	return r.finish(), nil
}

// readJSONC reads a JSON or JSONC (JWCC) document: comments and trailing
// commas blanked by hujson.Standardize, which keeps every byte's offset,
// then jsonscan.Parse. A key repeated in one object keeps its last value,
// as in the JavaScript clients that read these files; the repetitions
// come back for the caller to name. It returns the standardized bytes the
// tree's offsets index.
func readJSONC(data []byte) (*jsonscan.Node, []byte, []jsonscan.Duplicate, error) {
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, nil, nil, err
	}
	root, err := jsonscan.Parse(std)
	var de *jsonscan.DuplicateKeyError
	if errors.As(err, &de) {
		de.KeepLast()
		return root, std, de.Dups, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return root, std, nil, nil
}

// objectAt walks path from obj; a missing or null member gives nil, a
// member that is not an object an error.
func objectAt(obj *jsonscan.Node, path []string) (*jsonscan.Node, error) {
	for i, k := range path {
		v := obj.Get(k)
		if v == nil || v.Kind == jsonscan.KindNull {
			return nil, nil
		}
		if v.Kind != jsonscan.KindObject {
			return nil, fmt.Errorf("%s is not an object", strings.Join(path[:i+1], "."))
		}
		obj = v
	}
	return obj, nil
}

// raw is the value n as written.
func (r *reader) raw(n *jsonscan.Node) []byte { return r.data[n.Offset:n.End] }

func (r *reader) readServers(servers *jsonscan.Node, project string) {
	if servers == nil {
		return
	}
	for _, m := range servers.Fields {
		if r.givenTwice(servers, m.Key) {
			r.note(m.Key, "", "defined more than once in the file; the last definition counts")
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(r.raw(m.Value), &keys); err != nil || keys == nil {
			r.note(m.Key, "", "not an object")
			continue
		}
		r.server(rawServer{m.Key, keys}, project)
	}
}

// givenTwice reports whether object obj of the document repeats key.
func (r *reader) givenTwice(obj *jsonscan.Node, key string) bool {
	for _, d := range r.repeated {
		if d.Object == obj && d.Path[len(d.Path)-1].Key == key {
			return true
		}
	}
	return false
}

// reader builds one Result.
type reader struct {
	c          *Client
	data       []byte               // the standardized document, for parseJSON
	repeated   []jsonscan.Duplicate // keys parseJSON's document repeats
	res        Result
	inputs     map[string]input
	inputNames map[string]string // input ID → its credential's name
	secrets    map[string]string // credential name → value, to keep names unique
}

type input struct {
	description string
	password    bool
}

func newReader(c *Client, data []byte) *reader {
	return &reader{c: c, data: data, secrets: map[string]string{}, inputNames: map[string]string{}}
}

func (r *reader) finish() *Result {
	return &r.res
}

func (r *reader) note(server, key, reason string) {
	r.res.Notes = append(r.res.Notes, Note{Server: server, Key: key, Reason: reason})
}

func (r *reader) readInputs(v *jsonscan.Node) {
	if v == nil {
		return
	}
	var ins []struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		Description string `json:"description"`
		Password    bool   `json:"password"`
	}
	if err := json.Unmarshal(r.raw(v), &ins); err != nil {
		r.note("", "inputs", "not a list of inputs")
		return
	}
	r.inputs = map[string]input{}
	for _, in := range ins {
		if in.Type != "promptString" {
			r.note("", "inputs."+in.ID, fmt.Sprintf("input type %q is not a prompted string", in.Type))
			continue
		}
		r.inputs[in.ID] = input{in.Description, in.Password}
	}
}

// known keys and why they are left out, for the notes.
var skipReasons = map[string]string{
	"timeout":             "a client timeout; Switchboard has its own (callTimeoutMs)",
	"alwaysAllow":         "a client approval list; Switchboard has its own policy",
	"autoApprove":         "a client approval list; Switchboard has its own policy",
	"trust":               "the client's confirmation bypass; Switchboard's trust is set with --trust",
	"description":         "a description only the client shows",
	"envFile":             "an env file only the client reads; copy its variables into env",
	"oauth":               "the client's OAuth settings",
	"startup_timeout_sec": "a client timeout; Switchboard has its own (startupTimeoutMs)",
	"startup_timeout_ms":  "a client timeout; Switchboard has its own (startupTimeoutMs)",
	"tool_timeout_sec":    "a client timeout; Switchboard has its own (callTimeoutMs)",
	"gallery":             "where the client found the server",
	"version":             "the client's record of the installed version",
	"networkTimeout":      "a client timeout; Switchboard has its own",
	"authProviderType":    "the client's authentication provider",
	"headers":             "Codex ignores it (its key is http_headers)",
}

func (r *reader) server(s rawServer, project string) {
	e := Entry{Name: s.name, Project: project}
	k := s.keys
	used := map[string]bool{}
	str := func(key string) string {
		raw, ok := k[key]
		if !ok {
			return ""
		}
		used[key] = true
		var v string
		if json.Unmarshal(raw, &v) != nil {
			r.note(s.name, key, "not a string")
			return ""
		}
		return v
	}
	strs := func(key string) []string {
		raw, ok := k[key]
		if !ok {
			return nil
		}
		used[key] = true
		var v []string
		if json.Unmarshal(raw, &v) != nil {
			r.note(s.name, key, "not a list of strings")
			return nil
		}
		if v == nil {
			v = []string{}
		}
		return v
	}
	smap := func(key string) map[string]string {
		raw, ok := k[key]
		if !ok {
			return nil
		}
		used[key] = true
		var v map[string]string
		if json.Unmarshal(raw, &v) != nil {
			r.note(s.name, key, "not an object of strings")
			return nil
		}
		return v
	}
	boolean := func(key string) (bool, bool) {
		raw, ok := k[key]
		if !ok {
			return false, false
		}
		used[key] = true
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			r.note(s.name, key, "not a boolean")
			return false, false
		}
		return v, true
	}

	typ := str("type")
	if typ == "" {
		typ = str("transport")
	}
	e.Command = str("command")
	e.Args = strs("args")
	e.Env = smap("env")
	e.Cwd = str("cwd")
	url, httpURL, serverURL := str("url"), str("httpUrl"), str("serverUrl")
	if r.c.Format != TOML {
		e.Headers = smap("headers") // Codex ignores "headers"
	}
	if h := smap("http_headers"); h != nil {
		e.Headers = mergeMaps(e.Headers, h)
	}
	for hk, v := range smap("env_http_headers") {
		e.Headers = mergeMaps(e.Headers, map[string]string{hk: "${" + v + "}"})
	}
	e.BearerTokenEnvVar = str("bearer_token_env_var")
	for _, v := range strs("env_vars") {
		e.Env = mergeMaps(e.Env, map[string]string{v: "${" + v + "}"})
	}
	if d, ok := boolean("disabled"); ok {
		e.Disabled = d
	}
	if en, ok := boolean("enabled"); ok && !en {
		e.Disabled = true
	}
	e.EnabledTools = firstNonNil(strs("includeTools"), strs("enabled_tools"), strs("enabledTools"))
	e.DisabledTools = firstNonNil(strs("excludeTools"), strs("disabled_tools"), strs("disabledTools"))

	switch strings.ToLower(typ) {
	case "stdio", "local":
		e.Transport = Stdio
	case "http", "streamable-http", "streamablehttp", "streamable_http", "remote":
		e.Transport = HTTP
	case "sse":
		e.Transport = SSE
	case "":
		switch {
		case e.Command != "":
			e.Transport = Stdio
		case httpURL != "":
			e.Transport = HTTP
		case serverURL != "":
			e.Transport = HTTP
		case url != "":
			e.Transport = r.c.bareURL
		}
	default:
		r.note(s.name, "", fmt.Sprintf("skipped: unknown type %q", typ))
		return
	}
	switch {
	case httpURL != "":
		e.URL = httpURL
	case serverURL != "":
		e.URL = serverURL
	default:
		e.URL = url
	}
	if e.Transport == "" {
		r.note(s.name, "", "skipped: neither a command nor a url")
		return
	}
	if e.Transport == Stdio {
		if e.Command == "" {
			r.note(s.name, "", "skipped: a stdio server without a command")
			return
		}
		if e.URL != "" {
			r.note(s.name, "url", "ignored: the server is started with its command")
			e.URL = ""
		}
		if len(e.Headers) > 0 {
			r.note(s.name, "headers", "ignored: the server is started with its command")
			e.Headers = nil
		}
	} else {
		if e.URL == "" {
			r.note(s.name, "", fmt.Sprintf("skipped: a %s server without a url", e.Transport))
			return
		}
		if e.Transport == HTTP && typ == "" && httpURL == "" && strings.HasSuffix(strings.TrimRight(urlPath(e.URL), "/"), "/sse") {
			e.Transport = SSE
		}
		for _, f := range []struct {
			key string
			set bool
		}{{"command", e.Command != ""}, {"args", e.Args != nil}, {"env", e.Env != nil}, {"cwd", e.Cwd != ""}} {
			if f.set {
				r.note(s.name, f.key, "ignored: the server is reached at its url")
			}
		}
		e.Command, e.Args, e.Env, e.Cwd = "", nil, nil, ""
	}

	keys := make([]string, 0, len(k))
	for key := range k {
		if !used[key] {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		reason, ok := skipReasons[key]
		if !ok {
			reason = fmt.Sprintf("only %s uses it", r.c.Name)
		}
		r.note(s.name, key, "skipped: "+reason)
	}
	r.refs(&e)
	r.findSecrets(&e)
	r.res.Servers = append(r.res.Servers, e)
}

func urlPath(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Path
	}
	return s
}

func firstNonNil(ls ...[]string) []string {
	for _, l := range ls {
		if l != nil {
			return l
		}
	}
	return nil
}

func mergeMaps(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// refs rewrites the client's variable references into ${VAR} in every
// string of e.
func (r *reader) refs(e *Entry) {
	fix := func(field, s string) string {
		out, prompts := r.normRefs(e.Name, field, s)
		for _, id := range prompts {
			in := r.inputs[id]
			name, ok := r.inputNames[id]
			if !ok {
				name = r.secretName(e.Name, envName(id), "")
				r.inputNames[id] = name
			}
			r.res.Secrets = append(r.res.Secrets, Secret{
				Server: e.Name, Field: field, Name: name,
				Prompt: in.description, Password: in.password,
			})
			out = strings.ReplaceAll(out, "${input:"+id+"}", "${"+name+"}")
		}
		return out
	}
	e.Command = fix("command", e.Command)
	for i := range e.Args {
		e.Args[i] = fix("args["+strconv.Itoa(i)+"]", e.Args[i])
	}
	for _, k := range sortedKeys(e.Env) {
		e.Env[k] = fix("env."+k, e.Env[k])
	}
	e.Cwd = fix("cwd", e.Cwd)
	e.URL = fix("url", e.URL)
	for _, k := range sortedKeys(e.Headers) {
		e.Headers[k] = fix("headers."+k, e.Headers[k])
	}
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// clientVars are variables a client resolves itself, which Switchboard
// cannot: ${userHome} has an equivalent, the others none.
var clientVars = map[string]string{
	"userHome": "${HOME}", "workspaceFolder": "", "workspaceFolderBasename": "",
	"workspaceRoot": "", "pathSeparator": "", "/": "", "cwd": "", "file": "",
	"fileDirname": "", "extensionPath": "",
}

// normRefs rewrites ${env:VAR} (and, for Gemini, $VAR) into ${VAR} and
// ${userHome} into ${HOME}; it returns the VS Code input IDs referenced as
// ${input:ID}, which the caller replaces.
func (r *reader) normRefs(server, field, s string) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var prompts []string
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("$${")
			i += 3
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				break
			}
			ref := s[i+2 : i+end]
			i += end + 1
			switch {
			case strings.HasPrefix(ref, "env:"):
				b.WriteString("${" + ref[len("env:"):] + "}")
			case strings.HasPrefix(ref, "input:"):
				id := ref[len("input:"):]
				if _, ok := r.inputs[id]; !ok {
					r.note(server, field, fmt.Sprintf("refers to input %q, which is not declared", id))
				}
				if !slices.Contains(prompts, id) {
					prompts = append(prompts, id)
				}
				b.WriteString("${" + ref + "}")
			default:
				if rep, ok := clientVars[ref]; ok {
					if rep != "" {
						b.WriteString(rep)
					} else {
						r.note(server, field, fmt.Sprintf("${%s} is resolved by %s only; set the value by hand", ref, r.c.Name))
						b.WriteString("${" + ref + "}")
					}
					continue
				}
				name := ref
				if j := strings.Index(ref, ":-"); j >= 0 {
					name = ref[:j]
				}
				if !identRE.MatchString(name) {
					r.note(server, field, fmt.Sprintf("${%s} is not a variable reference Switchboard knows", ref))
				}
				b.WriteString("${" + ref + "}")
			}
			continue
		}
		if r.c.dollarRefs {
			j := i + 1
			for j < len(s) && (s[j] == '_' || isAlnum(s[j])) {
				j++
			}
			if j > i+1 && !(s[i+1] >= '0' && s[i+1] <= '9') {
				b.WriteString("${" + s[i+1:j] + "}")
				i = j
				continue
			}
		}
		b.WriteByte('$')
		i++
	}
	return b.String(), prompts
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isRef reports whether v refers to a variable rather than holding a value.
func isRef(v string) bool { return strings.Contains(v, "${") }

// findSecrets moves inline credentials out of e into Secrets.
func (r *reader) findSecrets(e *Entry) {
	for _, k := range sortedKeys(e.Env) {
		before, v, after, ok := config.SecretEnv(k, e.Env[k])
		if !ok {
			continue
		}
		name := r.secretName(e.Name, config.EnvCredName(k, before == "" && after == ""), v)
		r.addSecret(e.Name, "env."+k, name, v)
		e.Env[k] = before + "${" + name + "}" + after
	}
	for _, k := range sortedKeys(e.Headers) {
		v := e.Headers[k]
		if v == "" || isRef(v) {
			continue
		}
		lk := strings.ToLower(k)
		if lk == "authorization" || lk == "proxy-authorization" {
			scheme, cred, ok := strings.Cut(v, " ")
			if !ok || strings.TrimSpace(cred) == "" {
				scheme, cred = "", v
			}
			suffix := "TOKEN"
			if strings.EqualFold(scheme, "basic") {
				suffix = "BASIC_AUTH"
			}
			name := r.secretName(e.Name, envName(e.Name+"_"+suffix), cred)
			r.addSecret(e.Name, "headers."+k, name, cred)
			if scheme != "" {
				e.Headers[k] = scheme + " ${" + name + "}"
			} else {
				e.Headers[k] = "${" + name + "}"
			}
			continue
		}
		if config.SecretKey(k) || config.LooksLikeToken(v) {
			name := r.secretName(e.Name, envName(e.Name+"_"+k), v)
			r.addSecret(e.Name, "headers."+k, name, v)
			e.Headers[k] = "${" + name + "}"
		}
	}
	for i := range e.Args {
		flag, before, val, after, ok := config.SecretArg(e.Args, i)
		if !ok {
			continue
		}
		name := r.secretName(e.Name, config.ArgCredName(e.Name, flag), val)
		r.addSecret(e.Name, "args["+strconv.Itoa(i)+"]", name, val)
		e.Args[i] = before + "${" + name + "}" + after
	}
	if e.URL != "" && !isRef(e.URL) {
		if q := strings.IndexByte(e.URL, '?'); q >= 0 {
			frag := ""
			query := e.URL[q+1:]
			if h := strings.IndexByte(query, '#'); h >= 0 {
				query, frag = query[:h], query[h:]
			}
			parts := strings.Split(query, "&")
			changed := false
			for j, p := range parts {
				k, v, ok := strings.Cut(p, "=")
				if !ok || v == "" || !config.SecretKey(k) {
					continue
				}
				val, err := url.QueryUnescape(v)
				if err != nil {
					val = v
				}
				name := r.secretName(e.Name, envName(e.Name+"_"+k), val)
				r.addSecret(e.Name, "url", name, val)
				parts[j] = k + "=${" + name + "}"
				changed = true
			}
			if changed {
				e.URL = e.URL[:q+1] + strings.Join(parts, "&") + frag
			}
		}
	}
}

func (r *reader) addSecret(server, field, name, value string) {
	r.res.Secrets = append(r.res.Secrets, Secret{Server: server, Field: field, Name: name, Value: value})
}

// secretName returns a credential name for value by config.FreeCredName,
// among the names this file's secrets took.
func (r *reader) secretName(server, want, value string) string {
	n := config.FreeCredName(server, want, value, func(name string) (string, bool) {
		v, ok := r.secrets[name]
		return v, ok
	})
	r.secrets[n] = value
	return n
}

// envName makes s a variable name: upper case, [A-Z0-9_], not starting with
// a digit.
func envName(s string) string { return config.CredName(s) }

// topKeys returns the top-level keys of a JSON (or JSONC) object.
func topKeys(data []byte) (map[string]bool, error) {
	root, _, _, err := readJSONC(data)
	if err != nil {
		return nil, err
	}
	if root.Kind != jsonscan.KindObject {
		return nil, errors.New("not an object")
	}
	m := map[string]bool{}
	for _, f := range root.Fields {
		m[f.Key] = true
	}
	return m, nil
}

func parseTOML(c *Client, data []byte) (*Result, error) {
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, err
	}
	r := newReader(c, nil)
	raw, ok := doc["mcp_servers"]
	if !ok {
		return r.finish(), nil
	}
	servers, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("mcp_servers is not a table")
	}
	// The servers in the order the file defines them.
	var order []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "mcp_servers" && !seen[k[1]] {
			seen[k[1]] = true
			order = append(order, k[1])
		}
	}
	for name := range servers {
		if !seen[name] {
			order = append(order, name)
		}
	}
	for _, name := range order {
		t, ok := servers[name].(map[string]any)
		if !ok {
			r.note(name, "", "not a table")
			continue
		}
		keys := map[string]json.RawMessage{}
		for k, v := range t {
			b, err := json.Marshal(v)
			if err != nil {
				r.note(name, k, "not a value Switchboard reads")
				continue
			}
			keys[k] = b
		}
		r.server(rawServer{name, keys}, "")
	}
	return r.finish(), nil
}
