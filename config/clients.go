package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/policy"
)

// Client is one named caller of the gateway (a member of the top-level
// "clients" object): it presents a bearer token of its own, or a JWT
// access token whose subject and claims match. Its name reaches the
// audit log, the call quota and the policy rules.
//
// A Client built by Parse is never changed; a reload builds new ones.
type Client struct {
	// Name is the key in "clients": letters, digits, '_' and '-', at most
	// MaxNameLen bytes.
	Name string
	// Token is the static bearer token, from "tokenEnv" (an environment
	// variable's name) or "token" (a ${VAR} or ${cred:NAME} reference;
	// never a literal). It is a secret: String and the Config's
	// MarshalJSON never show it. "" when the client is matched on JWT
	// claims only, or when Unusable.
	Token string
	// Subject, when not "", is the JWT "sub" a token must carry.
	Subject string
	// Claims are further JWT claims a token must carry: a string claim
	// equal to the value, or an array claim holding it.
	Claims map[string]string
	// Profiles are the profiles the client may use; nil means any, and
	// the whole aggregate at the bare endpoint path.
	Profiles []string
	// Unusable says why the client cannot authenticate (its token
	// references a variable or credential that is not set), or "".
	Unusable string
	// ContextWindow ("contextWindow") is the context window, in tokens,
	// of the model behind the client, or 0; see Context.ToolsShare.
	ContextWindow int
}

// String names the client, never its token.
func (c *Client) String() string { return "client " + c.Name }

// GoString is like String.
func (c *Client) GoString() string { return fmt.Sprintf("config.Client{Name: %q}", c.Name) }

// MatchesClaims reports whether a JWT's subject and claims select c. A
// client with neither Subject nor Claims matches no JWT.
func (c *Client) MatchesClaims(sub string, claims map[string]any) bool {
	if c.Subject == "" && len(c.Claims) == 0 {
		return false
	}
	if c.Subject != "" && c.Subject != sub {
		return false
	}
	for k, want := range c.Claims {
		switch v := claims[k].(type) {
		case string:
			if v != want {
				return false
			}
		case []any:
			if !slices.Contains(v, any(want)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// MayUse reports whether c may use the profile named p ("" is the whole
// aggregate).
func (c *Client) MayUse(p string) bool {
	return c.Profiles == nil || (p != "" && slices.Contains(c.Profiles, p))
}

// Profile is a named subset of the aggregate (a member of the top-level
// "profiles" object), served at <path>/<name> and by `serve --stdio
// --profile NAME`.
type Profile struct {
	// Name is the key in "profiles": letters, digits, '_' and '-'.
	Name string
	// Servers are the servers whose tools, resources and prompts the
	// profile may show; nil means every server.
	Servers []string
	// Tools and Exclude are globs over canonical tool IDs
	// ("server:tool", the syntax of policy patterns): a tool is in the
	// profile when its server is, Tools is empty or one of them matches,
	// and none of Exclude matches.
	Tools   []string
	Exclude []string
	// ContextWindow ("contextWindow") is the context window, in tokens,
	// of the model the profile serves, or 0; see Context.ToolsShare. It
	// counts before a client's.
	ContextWindow int

	tools, exclude []policy.Glob // compiled from Tools and Exclude
}

// HasServer reports whether the profile shows the server's entries.
func (p *Profile) HasServer(server string) bool {
	return p.Servers == nil || slices.Contains(p.Servers, server)
}

// HasTool reports whether the tool whose canonical ID is id, of server,
// is in the profile. A built-in tool (server "") is in a profile only
// when the profile names no servers and no tool globs: it reaches every
// server's entries.
func (p *Profile) HasTool(server, id string) bool {
	if server == "" {
		return p.Servers == nil && p.Tools == nil
	}
	if !p.HasServer(server) {
		return false
	}
	if len(p.tools) > 0 && !slices.ContainsFunc(p.tools, func(g policy.Glob) bool { return g.Match(id) }) {
		return false
	}
	return !slices.ContainsFunc(p.exclude, func(g policy.Glob) bool { return g.Match(id) })
}

// Profile returns the profile named name, or nil.
func (c *Config) Profile(name string) *Profile {
	i := slices.IndexFunc(c.Profiles, func(p *Profile) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return c.Profiles[i]
}

// Client returns the client named name, or nil.
func (c *Config) Client(name string) *Client {
	i := slices.IndexFunc(c.Clients, func(cl *Client) bool { return cl.Name == name })
	if i < 0 {
		return nil
	}
	return c.Clients[i]
}

// identName is what a client or profile may be called: it is a URL path
// segment and a label in the audit log.
var identName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func checkIdentName(name string) string {
	if !identName.MatchString(name) || len(name) > MaxNameLen {
		return fmt.Sprintf("name %s: want 1 to %d letters, digits, '_' or '-'", quote(name), MaxNameLen)
	}
	return ""
}

var (
	clientFields  = []string{"token", "tokenEnv", "subject", "claims", "profiles", "contextWindow"}
	profileFields = []string{"servers", "tools", "exclude", "contextWindow"}
)

// decodeClients decodes the top-level "clients" object.
func (d *decoder) decodeClients(n *node, p *jsonPath) []*Client {
	var out []*Client
	d.eachNamed(n, p, func(name string, val *node, cp *jsonPath) {
		c := &Client{Name: name}
		tokenSet := false
		for _, f := range val.members {
			fp := cp.k(f.key)
			switch f.key {
			case "token":
				tmpl, ok := d.str(f.val, fp, "")
				if !ok {
					continue
				}
				if !strings.Contains(tmpl, "${") {
					d.add(fp, "", `must reference the token, never hold it: "${VAR}" or "${cred:NAME}" (or use "tokenEnv")`, nil)
					continue
				}
				tokenSet = true
				c.Token, c.Unusable = d.expandSecret(tmpl, fp)
			case "tokenEnv":
				name, ok := d.str(f.val, fp, "")
				if !ok {
					continue
				}
				if name == "" || strings.ContainsAny(name, "${}= ") {
					d.add(fp, "", "want the name of an environment variable", nil)
					continue
				}
				tokenSet = true
				c.Token, c.Unusable = d.expandSecret("${"+name+"}", fp)
			case "subject":
				c.Subject, _ = d.str(f.val, fp, "")
			case "claims":
				if om, ok := d.strMap(f.val, fp, ""); ok && om != nil {
					c.Claims = om.m
				}
			case "profiles":
				if v, ok := d.strs(f.val, fp, ""); ok {
					c.Profiles = append([]string{}, v...)
				}
			case "contextWindow":
				c.ContextWindow, _ = d.integer(f.val, fp, "", MinContextWindow, MaxContextWindow)
			default:
				d.unknown(fp, f.key, clientFields, nil, "")
			}
		}
		if hasMember(val, "token") && hasMember(val, "tokenEnv") {
			d.add(cp, "", `"token" and "tokenEnv" are alternatives; give one`, nil)
		}
		if !tokenSet && c.Subject == "" && len(c.Claims) == 0 {
			d.add(cp, "", `a client needs a token ("token" or "tokenEnv") or a JWT match ("subject", "claims")`, nil)
			return
		}
		out = append(out, c)
	})
	return out
}

// eachNamed calls f for each member of the object n (a section of named
// entries: "clients", "profiles") whose name is an identifier and whose
// value is an object, with the member's path; it records the others.
func (d *decoder) eachNamed(n *node, p *jsonPath, f func(name string, val *node, path *jsonPath)) {
	if n.kind != kindObject {
		d.wrongType(n, p, "", "object")
		return
	}
	for _, m := range n.members {
		mp := p.k(m.key)
		if msg := checkIdentName(m.key); msg != "" {
			d.add(mp, "", msg, nil)
			continue
		}
		if m.val.kind != kindObject {
			d.wrongType(m.val, mp, "", "object")
			continue
		}
		f(m.key, m.val, mp)
	}
}

// expandSecret expands a token reference. A reference that is not set
// makes the client unusable rather than the configuration invalid, as
// for servers: commands that never serve still load it.
func (d *decoder) expandSecret(tmpl string, fp *jsonPath) (val, unusable string) {
	v, _, errs := expand(tmpl, d.lookup)
	for _, e := range errs {
		if e.missing != "" {
			return "", fmt.Sprintf("%s references %s, which is not set", fp, e.missing)
		}
		d.add(fp, "", e.msg, nil)
	}
	if errs != nil {
		return "", ""
	}
	if v == "" {
		return "", fmt.Sprintf("%s is empty", fp)
	}
	return v, ""
}

// decodeProfiles decodes the top-level "profiles" object.
func (d *decoder) decodeProfiles(n *node, p *jsonPath) []*Profile {
	var out []*Profile
	d.eachNamed(n, p, func(name string, val *node, pp *jsonPath) {
		pr := &Profile{Name: name}
		for _, f := range val.members {
			fp := pp.k(f.key)
			v, ok := []string(nil), false
			switch f.key {
			case "contextWindow":
				pr.ContextWindow, _ = d.integer(f.val, fp, "", MinContextWindow, MaxContextWindow)
				continue
			case "servers", "tools", "exclude":
				v, ok = d.strs(f.val, fp, "")
			default:
				d.unknown(fp, f.key, profileFields, nil, "")
				continue
			}
			if !ok {
				continue
			}
			v = append([]string{}, v...)
			switch f.key {
			case "servers":
				pr.Servers = v
			case "tools":
				pr.Tools = v
				pr.tools = d.globs(v, fp)
			case "exclude":
				pr.Exclude = v
				pr.exclude = d.globs(v, fp)
			}
		}
		out = append(out, pr)
	})
	return out
}

// globs compiles patterns, recording malformed ones.
func (d *decoder) globs(pats []string, p *jsonPath) []policy.Glob {
	var out []policy.Glob
	for i, pat := range pats {
		if msg := checkPattern(pat); msg != "" {
			d.add(p.i(i), "", msg, nil)
			continue
		}
		g, _ := policy.CompileGlob(pat)
		out = append(out, g)
	}
	return out
}

// checkIdentities checks what clients and profiles name across the
// configuration: servers a profile lists, profiles a client lists, and
// rules' clients and profiles.
func (d *decoder) checkIdentities(cfg *Config) {
	for _, pr := range cfg.Profiles {
		for i, s := range pr.Servers {
			if !slices.ContainsFunc(cfg.Servers, func(sv *Server) bool { return sv.Name == s }) {
				d.add((*jsonPath)(nil).k("profiles").k(pr.Name).k("servers").i(i), "", fmt.Sprintf("no server is named %s", quote(s)), nil)
			}
		}
	}
	for i, r := range cfg.Policy.Rules {
		rp := (*jsonPath)(nil).k("policy").k("rules").i(i)
		for j, c := range r.Clients {
			if cfg.Client(c) == nil {
				d.add(rp.k("clients").i(j), "", fmt.Sprintf("no client is named %s", quote(c)), nil)
			}
		}
		for j, p := range r.Profiles {
			if cfg.Profile(p) == nil {
				d.add(rp.k("profiles").i(j), "", fmt.Sprintf("no profile is named %s", quote(p)), nil)
			}
		}
	}
	for _, c := range cfg.Clients {
		for i, p := range c.Profiles {
			if cfg.Profile(p) == nil {
				d.add((*jsonPath)(nil).k("clients").k(c.Name).k("profiles").i(i), "", fmt.Sprintf("no profile is named %s", quote(p)), nil)
			}
		}
	}
}

// hasMember reports whether the object n has the key.
func hasMember(n *node, key string) bool {
	return slices.ContainsFunc(n.members, func(m member) bool { return m.key == key })
}
