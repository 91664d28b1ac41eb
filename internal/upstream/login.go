package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// Login runs the browser login to an HTTP server that asks for OAuth, the
// one flow behind `switchboard login` and the gateway's offer of the login
// URL: a loopback redirect listener is bound first (its URL is the
// redirect URL the client registers), then the server is connected alone
// with opts' OAuth settings and a browser leg, and when it asks for a
// login show is given the authorization URL; Login then waits for the
// redirect (bounded by ctx), and the grant that comes back is kept in
// opts.OAuth.TokensPath. The listener is closed before Login returns.
// back, when not nil, is called when the redirect has arrived (the grant
// is then being fetched). A server that asks for no login, or takes the
// grant already kept, returns nil without calling show.
func Login(ctx context.Context, sc *config.Server, opts *Options, show func(authURL string), back func()) error {
	if opts.OAuth == nil || sc.Transport != config.TransportHTTP {
		return fault.New(fault.CodeInvalidInput, sc.Name, "login", errors.New("only Streamable HTTP servers log in with OAuth"))
	}
	red, err := listenKeptRedirect(opts.OAuth.TokensPath, sc.URL)
	if err != nil {
		return fault.New(fault.CodeUnavailable, sc.Name, "login", err)
	}
	defer red.Close()
	o := *opts.OAuth
	o.RedirectURL = red.URL
	o.Authorize = func(ctx context.Context, _, authURL string) (*auth.AuthorizationResult, error) {
		red.Expect(authURL)
		show(authURL)
		res, err := red.Wait(ctx)
		if err == nil && back != nil {
			back()
		}
		return res, err
	}
	one := *opts
	one.OAuth = &o
	conn, err := Dial(ctx, sc, &one)
	if err != nil {
		return loginError(sc.Name, err)
	}
	return conn.Close()
}

// loginError is err without what an authorization server's refusal of the
// code exchange carried: oauth2.RetrieveError quotes the response body,
// which may echo a credential. Its error code is kept.
func loginError(server string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err
	}
	return fault.New(fault.CodeAuthFailure, server, "login",
		fmt.Errorf("the authorization server refused the login: %q", truncate(re.ErrorCode, 64)))
}

// GrantSaved returns when the grant kept for s in o.TokensPath was saved,
// the zero time when none is kept: a later time means a login (in this
// process or another) has given the server a new grant.
func GrantSaved(o *OAuth, s *config.Server) (saved time.Time) {
	if o == nil || o.TokensPath == "" || s.Transport != config.TransportHTTP {
		return saved
	}
	ts, err := creds.LoadTokens(o.TokensPath, s.URL)
	if err != nil {
		return saved
	}
	for i := range ts {
		if (s.OAuth == nil || s.OAuth.ClientID == "" || ts[i].ClientID == s.OAuth.ClientID) && ts[i].Saved.After(saved) {
			saved = ts[i].Saved
		}
	}
	return saved
}
