package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
)

// serveAuth are the flags of `serve` for the gateway as an OAuth 2.1
// resource server, and for profiles.
type serveAuth struct {
	issuer, audience, jwks string
	scopes                 []string
	profile                string // --profile, with --stdio
}

func (a *serveAuth) register(fs *flag.FlagSet) {
	fs.StringVar(&a.issuer, "oauth-issuer", "", "accept JWT access tokens of the authorization server `URL` (its signing keys from its metadata)")
	fs.StringVar(&a.audience, "oauth-audience", "", "the `audience` a JWT must carry: the gateway's resource identifier, normally its URL")
	fs.StringVar(&a.jwks, "oauth-jwks", "", "read the issuer's signing keys from this `URL or file` instead of its metadata")
	fs.Func("oauth-scopes", "scopes every JWT must carry, separated by spaces or commas", func(s string) error {
		a.scopes = append(a.scopes, strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })...)
		return nil
	})
	fs.StringVar(&a.profile, "profile", "", "with --stdio, serve only the configuration's profile `NAME`")
}

// check rejects contradictory flags.
func (a *serveAuth) check(f *serveFlags) error {
	oauth := a.issuer != "" || a.audience != "" || a.jwks != "" || len(a.scopes) > 0
	switch {
	case oauth && (a.issuer == "" || a.audience == ""):
		return errors.New("serve: --oauth-issuer and --oauth-audience go together (and --oauth-jwks, --oauth-scopes need them)")
	case oauth && f.stdio:
		return errors.New("serve: --oauth-* apply to --http; --stdio has no bearer tokens")
	case oauth && f.noAuth:
		return errors.New("serve: --no-auth and --oauth-issuer contradict each other")
	case a.profile != "" && !f.stdio:
		return errors.New("serve: --profile is for --stdio; over HTTP each profile is served at <path>/<name>")
	}
	return nil
}

// authOptions returns the gateway's AuthOptions when the caller must be
// told apart (JWTs, or named clients in the configuration), or nil for
// the front door's own single-token check.
func (r *run) authOptions(ctx context.Context) (*gateway.AuthOptions, error) {
	a, f := &r.serve.auth, r.serve
	if f.noAuth && len(r.cfg.Clients) > 0 {
		fmt.Fprintln(r.env.Stderr, "warning: --no-auth: the configuration's clients are not told apart; every caller is anonymous")
	}
	if f.noAuth || (a.issuer == "" && len(r.cfg.Clients) == 0) {
		return nil, nil
	}
	for _, c := range r.cfg.Clients {
		if c.Unusable != "" {
			fmt.Fprintf(r.env.Stderr, "warning: client %q cannot authenticate: %s\n", c.Name, c.Unusable)
		}
	}
	opts := &gateway.AuthOptions{Token: f.token, Issuer: a.issuer, Resource: a.audience, Scopes: a.scopes}
	if a.issuer != "" {
		v, err := jwtauth.New(ctx, jwtauth.Options{Issuer: a.issuer, Audience: a.audience, JWKS: a.jwks})
		if err != nil {
			return nil, fmt.Errorf("serve: %v", err)
		}
		opts.JWT = v
	}
	return opts, nil
}
