package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/era"
)

// A call to a server that needs an OAuth login is an isError result with
// needs_login and the command to run (toClient). A client that declared
// URL-mode elicitation is offered the login URL instead (offerLogin): the
// host starts the login (host.Login: the loopback redirect listener, or
// the host's OAuthCallback served at the front door's callback path, one
// login per server shared by concurrent calls, abandoned after
// host.OAuthOptions.LoginTimeout), and
//   - a 2025 client, which the gateway can ask during the call, is sent
//     elicitation/create in url mode; once it accepts and the redirect
//     has brought the grant (within the call's own deadline), the call is
//     made again and its result returned;
//   - a 2026-07-28 client, which has no server-to-client requests, gets
//     the URLElicitationRequired error (-32042) naming the URL; it calls
//     again once the person has logged in.
// A client that declines, or a login that fails, gets the isError result.
// The operator is offered the server's login (operator): the grant it
// makes serves every caller of the server. Any other caller is offered a
// login only to a server with "oauth.perCaller" (the result's _meta says
// "login": "caller"), and that login is its own (host.View.Login): its
// grant serves that caller alone.

// maxLogins bounds the logins one call is offered: a call made again
// after a login may need another (host.AccountsTool walks through every
// server that acts as the caller), each server once.
const maxLogins = 32

// offerLogin is receiving middleware for tools/call (see above).
func (g *Gateway) offerLogin(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || !urlElicitation(call.ClientCapabilities()) {
			return res, err
		}
		offered := map[string]bool{}
		for range maxLogins {
			server, own := needsLoginOf(res)
			if server == "" || offered[server] || (!own && !operator(call.GetExtra())) {
				return res, err
			}
			offered[server] = true
			if res, err = g.offerOne(ctx, call, server, own, next, method, req, res); err != nil {
				return res, err
			}
		}
		return res, err
	}
}

// offerOne offers call's client the login to server (its own when own)
// and makes the call again once it is done; res, the needs_login result,
// answers when the client declines or the login fails.
func (g *Gateway) offerOne(ctx context.Context, call *mcp.CallToolRequest, server string, own bool, next mcp.MethodHandler, method string, req mcp.Request, res mcp.Result) (mcp.Result, error) {
	var l *host.Login
	var lerr error
	if own {
		l, lerr = g.callerView(call).Login(ctx, server)
	} else {
		l, lerr = g.host.Login(ctx, server)
	}
	if lerr != nil {
		g.log.Warn("login not started", "server", server, "err", lerr)
		return res, nil
	}
	url := l.URL()
	if url == "" {
		// Ended without a browser leg: a grant kept meanwhile serves.
		if l.Err() != nil {
			return res, nil
		}
		return next(ctx, method, req)
	}
	params := &mcp.ElicitParams{
		Mode:          "url",
		Message:       fmt.Sprintf("Switchboard: MCP server %q needs you to log in. Open the URL to log in; the call goes on once you have.", server),
		URL:           url,
		ElicitationID: elicitationID(),
	}
	select {
	case <-l.Back():
		// The person has logged in (a client calling again after
		// -32042): the call waits for the grant.
		return g.afterLogin(ctx, l, next, method, req, res)
	default:
	}
	if era.Modern(call.ProtocolVersion()) {
		return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{params})
	}
	ans, eerr := call.Session.Elicit(ctx, params)
	if eerr != nil || ans.Action != "accept" {
		return res, nil
	}
	return g.afterLogin(ctx, l, next, method, req, res)
}

// afterLogin waits for l within ctx and makes the call again; res, the
// needs_login result, answers when the login fails or takes too long.
func (g *Gateway) afterLogin(ctx context.Context, l *host.Login, next mcp.MethodHandler, method string, req mcp.Request, res mcp.Result) (mcp.Result, error) {
	select {
	case <-l.Done():
	case <-ctx.Done():
		return res, nil
	}
	if l.Err() != nil {
		return res, nil
	}
	return next(ctx, method, req)
}

// urlElicitation reports whether a client declared URL-mode elicitation.
func urlElicitation(caps *mcp.ClientCapabilities) bool {
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// needsLoginOf returns the server of a needs_login result made by
// toClient, or "", and whether the login is the caller's own.
func needsLoginOf(res mcp.Result) (server string, own bool) {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil || !r.IsError {
		return "", false
	}
	m, _ := r.Meta[ErrorMetaKey].(map[string]any)
	if m["code"] != string(fault.CodeNeedsLogin) {
		return "", false
	}
	s, _ := m["server"].(string)
	return s, m["login"] == "caller"
}

// elicitationID is a fresh ID for a URL-mode elicitation.
func elicitationID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}
