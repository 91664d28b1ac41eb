package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// A client registered by dynamic client registration (RFC 7591) is kept
// in creds.json (creds.Client), one per resource, and the next login to
// the resource reuses it instead of registering another: go-sdk's handler
// is given it as its pre-registered client, with its issuer, so that
// go-sdk refuses it at any other authorization server. A client is kept
// when a login's grant was issued to a client that is neither configured
// (the server's oauth.clientId) nor the client ID metadata document's URL:
// go-sdk registered it (or it is the kept one, reused). A configured
// client is never replaced by a kept one, and a client ID metadata
// document the authorization server takes still comes first.
//
// The kept client is forgotten, and a login registers again, once, when
// the token endpoint answers invalid_client or unauthorized_client for it
// in a refresh (the login that follows registers), and is not offered
// when the server's authorization server is now another one (that login
// registers). When the token endpoint refuses it in a login's code
// exchange, that login fails and the resource's logins register each
// time from then on (see login). A refresh refused for the grant
// (invalid_grant) keeps it: the login that follows reuses it. `logout`
// and `remove` forget it with the grants (creds.ForgetTokens).

// keptClient is the client kept for h's resource, nil when none is or
// when it was registered with another redirect URL than the login's: an
// authorization server may compare redirect URIs exactly (RFC 8252
// section 7.3 asks it not to for a loopback one's port, not every one
// follows it), and would refuse the login in the browser, where nothing
// can register again. Login binds the kept client's port when it can.
func (h *Handler) keptClient() *creds.Client {
	if h.o.TokensPath == "" {
		return nil
	}
	c, err := creds.LoadClient(h.o.TokensPath, h.resource)
	if err != nil || c == nil || c.NoReuse || c.RedirectURI != h.o.RedirectURL {
		return nil
	}
	return c
}

// listenKeptRedirect binds a login's redirect listener: on the address of
// the redirect URL the client kept for resource was registered with, so
// that the login can reuse it, else (none kept, or the port taken) on a
// port of the system's choice.
func listenKeptRedirect(tokensPath, resource string) (*Redirect, error) {
	if tokensPath != "" {
		if c, err := creds.LoadClient(tokensPath, resource); err == nil && c != nil && !c.NoReuse {
			if u, err := url.Parse(c.RedirectURI); err == nil && u.Scheme == "http" && u.Hostname() == "127.0.0.1" && u.Port() != "" && u.Path == "/callback" {
				if red, err := listenRedirect(u.Host); err == nil {
					return red, nil
				}
			}
		}
	}
	return ListenRedirect()
}

// buildCode makes go-sdk's handler from h.codeCfg, offering h.kept as its
// pre-registered client. h.flow is held, or h is not shared yet.
func (h *Handler) buildCode() error {
	cfg := h.codeCfg
	if k := h.kept; k != nil {
		pre := &oauthex.ClientCredentials{ClientID: k.ClientID, Issuer: k.Issuer}
		if k.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: k.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	}
	code, err := auth.NewAuthorizationCodeHandler(&cfg)
	if err != nil {
		return err
	}
	h.code = code
	return nil
}

// login runs go-sdk's flow. When it was offered the kept client and the
// authorization server is not the one that registered it (go-sdk refuses
// it before the browser leg), the kept client is dropped and the flow runs
// once more, registering a new client. When the token endpoint refused
// the kept client in the code exchange, after the browser leg, the login
// fails, asking for another: the browser leg of a login (Login's
// redirect listener, the URL shown to a person) happens once. The client
// is marked creds.Client.NoReuse, so that the next login, and every one
// after, registers a new client: a refusal that comes of reusing (an
// authorization server that takes a client only in the way it was
// registered) would otherwise fail every other login. Every later login
// of h fails the same way, without registering a client nobody would log
// in with. h.flow is held.
func (h *Handler) login(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.keptErr != nil {
		resp.Body.Close()
		return h.keptErr
	}
	if h.kept != nil && h.refusedClient() == h.kept.ClientID {
		// A refresh found it unknown already: no login offers it.
		if err := h.dropKept(false); err != nil {
			return err
		}
	}
	err := h.code.Authorize(ctx, req, resp)
	if err == nil || h.kept == nil {
		return err
	}
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && clientRefused(re):
		h.log.Info("the authorization server refused the client registered earlier; logins register again", "server", h.server)
		if h.o.TokensPath != "" {
			k := *h.kept
			k.NoReuse = true
			if err := creds.SaveClient(h.o.TokensPath, k); err != nil {
				h.log.Warn("could not keep the registered OAuth client", "err", err)
			}
		}
		if derr := h.dropKept(false); derr != nil {
			return derr
		}
		h.keptErr = fmt.Errorf("the authorization server refused the client Switchboard registered earlier: the next login registers a new one (run: %s): %q", LoginCommand(h.server), truncate(re.ErrorCode, 64))
		return h.keptErr
	case h.otherIssuer():
		h.log.Info("the server's authorization server is not the one its kept client was registered with; registering again", "server", h.server)
		if err := h.dropKept(false); err != nil {
			return err
		}
	default:
		return err
	}
	return h.code.Authorize(ctx, req, resp)
}

// dropKept stops offering the kept client, and forgets it in creds.json
// when forget is set. h.flow is held.
func (h *Handler) dropKept(forget bool) error {
	k := h.kept
	h.kept = nil
	if forget && h.o.TokensPath != "" {
		if err := creds.ForgetClient(h.o.TokensPath, h.resource, k.ClientID); err != nil {
			h.log.Warn("could not forget the registered OAuth client", "err", err)
		}
	}
	return h.buildCode()
}

// otherIssuer reports whether the authorization server whose metadata
// the last flow read is not the kept client's. h.flow is held.
func (h *Handler) otherIssuer() bool {
	h.mu.Lock()
	iss := h.issuer
	h.mu.Unlock()
	return iss != "" && strings.TrimSuffix(iss, "/") != strings.TrimSuffix(h.kept.Issuer, "/")
}

// keepClient keeps the client a login's grant was issued to, when it was
// registered dynamically (see above) and is not kept already. It is
// called from go-sdk's flow: h.flow is held.
func (h *Handler) keepClient(cfg *oauth2.Config, issuer string) {
	if h.clientID != "" || h.o.TokensPath == "" || cfg.ClientID == h.cimd ||
		(h.kept != nil && h.kept.ClientID == cfg.ClientID) {
		return
	}
	c := creds.Client{Issuer: issuer, Resource: h.resource, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		RedirectURI: cfg.RedirectURL, Registered: time.Now().Round(0)}
	if old, err := creds.LoadClient(h.o.TokensPath, h.resource); err == nil && old != nil {
		c.NoReuse = old.NoReuse // the mark stays until logout or remove
	}
	if err := creds.SaveClient(h.o.TokensPath, c); err != nil {
		// The grant serves all the same; the next login registers again.
		h.log.Warn("could not keep the registered OAuth client", "err", err)
	}
}

// clientRefused reports whether a token endpoint's refusal is of the
// client itself (RFC 6749 section 5.2), not of the grant.
func clientRefused(re *oauth2.RetrieveError) bool {
	return re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"
}

// clientRefused notes that the token endpoint refused clientID, and
// forgets it in creds.json when it is the kept client, so that the login
// that follows (here or in another process) registers again.
func (h *Handler) clientRefused(clientID string) {
	h.mu.Lock()
	h.refused = clientID
	h.mu.Unlock()
	if h.o.TokensPath != "" {
		if err := creds.ForgetClient(h.o.TokensPath, h.resource, clientID); err != nil {
			h.log.Warn("could not forget the registered OAuth client", "err", err)
		}
	}
}

func (h *Handler) refusedClient() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.refused
}
