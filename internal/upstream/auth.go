package upstream

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// The OAuth 2.1 client of Streamable HTTP servers is internal/oauth's. A
// connection touches it in three places: its handler is made at Dial
// (setupOAuth), go-sdk's transport is given it as its OAuthHandler and its
// round tripper goes under the server's requests (connect.go), and Auth
// reads its state. Login runs internal/oauth's login over a connection
// made here.

// setupOAuth makes the connection's OAuth handler for a Streamable HTTP
// server, when Options.OAuth is set.
func (c *Conn) setupOAuth() error {
	if c.server.Transport != config.TransportHTTP {
		return nil
	}
	if c.server.OAuth == nil {
		for k := range c.server.Headers {
			if strings.EqualFold(k, "Authorization") {
				return nil // a static token: a refusal of it is no login to ask for
			}
		}
	}
	if c.opts.OAuth == nil {
		return nil
	}
	base := &http.Client{Transport: c.baseTransport()}
	if c.guarded() {
		base.CheckRedirect = netguard.CheckRedirect
	}
	h, err := oauth.New(c.server, c.opts.OAuth, base, c.log)
	if err != nil {
		return fault.New(fault.CodeAuthFailure, c.server.Name, "connect", err)
	}
	c.oauth = h
	return nil
}

// Auth describes the connection's OAuth grant for a person
// (oauth.Handler.State): "" when the server asked for none.
func (c *Conn) Auth() string {
	if c.oauth == nil {
		return ""
	}
	return c.oauth.State()
}

// Login runs oauth.Login to sc with opts' OAuth settings, connecting to the
// server alone (with opts otherwise) for it.
func Login(ctx context.Context, sc *config.Server, opts *Options, show func(authURL string), back func()) error {
	return oauth.Login(ctx, sc, opts.OAuth, show, back, func(ctx context.Context, o *oauth.Config) error {
		one := *opts
		one.OAuth = o
		conn, err := Dial(ctx, sc, &one)
		if err != nil {
			return err
		}
		return conn.Close()
	})
}

// AuthSubject is who the server knows the connection's OAuth grant's
// holder as (oauth.Handler.Subject): "" without a grant or when its
// tokens do not say.
func (c *Conn) AuthSubject() string {
	if c.oauth == nil {
		return ""
	}
	return c.oauth.Subject()
}
