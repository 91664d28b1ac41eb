package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/bytesize"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// The decoder works in two passes. parseTree turns the bytes into a tree of
// nodes with jsonscan.Parse, reporting syntax errors and duplicate keys. The schema walk (decodeRoot, decodeServer, ...) then checks every
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
		return nil, &Error{File: source, Msg: "file is " + (&bytesize.TooLargeError{Limit: MaxFileSize}).Error()}
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

// Field names and hints for unknown fields.
var (
	rootFields   = []string{"mcpServers", "servers", "inputs", "$schema", "security", "policy", "context", "store", "clients", "profiles", "gateway"}
	serverFields = []string{
		"type", "command", "args", "env", "cwd", "url", "serverUrl", "headers",
		"enabled", "disabled", "enabledTools", "disabledTools",
		"startupTimeoutMs", "callTimeoutMs", "bearerTokenEnvVar", "prefix", "protocolVersion",
		"trust", "expectedTools", "allowEnv", "sampling", "elicitation", "roots", "images", "strict",
		"eager", "idleTimeoutMs", "startupAttempts", "retryMs", "approval", "onDrift", "lockToolList", "deferTools",
		"runtime", "oauth", "sandbox",
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
	var servers, inputs, security, policy, context, st, clients, profiles, gw *member
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
		case "gateway":
			gw = m
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
	if gw != nil {
		cfg.Gateway = d.decodeGateway(gw.val, (*jsonPath)(nil).k("gateway"))
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
