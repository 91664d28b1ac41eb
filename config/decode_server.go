package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

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
	sandbox                                       opt[Sandbox]
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
		case "sandbox":
			f.sandbox = some(d.decodeSandbox(m.val, fp, name))
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
	d.resolveSandbox(s, f.sandbox.v, p)
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
