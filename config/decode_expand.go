package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

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
