package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
)

// serveAuth are the flags of `serve` for the gateway as an OAuth 2.1
// resource server, and for profiles.
type serveAuth struct {
	issuer, audience, jwks string
	scopes                 []string
	requireAtJWT           bool
	profile                string // --profile, with --stdio
}

func (a *serveAuth) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.issuer, "oauth-issuer", "", "accept JWT access tokens of the authorization server `URL` (its signing keys from its metadata); overrides the configuration's gateway.oauth.issuer")
	fs.StringVar(&a.audience, "oauth-audience", "", "the `audience` a JWT must carry: the gateway's resource identifier, normally its URL; overrides gateway.oauth.audience")
	fs.StringVar(&a.jwks, "oauth-jwks", "", "read the issuer's signing keys from this `URL or file` instead of its metadata; overrides gateway.oauth.jwks")
	fs.Func("oauth-scopes", "the `scopes` every JWT must carry, separated by spaces or commas; they replace gateway.oauth.scopes", func(s string) error {
		a.scopes = append(a.scopes, strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })...)
		return nil
	})
	fs.BoolVar(&a.requireAtJWT, "oauth-require-at-jwt", false, "accept only JWTs whose header typ is at+jwt (RFC 9068); sets gateway.oauth.requireAtJwt")
	fs.StringVar(&a.profile, "profile", "", "with --stdio, serve only the configuration's profile `NAME`")
}

// flagged reports whether any --oauth-* flag is given.
func (a *serveAuth) flagged() bool {
	return a.issuer != "" || a.audience != "" || a.jwks != "" || len(a.scopes) > 0 || a.requireAtJWT
}

// check rejects contradictory flags. The configuration is not loaded yet:
// settle checks what the flags make of its "gateway.oauth".
func (a *serveAuth) check(f *serveFlags) error {
	oauth := a.flagged()
	switch {
	case oauth && f.stdio:
		return errors.New("serve: --oauth-* apply to --http; --stdio has no bearer tokens")
	case oauth && f.noAuth:
		return errors.New("serve: --no-auth and --oauth-issuer contradict each other")
	case a.profile != "" && !f.stdio:
		return errors.New("serve: --profile is for --stdio; over HTTP each profile is served at <path>/<name>")
	}
	return nil
}

// oauthSettings are the resource-server settings of `serve --http`: the
// configuration's "gateway.oauth" with each --oauth-* flag given in place
// of its field (--oauth-scopes replaces the list), and where they came
// from.
type oauthSettings struct {
	config.GatewayOAuth
	// from names the source for messages: "--oauth-issuer",
	// "gateway.oauth in FILE", or both joined by "with".
	from string
}

// settle merges the flags over cfg's "gateway.oauth": nil when neither
// sets anything. With --stdio the configuration's section is not read
// (it is for the HTTP endpoint, and a stdio client has no bearer token).
func (a *serveAuth) settle(f *serveFlags, cfg *config.Config) (*oauthSettings, error) {
	file := cfg.Gateway.OAuth
	if f.stdio || (file == nil && !a.flagged()) {
		return nil, nil
	}
	if file == nil {
		if a.issuer == "" || a.audience == "" {
			return nil, errors.New("serve: --oauth-issuer and --oauth-audience go together (and --oauth-jwks, --oauth-scopes need them), or give them in the configuration's gateway.oauth")
		}
		return &oauthSettings{GatewayOAuth: config.GatewayOAuth{Issuer: a.issuer, Audience: a.audience, JWKS: a.jwks, Scopes: a.scopes, RequireAtJWT: a.requireAtJWT}, from: "--oauth-issuer"}, nil
	}
	in := "gateway.oauth in " + cfg.Source
	if f.noAuth {
		return nil, fmt.Errorf("serve: --no-auth and the configuration's %s contradict each other", in)
	}
	s := &oauthSettings{GatewayOAuth: *file, from: in}
	if a.flagged() {
		s.from = "--oauth-* with " + in
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&s.Issuer, a.issuer)
	set(&s.Audience, a.audience)
	set(&s.JWKS, a.jwks)
	if len(a.scopes) > 0 {
		s.Scopes = a.scopes
	}
	s.RequireAtJWT = s.RequireAtJWT || a.requireAtJWT
	return s, nil
}

// authOptions returns the gateway's AuthOptions when the caller must be
// told apart (JWTs, or named clients in the configuration), or nil for
// the front door's own single-token check.
func (r *server) authOptions(ctx context.Context) (*gateway.AuthOptions, error) {
	f := r.serve
	o, err := f.auth.settle(&f, r.cfg)
	if err != nil {
		return nil, err
	}
	if f.noAuth && len(r.cfg.Clients) > 0 {
		fmt.Fprintln(r.env.Stderr, "warning: --no-auth: the configuration's clients are not told apart; every caller is anonymous")
	}
	if f.noAuth || (o == nil && len(r.cfg.Clients) == 0) {
		return nil, nil
	}
	for _, c := range r.cfg.Clients {
		if c.Unusable != "" {
			fmt.Fprintf(r.env.Stderr, "warning: client %q cannot authenticate: %s\n", c.Name, c.Unusable)
		}
	}
	opts := &gateway.AuthOptions{Token: f.token}
	if o != nil {
		v, err := jwtauth.New(ctx, jwtauth.Options{Issuer: o.Issuer, Audience: o.Audience, JWKS: o.JWKS,
			RequireAccessTokenType: o.RequireAtJWT, RequireScopeClaim: len(o.Scopes) > 0})
		if err != nil {
			return nil, fmt.Errorf("serve: %s: %v", o.from, err)
		}
		opts.JWT, opts.Issuer, opts.Resource, opts.Scopes = v, o.Issuer, o.Audience, o.Scopes
	}
	return opts, nil
}

// oauthChanged reports, on a reload, whether the resource-server settings
// that cfg would give differ from those of prev. The verifier, the
// protected resource metadata and the scopes required are built once,
// when serve starts listening: a change takes effect at the next start.
func (r *server) oauthChanged(prev, cfg *config.Config) bool {
	f := r.serve
	if !r.serving() || f.stdio || f.noAuth || prev == nil {
		return false
	}
	a, errA := f.auth.settle(&f, prev)
	b, errB := f.auth.settle(&f, cfg)
	if errA != nil || errB != nil {
		return (errA == nil) != (errB == nil)
	}
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	return !a.GatewayOAuth.Equal(&b.GatewayOAuth)
}
