package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/era"
)

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
