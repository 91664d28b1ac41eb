package oauth

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
// URL: a loopback redirect listener is bound first, or a routed redirect
// taken from o.Callback (its URL is the redirect URL the client
// registers), then connect is called to connect
// to the server alone with o's settings and a browser leg (and to close
// that connection again), and when the server asks for a login show is
// given the authorization URL; Login then waits for the redirect (bounded
// by ctx), and the grant that comes back is kept in o.TokensPath. The
// listener is closed before Login returns. back, when not nil, is called
// when the redirect has arrived, before the browser is answered (the
// grant is then being fetched). A
// server that asks for no login, or takes the grant already kept, returns
// nil without calling show.
func Login(ctx context.Context, sc *config.Server, o *Config, show func(authURL string), back func(), connect func(context.Context, *Config) error) error {
	if o == nil || sc.Transport != config.TransportHTTP {
		return fault.New(fault.CodeInvalidInput, sc.Name, "login", errors.New("only Streamable HTTP servers log in with OAuth"))
	}
	var red *Redirect
	var err error
	if o.Callback != nil {
		red = o.Callback.redirect(sc.Name, o.Caller)
	} else if red, err = listenKeptRedirect(o.TokensPath, sc.URL); err != nil {
		return fault.New(fault.CodeUnavailable, sc.Name, "login", err)
	}
	defer red.Close()
	if back != nil {
		red.OnArrival(back)
	}
	one := *o
	one.RedirectURL = red.URL
	one.Authorize = func(ctx context.Context, _, authURL string) (*auth.AuthorizationResult, error) {
		red.Expect(authURL)
		show(authURL)
		return red.Wait(ctx)
	}
	if err := connect(ctx, &one); err != nil {
		return loginError(sc.Name, err)
	}
	return nil
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
func GrantSaved(o *Config, s *config.Server) (saved time.Time) {
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
