package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// With OAuthOptions.CallbackURL, a key that seals grants and a store that
// keeps pending logins (store.LoginKeeper), the logins that come back
// through the gateway's callback path wait in the store, so that every
// replica sharing it takes their redirects: the one the browser reaches
// records what the redirect carried, sealed with the grants' keyring and
// bound to the login, and the replica that started the login takes it
// there and finishes it (go-sdk's flow, whose PKCE verifier never leaves
// that replica), keeping the grant for its caller. A login is kept under
// a hash of its state, until the login timeout on the host's clock; the
// first redirect only is recorded.

// loginRelay is the oauth.Relay of a host's logins.
type loginRelay struct {
	h *Host
	k store.LoginKeeper
}

// relayLogins gives the host's Callback its Relay, when it can have one.
func (h *Host) relayLogins() {
	o := h.opts.OAuth
	k, ok := h.store.(store.LoginKeeper)
	if o == nil || o.Callback == nil || h.grantKeys == nil || !ok {
		return
	}
	o.Callback.Relay = loginRelay{h: h, k: k}
}

// loginID is the key of the login whose redirect carries state: never
// the state itself, which would let a reader of the store pass for the
// login's redirect.
func loginID(state string) string {
	sum := sha256.Sum256([]byte("switchboard login\x00" + state))
	return hex.EncodeToString(sum[:])
}

// loginContext is what a login's sealed redirect is bound to.
func loginContext(l store.PendingLogin) []byte {
	return []byte("login\x00" + l.ID + "\x00" + l.Server + "\x00" + l.Caller)
}

// Open implements oauth.Relay.
func (r loginRelay) Open(ctx context.Context, state, server, caller string) {
	l := store.PendingLogin{ID: loginID(state), Server: server, Caller: caller, Expires: r.h.now().Add(r.h.loginTimeout)}
	if err := r.k.SavePendingLogin(ctx, l); err != nil {
		r.h.log.Warn("a login is not kept in the store: its redirect must reach this process", "server", server, "caller", caller, "err", err)
	}
}

// Arrive implements oauth.Relay.
func (r loginRelay) Arrive(ctx context.Context, state string, rr oauth.RelayedRedirect) error {
	l, err := r.k.PendingLogin(ctx, loginID(state), r.h.now())
	if errors.Is(err, store.ErrNotFound) {
		return oauth.ErrNoLogin
	}
	if err != nil {
		return err
	}
	plain, err := json.Marshal(rr)
	if err != nil {
		return err
	}
	err = r.k.ArriveLogin(ctx, l.ID, r.h.grantKeys.Seal(plain, loginContext(l)), r.h.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return oauth.ErrNoLogin
	case errors.Is(err, store.ErrLoginArrived):
		return oauth.ErrLoginArrived
	case err != nil:
		return err
	}
	r.h.log.Debug("a login's redirect recorded for the process that started it", "server", l.Server, "caller", l.Caller)
	return nil
}

// Take implements oauth.Relay.
func (r loginRelay) Take(ctx context.Context, state string) (*oauth.RelayedRedirect, error) {
	l, err := r.k.TakeLogin(ctx, loginID(state))
	if err != nil || l.Redirect == nil {
		if err != nil && !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			r.h.log.Warn("could not look for a login's redirect in the store", "err", err)
		}
		return nil, nil
	}
	plain, err := r.h.grantKeys.Open(l.Redirect, loginContext(l))
	var rr oauth.RelayedRedirect
	if err == nil {
		err = json.Unmarshal(plain, &rr)
	}
	if err != nil || rr.State != state {
		// Sealed with a key this process lacks, or not this login's: the
		// login fails rather than wait for a redirect that has come.
		r.h.log.Warn("a login's redirect recorded in the store does not open here", "server", l.Server, "caller", l.Caller, "err", err)
		return nil, errors.New("the login's redirect reached another replica, and what it recorded does not open here: every replica needs the same SWITCHBOARD_GRANT_KEY")
	}
	return &rr, nil
}

// Close implements oauth.Relay.
func (r loginRelay) Close(ctx context.Context, state string) {
	if err := r.k.DeletePendingLogin(ctx, loginID(state), r.h.now()); err != nil {
		r.h.log.Warn("could not forget a login in the store", "err", err)
	}
}
