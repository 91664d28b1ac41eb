package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/jwtauth"
	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// AuthOptions make the gateway's HTTP endpoint know its callers: the
// named clients of the configuration (by their own static tokens, or by
// the subject and claims of a JWT), JWT access tokens of an OAuth
// authorization server (the gateway as an OAuth 2.1 resource server), and
// the one static token of a single user.
//
// Tokens are checked by go-sdk's auth.RequireBearerToken, in the front
// door's place for the token (Host and Origin are checked before, the
// content type and body after); the protected resource metadata (RFC 9728)
// is served by go-sdk's auth.ProtectedResourceMetadataHandler at
// /.well-known/oauth-protected-resource, and at that path followed by the
// endpoint's path (and a profile's), and every 401 names it in
// WWW-Authenticate's resource_metadata.
type AuthOptions struct {
	// Token is the static token of a single user ("" for none): the
	// --token-env or generated one. Its caller has no name, as before
	// clients had names, and every scope.
	Token string
	// JWT checks JWT access tokens; nil accepts none.
	JWT *jwtauth.Verifier
	// Issuer is the authorization server named in the metadata.
	Issuer string
	// Resource is the resource identifier in the metadata: the audience
	// JWTs must carry. Default: the endpoint's URL on the listening
	// address.
	Resource string
	// Scopes are the scopes a JWT must carry (all of them). A static
	// token has them all.
	Scopes []string
}

// tokenInfoClient is the TokenInfo.Extra key of a named client's name.
const tokenInfoClient = "io.switchboard/client"

// tokenInfoJWT is the TokenInfo.Extra key of the JWT a caller presented,
// handed to the host for token exchange (host.Caller.Token); it lives as
// long as the request.
const tokenInfoJWT = "io.switchboard/jwt"

// callerToken is the JWT a request's caller presented, "" when none.
func callerToken(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	tok, _ := ti.Extra[tokenInfoJWT].(string)
	return tok
}

// clientName returns the configured client a token belongs to, or "".
func clientName(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	name, _ := ti.Extra[tokenInfoClient].(string)
	return name
}

// sessionClient names the caller of a request for the session caps: a
// named client or a JWT's subject (its TokenInfo's UserID), the single
// static token, else the front door's caller (its one token, or nobody
// with --no-auth).
func sessionClient(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		if ti.UserID != "" {
			return ti.UserID
		}
		return "token"
	}
	c, _ := frontdoor.Caller(r.Context())
	return c
}

// verifier is the auth.TokenVerifier of opts: the named clients' static
// tokens (read from the host's configuration at each request, so a
// reload changes them), the single user's, then a JWT. Static tokens are
// compared by their SHA-256 sums in constant time, as the front door does.
func (g *Gateway) verifier(opts *AuthOptions) auth.TokenVerifier {
	single := tokencmp.SumOf(opts.Token)
	return func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		for _, c := range hostlink.Of(g.host).Clients() {
			if tokencmp.Equal(token, c.Token) {
				return &auth.TokenInfo{UserID: "client:" + c.Name, Scopes: opts.Scopes,
					Extra: map[string]any{tokenInfoClient: c.Name}}, nil
			}
		}
		if opts.Token != "" && single.Matches(token) {
			return &auth.TokenInfo{Scopes: opts.Scopes}, nil
		}
		if opts.JWT == nil || strings.Count(token, ".") != 2 {
			return nil, auth.ErrInvalidToken
		}
		claims, err := opts.JWT.Verify(ctx, token)
		if err != nil {
			g.log.Debug("bearer token refused", "reason", err.Error())
			return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, strings.TrimPrefix(err.Error(), jwtauth.ErrInvalid.Error()+": "))
		}
		ti := &auth.TokenInfo{UserID: "sub:" + claims.Subject, Scopes: claims.Scopes, Expiration: claims.Expiry,
			Extra: map[string]any{tokenInfoJWT: token}}
		for _, c := range hostlink.Of(g.host).Clients() {
			if c.MatchesClaims(claims.Subject, claims.Raw) {
				ti.UserID, ti.Extra[tokenInfoClient] = "client:"+c.Name, c.Name
				break
			}
		}
		return ti, nil
	}
}

// metadataPath is where the protected resource metadata is served.
const metadataPath = "/.well-known/oauth-protected-resource"

// authFront sets front to authenticate with opts on the endpoint at addr.
func (g *Gateway) authFront(front *frontdoor.Options, opts *AuthOptions, addr net.Addr) error {
	if front.Token != "" || front.NoAuth {
		return errors.New("gateway: AuthOptions take the place of the front door's Token and NoAuth")
	}
	path := front.Path
	if path == "" {
		path = frontdoor.DefaultPath
	}
	base := "http://" + addr.String()
	resource := opts.Resource
	if resource == "" {
		resource = base + path
	}
	// The metadata URL is on the gateway itself: the resource's own
	// origin when the resource is a URL, else the listening address.
	origin := base
	if u, err := url.Parse(resource); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	meta := &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		ScopesSupported:        opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Switchboard gateway",
	}
	if opts.Issuer != "" {
		meta.AuthorizationServers = []string{opts.Issuer}
	}
	metaHandler := auth.ProtectedResourceMetadataHandler(meta)
	front.WellKnown = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == metadataPath || p == metadataPath+path || (strings.HasPrefix(p, metadataPath+path+"/") && hostlink.Of(g.host).Profile(strings.TrimPrefix(p, metadataPath+path+"/")) != nil) {
			metaHandler.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})
	if m := front.Metrics; m != nil {
		front.Metrics = g.operatorOnly(m)
	}
	if a := front.API; a != nil {
		front.API = ownerOnly(a)
	}
	// The status page logs its operator in with the single static token;
	// with none (JWTs and named clients only), it has no login.
	front.Token = opts.Token
	front.Authenticate = auth.RequireBearerToken(g.verifier(opts), &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: origin + metadataPath + path,
		Scopes:              opts.Scopes,
		// A static token has no expiry; a JWT without one is refused by
		// jwtauth, which also allows for the clock skew.
		AllowMissingExpiration: true,
		ClockSkew:              jwtauth.DefaultLeeway,
	})
	return nil
}

// mayUse is middleware after authentication that keeps a named client to
// its profiles: the whole aggregate at path, a profile at path/NAME.
func (g *Gateway) mayUse(path string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil || (r.URL.Path != path && !strings.HasPrefix(r.URL.Path, path+"/")) {
			next.ServeHTTP(w, r)
			return
		}
		name := clientName(ti)
		if name == "" {
			next.ServeHTTP(w, r)
			return
		}
		profile := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, path), "/")
		if profile != "" && hostlink.Of(g.host).Profile(profile) == nil {
			next.ServeHTTP(w, r) // 404
			return
		}
		for _, c := range hostlink.Of(g.host).Clients() {
			if c.Name == name {
				if !c.MayUse(profile) {
					w.Header().Set("Cache-Control", "no-store")
					http.Error(w, "forbidden: this client may not use this profile", http.StatusForbidden)
					return
				}
				next.ServeHTTP(w, r)
				return
			}
		}
		// The client went away in a reload since its token was checked.
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
}

// operatorOnly keeps /metrics to the callers that may see everything: the
// single static token and named clients limited to no profile. The
// metrics name every server and tool; they change nothing.
func (g *Gateway) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		ok := ti != nil && ti.UserID == ""
		if name := clientName(ti); ti != nil && name != "" {
			for _, c := range hostlink.Of(g.host).Clients() {
				ok = ok || (c.Name == name && c.MayUse(""))
			}
		}
		if !ok {
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, "forbidden: this is for the operator's token", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownerOnly keeps the control API, which changes what every caller gets
// (approvals, restarts, the configuration), to the single static token.
func ownerOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ti := auth.TokenInfoFromContext(r.Context()); ti == nil || ti.UserID != "" {
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, "forbidden: the control API is for the gateway's own token", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// operator reports whether a request's caller is the gateway's operator:
// stdio (local), the front door's single token, or, with authentication
// middleware, the single static token; not a named client or a JWT.
func operator(extra *mcp.RequestExtra) bool {
	return extra == nil || extra.TokenInfo == nil || extra.TokenInfo.UserID == ""
}
