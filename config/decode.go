package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/era"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// The decoder works in two passes. parseTree turns the bytes into a tree of
// nodes with encoding/json's tokenizer, reporting syntax errors and duplicate
// keys. The schema walk (decodeRoot, decodeServer, ...) then checks every
// member against the fields it knows, so that each unknown field and type
// error is reported with its exact JSON path; encoding/json's
// DisallowUnknownFields reports neither the path nor duplicates.

const (
	// maxDepth bounds JSON nesting. A configuration needs 5 levels; the
	// bound keeps hostile input from recursing deeply.
	maxDepth = 64
	// maxErrors bounds how many problems one Parse reports.
	maxErrors = 20
)

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "null"
}

// node is a decoded JSON value. Object members keep document order.
type node struct {
	kind    kind
	str     string // kindString: the value; kindNumber: the literal
	b       bool
	elems   []*node
	members []member
}

type member struct {
	key string
	val *node
}

// decoder accumulates problems while decoding one document.
type decoder struct {
	file      string
	lookup    func(string) (string, bool)
	errs      []*Error
	truncated bool
	// prefixes maps each non-empty prefix, lower-cased, to the server
	// that claimed it first.
	prefixes map[string]string
	// derive holds the servers whose prefix is derived from their name
	// once every other prefix is known (see derivePrefixes).
	derive []*Server
	// security is the decoded "security" object, for server defaults.
	security Security
	// project is set for a project file, which holds servers only.
	project bool
}

func (d *decoder) add(p *jsonPath, server, msg string, cause error) {
	d.addAt(p.String(), server, msg, cause)
}

func (d *decoder) addAt(path, server, msg string, cause error) {
	if len(d.errs) >= maxErrors {
		d.truncated = true
		return
	}
	d.errs = append(d.errs, &Error{File: d.file, Path: path, Server: server, Msg: msg, Err: cause})
}

func (d *decoder) err() error {
	errs := d.errs
	if d.truncated {
		errs = append(errs, &Error{File: d.file, Msg: fmt.Sprintf("too many errors; stopped after %d", maxErrors)})
	}
	return joinErrors(errs)
}

var utf8BOM = []byte("\xEF\xBB\xBF")

// parse implements Parse.
func parse(data []byte, source string, lookup func(string) (string, bool)) (*Config, error) {
	return parseAs(data, source, lookup, false)
}

// parseAs implements Parse, and LoadProject when project is set.
func parseAs(data []byte, source string, lookup func(string) (string, bool), project bool) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{File: source, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}
	}
	d := &decoder{file: source, lookup: lookup, prefixes: map[string]string{}, project: project}
	// Editors on Windows like to start UTF-8 files with a byte order mark.
	root := d.parseTree(bytes.TrimPrefix(data, utf8BOM))
	if len(d.errs) > 0 {
		return nil, d.err()
	}
	cfg := d.decodeRoot(root)
	if len(d.errs) > 0 {
		return nil, d.err()
	}
	cfg.Source = source
	slices.SortFunc(cfg.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	// Everything Validate checks has been checked above with better
	// paths; this is a safety net that keeps Parse's result and Validate
	// in agreement (FuzzParse checks it too).
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseTree decodes data into a tree, reporting syntax errors and duplicate
// keys. It returns nil after a syntax error.
func (d *decoder) parseTree(data []byte) *node {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		d.addAt("", "", "file is empty: want a JSON object", nil)
		return nil
	}
	if err != nil {
		d.syntax(data, err)
		return nil
	}
	root, ok := d.parseValue(dec, data, tok, nil, 1)
	if !ok {
		return nil
	}
	off := dec.InputOffset() // just after the root value
	if _, err := dec.Token(); err != io.EOF {
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		line, col := lineCol(data, off)
		d.addAt("", "", fmt.Sprintf("invalid JSON at line %d, column %d: unexpected data after the top-level value", line, col), nil)
		return nil
	}
	return root
}

func (d *decoder) parseValue(dec *json.Decoder, data []byte, tok json.Token, p *jsonPath, depth int) (*node, bool) {
	switch t := tok.(type) {
	case json.Delim:
		if depth > maxDepth {
			d.add(p, "", fmt.Sprintf("nested more than %d levels deep", maxDepth), nil)
			return nil, false
		}
		if t == '[' {
			n := &node{kind: kindArray, elems: []*node{}}
			for i := 0; dec.More(); i++ {
				tok, err := dec.Token()
				if err != nil {
					d.syntax(data, err)
					return nil, false
				}
				e, ok := d.parseValue(dec, data, tok, p.i(i), depth+1)
				if !ok {
					return nil, false
				}
				n.elems = append(n.elems, e)
			}
			if _, err := dec.Token(); err != nil { // ']'
				d.syntax(data, err)
				return nil, false
			}
			return n, true
		}
		n := &node{kind: kindObject}
		seen := map[string]bool{}
		for dec.More() {
			ktok, err := dec.Token()
			if err != nil {
				d.syntax(data, err)
				return nil, false
			}
			key, _ := ktok.(string) // the tokenizer only yields strings here
			vtok, err := dec.Token()
			if err != nil {
				d.syntax(data, err)
				return nil, false
			}
			v, ok := d.parseValue(dec, data, vtok, p.k(key), depth+1)
			if !ok {
				return nil, false
			}
			if seen[key] {
				// JSON decoders disagree about which duplicate wins,
				// so a duplicate is always a mistake worth reporting.
				d.add(p.k(key), "", fmt.Sprintf("duplicate key %s", quote(key)), nil)
				continue
			}
			seen[key] = true
			n.members = append(n.members, member{key, v})
		}
		if _, err := dec.Token(); err != nil { // '}'
			d.syntax(data, err)
			return nil, false
		}
		return n, true
	case string:
		return &node{kind: kindString, str: t}, true
	case json.Number:
		return &node{kind: kindNumber, str: string(t)}, true
	case bool:
		return &node{kind: kindBool, b: t}, true
	case nil:
		return &node{kind: kindNull}, true
	}
	d.addAt("", "", fmt.Sprintf("unexpected JSON token %T", tok), nil)
	return nil, false
}

// syntax reports a JSON syntax error with its line and column.
func (d *decoder) syntax(data []byte, err error) {
	off := int64(len(data))
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && se.Offset < off {
		off = se.Offset
	}
	msg := err.Error()
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		msg = "unexpected end of input"
	}
	switch {
	case strings.Contains(msg, "invalid character '/'"):
		msg += " (comments are not allowed in JSON)"
	case strings.Contains(msg, "invalid character '}' looking for beginning of object key"),
		strings.Contains(msg, "invalid character ']' looking for beginning of value"):
		msg += " (trailing commas are not allowed in JSON)"
	}
	line, col := lineCol(data, off)
	d.addAt("", "", fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg), nil)
}

// lineCol returns the 1-based line and column (in bytes) of offset off.
func lineCol(data []byte, off int64) (line, col int) {
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Field names and hints for unknown fields.
var (
	rootFields   = []string{"mcpServers", "servers", "inputs", "$schema", "security", "policy", "context", "store", "clients", "profiles"}
	serverFields = []string{
		"type", "command", "args", "env", "cwd", "url", "serverUrl", "headers",
		"enabled", "disabled", "enabledTools", "disabledTools",
		"startupTimeoutMs", "callTimeoutMs", "bearerTokenEnvVar", "prefix", "protocolVersion",
		"trust", "expectedTools", "allowEnv", "sampling", "elicitation", "roots", "images", "strict",
		"eager", "idleTimeoutMs", "startupAttempts", "retryMs", "approval", "onDrift", "lockToolList", "deferTools",
		"runtime", "oauth",
	}
	inputFields  = []string{"id", "type", "description", "password", "default", "options", "command", "args"}
	optionFields = []string{"label", "value"}

	rootHints = map[string]string{
		"mcp":         `did you mean "mcpServers"? opencode's "mcp" shape is not supported`,
		"mcp_servers": `did you mean "mcpServers"?`,
	}
	serverHints = map[string]string{
		"transport":     `did you mean "type"?`,
		"transportType": `did you mean "type"?`,
		"httpUrl":       `did you mean "url"?`,
		"envFile":       `env files are not supported: reference environment variables as ${VAR} in "env"`,
		"timeout":       `did you mean "callTimeoutMs" or "startupTimeoutMs"?`,
		"autoApprove":   `Switchboard does not support auto-approval lists; remove it`,
		"alwaysAllow":   `Switchboard does not support auto-approval lists; remove it`,
	}
)

// unknown reports an unknown field, suggesting the field that was probably
// meant.
func (d *decoder) unknown(p *jsonPath, key string, known []string, hints map[string]string, server string) {
	msg := "unknown field " + quote(key)
	if h, ok := hints[key]; ok {
		msg += " (" + h + ")"
	} else if s := closest(key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	d.add(p, server, msg, nil)
}

// closest returns the known name closest to key (ignoring case), if it is
// close enough to be a plausible typo.
func closest(key string, known []string) string {
	if len(key) > 64 {
		return ""
	}
	best, bestDist := "", 3
	for _, k := range known {
		dist := suggest.Distance(strings.ToLower(key), strings.ToLower(k))
		if dist < bestDist && dist <= max(len(key), len(k))/2 {
			best, bestDist = k, dist
		}
	}
	return best
}

// quote quotes s for a message, shortening long strings.
func quote(s string) string { return strconv.Quote(truncate(s, 64)) }

// Typed accessors. Each reports a type error at p and returns ok=false.

func (d *decoder) wrongType(n *node, p *jsonPath, server string, want string) {
	d.add(p, server, fmt.Sprintf("want %s, got %s", want, n.kind), nil)
}

func (d *decoder) str(n *node, p *jsonPath, server string) (string, bool) {
	if n.kind != kindString {
		d.wrongType(n, p, server, "string")
		return "", false
	}
	return n.str, true
}

func (d *decoder) boolean(n *node, p *jsonPath, server string) (bool, bool) {
	if n.kind != kindBool {
		d.wrongType(n, p, server, "boolean")
		return false, false
	}
	return n.b, true
}

// strs decodes an array of strings; an empty array yields a non-nil slice.
func (d *decoder) strs(n *node, p *jsonPath, server string) ([]string, bool) {
	if n.kind != kindArray {
		d.wrongType(n, p, server, "array of strings")
		return nil, false
	}
	out := make([]string, 0, len(n.elems))
	ok := true
	for i, e := range n.elems {
		s, good := d.str(e, p.i(i), server)
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// strMap decodes an object of strings, returning its keys in document order.
func (d *decoder) strMap(n *node, p *jsonPath, server string) (*orderedMap, bool) {
	if n.kind != kindObject {
		d.wrongType(n, p, server, "object of strings")
		return nil, false
	}
	m := &orderedMap{m: make(map[string]string, len(n.members))}
	ok := true
	for _, mem := range n.members {
		s, good := d.str(mem.val, p.k(mem.key), server)
		ok = ok && good
		m.keys = append(m.keys, mem.key)
		m.m[mem.key] = s
	}
	return m, ok
}

// millis decodes a positive integer number of milliseconds up to MaxTimeout.
func (d *decoder) millis(n *node, p *jsonPath, server string) (time.Duration, bool) {
	if n.kind != kindNumber {
		d.wrongType(n, p, server, "number")
		return 0, false
	}
	ms, err := strconv.ParseInt(n.str, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		d.add(p, server, "want an integer number of milliseconds", nil)
		return 0, false
	}
	if err != nil || ms < 1 || ms > int64(MaxTimeout/time.Millisecond) {
		d.add(p, server, timeoutRangeMsg, nil)
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

var timeoutRangeMsg = fmt.Sprintf("must be between 1 and %d milliseconds (24h)", int64(MaxTimeout/time.Millisecond))

type orderedMap struct {
	keys []string
	m    map[string]string
}

// decodeRoot walks the top-level object.
func (d *decoder) decodeRoot(root *node) *Config {
	if root.kind != kindObject {
		d.wrongType(root, nil, "", "object")
		return nil
	}
	var servers, inputs, security, policy, context, st, clients, profiles *member
	conflict := false
	for i := range root.members {
		m := &root.members[i]
		p := (*jsonPath)(nil).k(m.key)
		if d.project && !slices.Contains(projectRootFields, m.key) && slices.Contains(rootFields, m.key) {
			d.add(p, "", fmt.Sprintf("%s is not read from a project file, which holds servers only: set it in the user configuration", quote(m.key)), nil)
			continue
		}
		switch m.key {
		case "mcpServers", "servers":
			if servers != nil {
				d.add(p, "", fmt.Sprintf("both %q and %q are present; use one", servers.key, m.key), nil)
				conflict = true
				continue
			}
			servers = m
		case "inputs":
			inputs = m
		case "security":
			security = m
		case "policy":
			policy = m
		case "context":
			context = m
		case "store":
			st = m
		case "clients":
			clients = m
		case "profiles":
			profiles = m
		case "$schema":
			d.str(m.val, p, "")
		default:
			d.unknown(p, m.key, rootFields, rootHints, "")
		}
	}
	if inputs != nil {
		p := (*jsonPath)(nil).k("inputs")
		if servers != nil && servers.key == "mcpServers" {
			d.add(p, "", `"inputs" belongs to VS Code's "servers" shape, not "mcpServers"`, nil)
		} else {
			d.decodeInputs(inputs.val, p)
		}
	}
	if servers == nil {
		d.addAt("$", "", `missing "mcpServers" (or VS Code's "servers")`, nil)
		return nil
	}
	if conflict {
		return nil
	}
	sp := (*jsonPath)(nil).k(servers.key)
	if servers.val.kind != kindObject {
		d.wrongType(servers.val, sp, "", "object")
		return nil
	}
	cfg := &Config{serversKey: servers.key, Security: Security{}.WithDefaults(), Policy: Policy{}.WithDefaults()}
	// Security first: servers take their strict default from it.
	if security != nil {
		cfg.Security = d.decodeSecurity(security.val, (*jsonPath)(nil).k("security"))
	}
	if policy != nil {
		cfg.Policy = d.decodePolicy(policy.val, (*jsonPath)(nil).k("policy"))
	}
	if context != nil {
		cfg.Context = d.decodeContext(context.val, (*jsonPath)(nil).k("context"))
	}
	if st != nil {
		cfg.Store = d.decodeStore(st.val, (*jsonPath)(nil).k("store"))
	}
	d.security = cfg.Security
	names := map[string]string{} // lower-cased name -> name
	for _, m := range servers.val.members {
		p := sp.k(m.key)
		fold := strings.ToLower(m.key)
		if prev, dup := names[fold]; dup {
			// Decoding it would only add a clash of default prefixes.
			d.add(p, m.key, fmt.Sprintf("server name differs from %s only in case; names must be unique ignoring case", quote(prev)), nil)
			continue
		}
		names[fold] = m.key
		if s := d.decodeServer(m.key, m.val, p); s != nil {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	d.derivePrefixes()
	if profiles != nil {
		cfg.Profiles = d.decodeProfiles(profiles.val, (*jsonPath)(nil).k("profiles"))
	}
	if clients != nil {
		cfg.Clients = d.decodeClients(clients.val, (*jsonPath)(nil).k("clients"))
	}
	d.checkIdentities(cfg)
	return cfg
}

// decodeInputs checks VS Code's "inputs" array. Switchboard never prompts for
// inputs, but a file VS Code accepts should load (as long as no value
// references an input), so the array is checked as strictly as the rest.
func (d *decoder) decodeInputs(n *node, p *jsonPath) {
	if n.kind != kindArray {
		d.wrongType(n, p, "", "array")
		return
	}
	ids := map[string]bool{}
	for i, e := range n.elems {
		ep := p.i(i)
		if e.kind != kindObject {
			d.wrongType(e, ep, "", "object")
			continue
		}
		start := len(d.errs)
		var id, typ string
		var hasID, hasType bool
		for _, m := range e.members {
			fp := ep.k(m.key)
			switch m.key {
			case "id":
				id, hasID = d.str(m.val, fp, "")
			case "type":
				typ, hasType = d.str(m.val, fp, "")
			case "description", "default", "command":
				d.str(m.val, fp, "")
			case "password":
				d.boolean(m.val, fp, "")
			case "options":
				d.decodeOptions(m.val, fp)
			case "args":
				// Arguments of a "command" input: any JSON value.
			default:
				d.unknown(fp, m.key, inputFields, nil, "")
			}
		}
		if len(d.errs) > start {
			continue
		}
		switch {
		case !hasID || id == "":
			d.add(ep, "", `an input needs a non-empty "id"`, nil)
		case ids[id]:
			d.add(ep.k("id"), "", fmt.Sprintf("duplicate input id %s", quote(id)), nil)
		}
		ids[id] = true
		switch {
		case !hasType:
			d.add(ep, "", `an input needs a "type"`, nil)
		case typ != "promptString" && typ != "pickString" && typ != "command":
			d.add(ep.k("type"), "", fmt.Sprintf(`unknown input type %s: want "promptString", "pickString" or "command"`, quote(typ)), nil)
		}
	}
}

func (d *decoder) decodeOptions(n *node, p *jsonPath) {
	if n.kind != kindArray {
		d.wrongType(n, p, "", "array")
		return
	}
	for i, e := range n.elems {
		ep := p.i(i)
		switch e.kind {
		case kindString:
		case kindObject:
			for _, m := range e.members {
				if slices.Contains(optionFields, m.key) {
					d.str(m.val, ep.k(m.key), "")
				} else {
					d.unknown(ep.k(m.key), m.key, optionFields, nil, "")
				}
			}
		default:
			d.wrongType(e, ep, "", "string or object")
		}
	}
}

// opt is an optional field: set reports whether it was present (and of the
// right type).
type opt[T any] struct {
	v   T
	set bool
}

func some[T any](v T, ok bool) opt[T] { return opt[T]{v, ok} }

// rawServer is one server's members as written.
type rawServer struct {
	typ, command, cwd, url, bearer, prefix, trust opt[string]
	protocolVersion                               opt[string]
	urlKey                                        string // "url" or "serverUrl"
	args, enabledTools, disabledTools             opt[[]string]
	expectedTools, allowEnv                       opt[[]string]
	env, headers, runtime                         opt[*orderedMap]
	oauth                                         opt[*OAuth]
	enabled, disabled, deferTools                 opt[bool]
	sampling, elicitation, roots, images, strict  opt[bool]
	startup, call                                 opt[time.Duration]
}

// decodeServer decodes, checks and expands one server. It returns nil if the
// server has problems, which it reports.
func (d *decoder) decodeServer(name string, n *node, p *jsonPath) *Server {
	start := len(d.errs)
	if msg := checkName(name); msg != "" {
		d.add(p, name, msg, nil)
	}
	if n.kind != kindObject {
		d.wrongType(n, p, name, "object")
		return nil
	}
	var f rawServer
	var life Lifecycle
	lifeSet := map[string]bool{}
	for _, m := range n.members {
		fp := p.k(m.key)
		if d.decodeLifecycle(&life, lifeSet, m.key, m.val, fp, name) {
			continue
		}
		switch m.key {
		case "type":
			f.typ = some(d.str(m.val, fp, name))
		case "command":
			f.command = some(d.str(m.val, fp, name))
		case "args":
			f.args = some(d.strs(m.val, fp, name))
		case "env":
			f.env = some(d.strMap(m.val, fp, name))
		case "cwd":
			f.cwd = some(d.str(m.val, fp, name))
		case "runtime":
			f.runtime = some(d.decodeRuntime(m.val, fp, name))
		case "url", "serverUrl":
			if f.urlKey != "" {
				d.add(fp, name, fmt.Sprintf(`both %q and %q are set ("serverUrl" is Windsurf's name for "url"); use one`, f.urlKey, m.key), nil)
				continue
			}
			f.urlKey = m.key
			f.url = some(d.str(m.val, fp, name))
		case "headers":
			f.headers = some(d.strMap(m.val, fp, name))
		case "oauth":
			f.oauth = some(d.decodeOAuth(m.val, fp, name))
		case "enabled":
			f.enabled = some(d.boolean(m.val, fp, name))
		case "disabled":
			f.disabled = some(d.boolean(m.val, fp, name))
		case "enabledTools":
			if f.enabledTools = some(d.strs(m.val, fp, name)); f.enabledTools.set {
				d.checkGlobs(f.enabledTools.v, fp, name)
			}
		case "disabledTools":
			if f.disabledTools = some(d.strs(m.val, fp, name)); f.disabledTools.set {
				d.checkGlobs(f.disabledTools.v, fp, name)
			}
		case "startupTimeoutMs":
			f.startup = some(d.millis(m.val, fp, name))
		case "callTimeoutMs":
			f.call = some(d.millis(m.val, fp, name))
		case "bearerTokenEnvVar":
			f.bearer = some(d.envName(m.val, fp, name))
		case "trust":
			f.trust = some(d.str(m.val, fp, name))
		case "expectedTools":
			if f.expectedTools = some(d.strs(m.val, fp, name)); f.expectedTools.set {
				d.checkGlobs(f.expectedTools.v, fp, name)
			}
		case "allowEnv":
			f.allowEnv = some(d.strs(m.val, fp, name))
		case "sampling":
			f.sampling = some(d.boolean(m.val, fp, name))
		case "elicitation":
			f.elicitation = some(d.boolean(m.val, fp, name))
		case "roots":
			f.roots = some(d.boolean(m.val, fp, name))
		case "images":
			f.images = some(d.boolean(m.val, fp, name))
		case "strict":
			f.strict = some(d.boolean(m.val, fp, name))
		case "deferTools":
			f.deferTools = some(d.boolean(m.val, fp, name))
		case "protocolVersion":
			f.protocolVersion = some(d.str(m.val, fp, name))
		case "prefix":
			f.prefix = some(d.str(m.val, fp, name))
			if f.prefix.set && f.prefix.v != "" && !validPrefix(f.prefix.v) {
				d.add(fp, name, fmt.Sprintf("invalid prefix %s: %s", quote(f.prefix.v), prefixRule), nil)
			}
		default:
			d.unknown(fp, m.key, serverFields, serverHints, name)
		}
	}
	if len(d.errs) > start {
		return nil // later checks would only repeat these problems
	}

	tr, ok := d.transport(&f, p, name)
	if !ok {
		return nil
	}
	d.checkShape(&f, tr, p, name)
	if len(d.errs) > start {
		return nil
	}

	s := &Server{
		Name:           name,
		Transport:      tr,
		Enabled:        true,
		StartupTimeout: DefaultStartupTimeout,
		CallTimeout:    DefaultCallTimeout,
		EnabledTools:   f.enabledTools.v,
		DisabledTools:  f.disabledTools.v,
		raw:            &rawFields{},
	}
	if f.enabled.set {
		s.Enabled = f.enabled.v
	}
	if f.disabled.set {
		s.Enabled = !f.disabled.v
	}
	if f.deferTools.set {
		s.DeferTools = &f.deferTools.v
	}
	if f.runtime.set {
		s.Runtime = f.runtime.v.m
	}
	if f.startup.set {
		s.StartupTimeout = f.startup.v
	}
	if f.call.set {
		s.CallTimeout = f.call.v
	}
	if f.oauth.set {
		s.OAuth = f.oauth.v
	}
	if f.protocolVersion.set {
		if msg := checkProtocolVersion(f.protocolVersion.v, tr); msg != "" {
			d.add(p.k("protocolVersion"), name, msg, nil)
		}
		s.ProtocolVersion = f.protocolVersion.v
	}
	d.resolvePrefix(s, &f, p)
	d.resolveTrust(s, &f, p)
	s.Lifecycle = life.withDefaults(s.Trust)
	d.checkEnvNames(s, &f, p)
	d.expandServer(s, &f, p)
	if len(d.errs) > start {
		return nil
	}
	return s
}

func (d *decoder) checkGlobs(globs []string, p *jsonPath, server string) {
	for i, g := range globs {
		if msg := checkGlob(g); msg != "" {
			d.add(p.i(i), server, msg, nil)
		}
	}
}

// transport decides the transport: "type" if present (aliases allowed),
// else stdio for "command" and Streamable HTTP for "url".
func (d *decoder) transport(f *rawServer, p *jsonPath, name string) (Transport, bool) {
	if f.command.set && f.url.set {
		d.add(p, name, fmt.Sprintf(`has both "command" and %q: a server is either stdio (command) or http/sse (url)`, f.urlKey), nil)
		return "", false
	}
	switch {
	case f.typ.set:
		t, ok := parseTransport(f.typ.v)
		if !ok {
			d.add(p.k("type"), name, fmt.Sprintf(`unknown type %s: want "stdio", "http" or "sse" (or an alias such as "streamable-http")`, quote(f.typ.v)), nil)
		}
		return t, ok
	case f.command.set:
		return TransportStdio, true
	case f.url.set:
		return TransportHTTP, true
	}
	d.add(p, name, `needs "command" (a stdio server) or "url" (an http or sse server)`, nil)
	return "", false
}

// transportAliases maps every accepted "type" (lower-cased) to a transport.
// "streamable-http" and friends are the spellings used by Cursor, Cline and
// assorted READMEs; "local" is opencode's name for a launched server.
var transportAliases = map[string]Transport{
	"stdio":           TransportStdio,
	"local":           TransportStdio,
	"http":            TransportHTTP,
	"streamable-http": TransportHTTP,
	"streamablehttp":  TransportHTTP,
	"streamable_http": TransportHTTP,
	"streamable":      TransportHTTP,
	"sse":             TransportSSE,
}

// parseTransport maps a "type" value to a transport, ignoring case.
func parseTransport(s string) (Transport, bool) {
	t, ok := transportAliases[strings.ToLower(s)]
	return t, ok
}

// checkShape checks which fields a server of transport tr may have, and other
// rules that relate fields to each other.
func (d *decoder) checkShape(f *rawServer, tr Transport, p *jsonPath, name string) {
	why := fmt.Sprintf("this server is %s", tr)
	if f.typ.set {
		why += fmt.Sprintf(" (type %s)", quote(f.typ.v))
	}
	onlyFor := func(field string, set bool, kind string) {
		if set {
			d.add(p.k(field), name, fmt.Sprintf("%q is only for %s servers; %s", field, kind, why), nil)
		}
	}
	if tr == TransportStdio {
		if !f.command.set {
			d.add(p, name, fmt.Sprintf(`a stdio server needs "command"; %s`, why), nil)
		}
		onlyFor(f.urlKey, f.url.set, "http and sse")
		onlyFor("headers", f.headers.set, "http and sse")
		onlyFor("bearerTokenEnvVar", f.bearer.set, "http and sse")
		onlyFor("oauth", f.oauth.set, "Streamable HTTP")
	} else {
		if !f.url.set {
			d.add(p, name, fmt.Sprintf(`an %s server needs "url"; %s`, tr, why), nil)
		}
		onlyFor("command", f.command.set, "stdio")
		onlyFor("args", f.args.set, "stdio")
		onlyFor("env", f.env.set, "stdio")
		onlyFor("cwd", f.cwd.set, "stdio")
		onlyFor("runtime", f.runtime.set, "stdio")
		if tr == TransportSSE {
			onlyFor("oauth", f.oauth.set, "Streamable HTTP")
		}
	}
	if f.enabled.set && f.disabled.set && f.enabled.v == f.disabled.v {
		d.add(p.k("disabled"), name, fmt.Sprintf(`"disabled": %t contradicts "enabled": %t`, f.disabled.v, f.enabled.v), nil)
	}
	if f.env.set {
		for _, k := range f.env.v.keys {
			if msg := checkEnvKey(k); msg != "" {
				d.add(p.k("env").k(k), name, msg, nil)
			}
		}
	}
	if f.headers.set {
		seen := map[string]string{}
		for _, k := range f.headers.v.keys {
			hp := p.k("headers").k(k)
			if !validHeaderName(k) {
				d.add(hp, name, fmt.Sprintf("invalid header name %s", quote(k)), nil)
				continue
			}
			fold := strings.ToLower(k)
			if prev, dup := seen[fold]; dup {
				d.add(hp, name, fmt.Sprintf("duplicate header: %s and %s differ only in case", quote(prev), quote(k)), nil)
				continue
			}
			seen[fold] = k
			if f.bearer.set && fold == "authorization" {
				d.add(p.k("bearerTokenEnvVar"), name, fmt.Sprintf(`conflicts with the explicit %s header; use one`, quote(k)), nil)
			}
		}
	}
}

// checkProtocolVersion returns what is wrong with a pinned protocol version
// for a server of transport tr, or "": it must be a known version, and the
// HTTP+SSE transport has no modern era.
func checkProtocolVersion(v string, tr Transport) string {
	legacy := era.LegacyVersions()
	known := append([]string{era.Sessionless}, legacy...)
	switch {
	case v == era.Sessionless && tr == TransportSSE:
		return fmt.Sprintf("protocol version %s is not for sse servers (the HTTP+SSE transport is of the legacy era): want %s", quote(v), quoteList(legacy))
	case slices.Contains(known, v):
		return ""
	}
	msg := fmt.Sprintf("unknown protocol version %s: want %s", quote(v), quoteList(known))
	if tr == TransportSSE {
		msg = fmt.Sprintf("unknown protocol version %s: want %s", quote(v), quoteList(legacy))
		known = legacy
	}
	if s := closest(v, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// resolvePrefix sets s.Prefix: the explicit prefix, or the server name.
// A server whose name is not a valid prefix is left to derivePrefixes.
func (d *decoder) resolvePrefix(s *Server, f *rawServer, p *jsonPath) {
	switch {
	case f.prefix.set:
		s.Prefix = f.prefix.v
	case validPrefix(s.Name):
		s.Prefix = s.Name
	default:
		d.derive = append(d.derive, s)
		return
	}
	if s.Prefix == "" {
		return
	}
	fold := strings.ToLower(s.Prefix)
	if other, dup := d.prefixes[fold]; dup {
		at := p
		if f.prefix.set {
			at = p.k("prefix")
		}
		d.add(at, s.Name, fmt.Sprintf("prefix %s is already used by server %s (prefixes must be unique ignoring case)", quote(s.Prefix), quote(other)), nil)
		return
	}
	d.prefixes[fold] = s.Name
}

// derivePrefixes gives each server whose name is not a valid prefix (it
// contains ':' or '.', or is long) and that sets none a prefix derived from
// its name: derivePrefix's form when no other server has that prefix
// (ignoring case), and otherwise that form cut short and followed by '_'
// and eight hex digits of a SHA-256 over the server name. Explicit and
// name prefixes are never displaced, and servers deriving the same form
// all take the hashed one, so the result depends only on the set of
// servers, not on their order.
func (d *decoder) derivePrefixes() {
	slices.SortFunc(d.derive, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	wanted := map[string]int{}
	for _, s := range d.derive {
		wanted[strings.ToLower(derivePrefix(s.Name))]++
	}
	var hashed []*Server
	for _, s := range d.derive {
		base := derivePrefix(s.Name)
		fold := strings.ToLower(base)
		if _, taken := d.prefixes[fold]; taken || wanted[fold] > 1 {
			hashed = append(hashed, s)
			continue
		}
		s.Prefix = base
		d.prefixes[fold] = s.Name
	}
	for _, s := range hashed {
		for n := 8; ; n += 4 {
			p := hashedPrefix(s.Name, n)
			if _, taken := d.prefixes[strings.ToLower(p)]; !taken || n >= 24 {
				s.Prefix = p
				d.prefixes[strings.ToLower(p)] = s.Name
				break
			}
		}
	}
	d.derive = nil
}

// expandServer expands references in the expandable fields and checks the
// resulting values. Messages name fields and variables, never values. A
// variable that is not set is not an error: it makes the server unusable
// (see Server.Unusable), and its resolved values are dropped.
func (d *decoder) expandServer(s *Server, f *rawServer, p *jsonPath) {
	refs := map[string]bool{}
	unusable := &UnusableError{Code: CodeMissingEnv, File: d.file, Server: s.Name}
	serverPath := p.String()
	missing := func(name string, fp *jsonPath) {
		unusable.missing(name, strings.TrimPrefix(strings.TrimPrefix(fp.String(), serverPath), "."))
	}
	expandOne := func(tmpl string, fp *jsonPath) (string, bool) {
		out, names, errs := expand(tmpl, d.lookup)
		for _, n := range names {
			refs[n] = true
		}
		for _, e := range errs {
			if e.missing != "" {
				missing(e.missing, fp)
				continue
			}
			d.add(fp, s.Name, e.msg, nil)
		}
		return out, errs == nil
	}
	// value checks a resolved value; after says whether expansion changed
	// it, so the message can explain an empty command.
	value := func(fp *jsonPath, msg string, changed bool) {
		if msg != "" {
			if changed {
				msg = "after expansion, " + msg
			}
			d.add(fp, s.Name, msg, nil)
		}
	}

	if f.command.set {
		fp := p.k("command")
		s.raw.command = f.command.v
		if v, ok := expandOne(f.command.v, fp); ok {
			s.Command = v
			value(fp, checkCommand(v), v != f.command.v)
		}
	}
	if f.args.set {
		s.raw.args = f.args.v
		s.Args = make([]string, len(f.args.v))
		for i, a := range f.args.v {
			fp := p.k("args").i(i)
			if v, ok := expandOne(a, fp); ok {
				s.Args[i] = v
				value(fp, checkNUL(v), v != a)
			}
		}
	}
	if f.env.set {
		s.raw.env = f.env.v.m
		s.Env = make(map[string]string, len(f.env.v.keys))
		for _, k := range f.env.v.keys {
			fp := p.k("env").k(k)
			if v, ok := expandOne(f.env.v.m[k], fp); ok {
				s.Env[k] = v
				value(fp, checkNUL(v), v != f.env.v.m[k])
			}
		}
	}
	if f.cwd.set {
		fp := p.k("cwd")
		s.raw.cwd = f.cwd.v
		if v, ok := expandOne(f.cwd.v, fp); ok {
			s.Cwd = v
			value(fp, checkNUL(v), v != f.cwd.v)
		}
	}
	if f.url.set {
		fp := p.k(f.urlKey)
		s.raw.url = f.url.v
		if v, ok := expandOne(f.url.v, fp); ok {
			s.URL = v
			value(fp, checkURL(v), v != f.url.v)
		}
	}
	if f.headers.set || f.bearer.set {
		s.Headers = map[string]string{}
	}
	if f.headers.set {
		s.raw.headers = f.headers.v.m
		for _, k := range f.headers.v.keys {
			fp := p.k("headers").k(k)
			if v, ok := expandOne(f.headers.v.m[k], fp); ok {
				s.Headers[k] = v
				value(fp, checkHeaderValue(v), v != f.headers.v.m[k])
			}
		}
	}
	if f.bearer.set {
		fp, name := p.k("bearerTokenEnvVar"), f.bearer.v
		refs[name] = true
		s.BearerTokenEnvVar = name
		v, ok := d.lookup(name)
		switch {
		case !ok:
			missing(name, fp)
		case v == "":
			d.add(fp, s.Name, fmt.Sprintf("environment variable %q is empty", name), nil)
		case checkHeaderValue(v) != "":
			d.add(fp, s.Name, fmt.Sprintf("the value of environment variable %q cannot be sent in a header (it contains control characters)", name), nil)
		default:
			s.Headers["Authorization"] = "Bearer " + v
		}
	}
	if o := s.OAuth; o != nil {
		secret := func(field, name string, to *string) {
			if name == "" {
				return
			}
			fp := p.k("oauth").k(field)
			refs[name] = true
			switch v, ok := d.lookup(name); {
			case !ok:
				missing(name, fp)
			case v == "":
				d.add(fp, s.Name, fmt.Sprintf("environment variable %q is empty", name), nil)
			default:
				*to = v
			}
		}
		secret("clientSecretEnv", o.ClientSecretEnv, &o.ClientSecret)
		secret("privateKeyEnv", o.PrivateKeyEnv, &o.PrivateKey)
		secret("assertionEnv", o.AssertionEnv, &o.Assertion)
	}
	if len(refs) > 0 {
		s.SecretRefs = slices.Sorted(maps.Keys(refs))
	}
	if unusable.Missing != nil {
		s.Unusable = unusable
		s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Headers = "", nil, nil, "", "", nil
		if s.OAuth != nil {
			s.OAuth.ClientSecret, s.OAuth.PrivateKey, s.OAuth.Assertion = "", "", ""
		}
	}
}
