// Package oauthtest is, for tests only, a real OAuth 2.1 authorization
// server on 127.0.0.1 in front of a real go-sdk Streamable HTTP MCP server
// protected by go-sdk's auth.RequireBearerToken: authorization-server
// metadata (RFC 8414), protected-resource metadata (RFC 9728, through
// go-sdk's handler), /authorize that redirects at once (PKCE S256 and
// the resource indicator required, iss in the redirect), /token (code and
// refresh grants; the client must be one it knows, named in the form or
// by HTTP Basic authentication; with Options.TokenExchange, the RFC 8693
// token-exchange grant too, whose actor_token it names in the token's
// "act" claim; with Options.ClientCredentials, the client_credentials
// grant), /register (dynamic registration). A login
// is a user's (BrowseAs; "user" by default), and its access tokens are
// JWTs whose subject is that user (signed with a key of the server's, for
// clients that read who they are; the MCP server looks them up); the
// whoami tool answers the user and records each call (Calls). The test
// can expire, revoke and count tokens, a user's alone too, and count, add
// and revoke clients.
//
// It imports go-sdk and the standard library.
package oauthtest

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Options shape the server. The zero value is usable.
type Options struct {
	// Scopes are the scopes the MCP server requires; nil means none.
	Scopes []string
	// TTL is the life of an access token. Zero means an hour.
	TTL time.Duration
	// NoRefresh issues no refresh tokens.
	NoRefresh bool
	// ExactRedirect refuses an authorization request whose redirect_uri
	// is not one its client registered, port and all (as some servers
	// do, against RFC 8252 section 7.3). A client added by AddClient
	// registered none, and may use any.
	ExactRedirect bool
	// TokenExchange, when set, takes the token-exchange grant (RFC 8693)
	// from a known client: it says whose subject_token it is (the user
	// the token issued for it acts as), or false to refuse it. An
	// actor_token, when sent, must be an access token this server issued
	// (of type access_token); the token issued then names its user in
	// its "act" claim (RFC 8693 section 4.1).
	TokenExchange func(subjectToken string) (user string, ok bool)
	// ClientCredentials takes the client_credentials grant from a known
	// client: the token issued is the client's own, its user
	// "client:<ID>".
	ClientCredentials bool
}

// DefaultUser is who logs in when a browser leg names nobody.
const DefaultUser = "user"

// userHeader names the user of a browser leg (BrowseAs).
const userHeader = "X-Oauthtest-User"

// A Call is one call of the whoami tool as the MCP server saw it.
type Call struct {
	// For is the argument "for": whom the test made the call for.
	For string
	// User is the user whose token the request carried.
	User string
	// Authorization is the request's Authorization header.
	Authorization string
}

// Server is the authorization server and the MCP server it protects.
type Server struct {
	// Issuer is the authorization server's URL; MCP is the MCP endpoint.
	Issuer, MCP string

	opts Options
	as   *httptest.Server
	rs   *httptest.Server

	mu       sync.Mutex
	clients  map[string]bool      // registered client IDs
	redirect map[string][]string  // client ID → the redirect URIs it registered
	noToken  map[string]bool      // clients whose token requests are refused (RefuseTokens)
	codes    map[string]codeGrant // code → grant
	access   map[string]time.Time // access token → expiry
	refresh  map[string]string    // live refresh token → its client
	users    map[string]string    // access or refresh token → its user
	calls    []Call               // the whoami calls, in order
	exchange []string             // the subject tokens of token exchanges, in order
	actors   []string             // the actor of each token exchange, in order; "" for none
	key      []byte               // signs the access tokens
	seen     []string             // the client of every authorization request, in order
	counts   map[string]int       // requests by endpoint, "refresh" for refresh grants
	issued   []string             // every access and refresh token issued
	resource map[string]string    // access token → resource it was issued for
}

type codeGrant struct {
	client, challenge, redirect, resource, scope, user string
}

// Start starts both servers on 127.0.0.1:0; they stop with the test.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	s := &Server{clients: map[string]bool{}, redirect: map[string][]string{}, noToken: map[string]bool{}, codes: map[string]codeGrant{}, access: map[string]time.Time{},
		refresh: map[string]string{}, counts: map[string]int{}, resource: map[string]string{}, users: map[string]string{}, key: []byte(rand.Text())}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.TTL == 0 {
		s.opts.TTL = time.Hour
	}
	s.as = httptest.NewServer(http.HandlerFunc(s.serveAS))
	t.Cleanup(s.as.Close)
	s.Issuer = s.as.URL

	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	type whoamiIn struct {
		For string `json:"for,omitempty"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Says who called."},
		func(ctx context.Context, req *mcp.CallToolRequest, in whoamiIn) (*mcp.CallToolResult, any, error) {
			c := Call{For: in.For}
			if e := req.GetExtra(); e != nil {
				if e.TokenInfo != nil {
					c.User = e.TokenInfo.UserID
				}
				c.Authorization = e.Header.Get("Authorization")
			}
			s.mu.Lock()
			s.calls = append(s.calls, c)
			s.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "caller ok: " + c.User}}}, nil, nil
		})
	mux := http.NewServeMux()
	s.rs = httptest.NewServer(mux)
	t.Cleanup(s.rs.Close)
	s.MCP = s.rs.URL + "/mcp"
	prmURL := s.rs.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.MCP, AuthorizationServers: []string{s.Issuer}, ScopesSupported: s.opts.Scopes,
	}))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL, Scopes: s.opts.Scopes})(h))
	return s
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["mcp"]++
	exp, ok := s.access[token]
	if !ok || !time.Now().Before(exp) || s.resource[token] != s.MCP {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: s.opts.Scopes, Expiration: exp, UserID: s.users[token]}, nil
}

// Calls returns the whoami calls so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Actors returns, for each token exchange so far, whom its actor_token
// named ("" when it had none), in order.
func (s *Server) Actors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.actors)
}

// Exchanged returns the subject tokens of the token exchanges so far.
func (s *Server) Exchanged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.exchange)
}

// RevokeUser forgets every access and refresh token of user, as when
// that person revokes the app in their account; other users' stay.
func (s *Server) RevokeUser(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, u := range s.users {
		if u == user {
			delete(s.access, t)
			delete(s.refresh, t)
		}
	}
}

// UserOf returns the user a token was issued to, "" when none.
func (s *Server) UserOf(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[token]
}

// Count returns how many requests an endpoint had ("authorize", "token",
// "register", "metadata", "mcp" for verified MCP requests) or how many
// refresh grants were made ("refresh").
func (s *Server) Count(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[what]
}

// Issued returns every access and refresh token issued so far, for tests
// that look for them where they must not be.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// RevokeAccess makes every access token issued so far unknown to the MCP
// server (a refresh still works).
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll forgets every access and refresh token.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// AddClient makes id a client the server knows, as an administrator's
// registration would.
func (s *Server) AddClient(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[id] = true
}

// RevokeClient forgets the client id, as when a person deletes the app
// in their account: its authorization requests are refused, and its
// token requests answered invalid_client, its refresh tokens included.
func (s *Server) RevokeClient(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.clients, id)
	delete(s.redirect, id)
	clear(s.access)
	for rt, c := range s.refresh {
		if c == id {
			delete(s.refresh, rt)
		}
	}
}

// RefuseTokens makes the token endpoint answer invalid_client to the
// client id while its authorization requests are still taken, as for a
// client whose credentials changed since it was registered.
func (s *Server) RefuseTokens(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noToken[id] = true
}

// Authorized returns the client of every authorization request so far,
// in order.
func (s *Server) Authorized() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		s.count("metadata")
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                         s.Issuer,
			"authorization_endpoint":                         s.Issuer + "/authorize",
			"token_endpoint":                                 s.Issuer + "/token",
			"registration_endpoint":                          s.Issuer + "/register",
			"response_types_supported":                       []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none"},
			"authorization_response_iss_parameter_supported": true,
		})
	case "/register":
		s.count("register")
		var m struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
			return
		}
		id := "client-" + rand.Text()[:8]
		s.mu.Lock()
		s.clients[id] = true
		s.redirect[id] = m.RedirectURIs
		s.mu.Unlock()
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none"})
	case "/authorize":
		s.count("authorize")
		s.authorize(w, r)
	case "/token":
		s.count("token")
		s.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	known := s.clients[q.Get("client_id")]
	uris, registered := s.redirect[q.Get("client_id")]
	s.seen = append(s.seen, q.Get("client_id"))
	s.mu.Unlock()
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case s.opts.ExactRedirect && registered && !slices.Contains(uris, q.Get("redirect_uri")):
		http.Error(w, "the redirect URI is not the client's", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 is required", http.StatusBadRequest)
		return
	case q.Get("resource") == "":
		http.Error(w, "the resource indicator is required", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" {
		http.Error(w, "the redirect must be to 127.0.0.1", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	user := cmp.Or(r.Header.Get(userHeader), DefaultUser)
	s.mu.Lock()
	s.codes[code] = codeGrant{client: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scope: q.Get("scope"), user: user}
	s.mu.Unlock()
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", s.Issuer)
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	client := r.PostForm.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok {
		client, _ = url.QueryUnescape(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.clients[client] || s.noToken[client] {
		// RFC 6749 section 5.2: the client is checked first, and the
		// grant left as it was.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	var resource, user, actor string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("resource") != g.resource {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		resource, user = g.resource, g.user
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if c, ok := s.refresh[rt]; !ok || c != client {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		s.counts["refresh"]++
		delete(s.refresh, rt) // rotated
		resource, user = s.MCP, s.users[rt]
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		st := r.PostForm.Get("subject_token")
		s.exchange = append(s.exchange, st)
		var ok bool
		if s.opts.TokenExchange != nil {
			user, ok = s.opts.TokenExchange(st)
		}
		if at := r.PostForm.Get("actor_token"); at != "" || r.PostForm.Has("actor_token_type") {
			exp, live := s.access[at]
			if !live || !time.Now().Before(exp) || r.PostForm.Get("actor_token_type") != "urn:ietf:params:oauth:token-type:access_token" {
				s.actors = append(s.actors, "refused")
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
				return
			}
			actor = s.users[at]
		}
		s.actors = append(s.actors, actor)
		if !ok || r.PostForm.Get("resource") != s.MCP {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		resource = s.MCP
	case "client_credentials":
		if !s.opts.ClientCredentials {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unauthorized_client"})
			return
		}
		resource, user = r.PostForm.Get("resource"), "client:"+client
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	exp := time.Now().Add(s.opts.TTL)
	at := s.mint(user, actor, exp)
	s.access[at] = exp
	s.resource[at] = resource
	s.users[at] = user
	s.issued = append(s.issued, at)
	out := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.opts.TTL.Seconds())}
	if r.PostForm.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
		out["issued_token_type"] = "urn:ietf:params:oauth:token-type:access_token"
	}
	if len(s.opts.Scopes) > 0 {
		out["scope"] = strings.Join(s.opts.Scopes, " ")
	}
	if !s.opts.NoRefresh {
		rt := "rt-" + rand.Text()
		s.refresh[rt] = client
		s.users[rt] = user
		s.issued = append(s.issued, rt)
		out["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) count(what string) {
	s.mu.Lock()
	s.counts[what]++
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprintf("oauthtest: %v", err))
	}
}

// mint makes an access token for user: a JWT (HS256, under s.key) with
// its subject, a unique ID and its expiry, and, when actor is not "",
// the "act" claim naming the actor. s.mu is held.
func (s *Server) mint(user, actor string, exp time.Time) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"at+jwt"}`))
	claims := map[string]any{"iss": s.Issuer, "sub": user, "jti": rand.Text(), "exp": exp.Unix()}
	if actor != "" {
		claims["act"] = map[string]any{"sub": actor}
	}
	body, _ := json.Marshal(claims)
	signing := head + "." + enc.EncodeToString(body)
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}

// Browse is the browser leg driven over HTTP: it GETs authURL and follows
// the redirects, to the loopback redirect listener in the end. The user
// logging in is DefaultUser.
func Browse(ctx context.Context, authURL string) error {
	return BrowseAs(ctx, authURL, "")
}

// BrowseAs is Browse with user logging in ("" is DefaultUser).
func BrowseAs(ctx context.Context, authURL, user string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	if user != "" {
		req.Header.Set(userHeader, user)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect listener answered %s", resp.Status)
	}
	return nil
}
