package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/seal"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Each caller's own OAuth grants, for servers with "oauth.perCaller", are
// kept in the state store (store.GrantKeeper) so that every replica
// sharing it uses them, sealed with the operator's keyring
// (OAuthOptions.GrantKey, internal/seal): the store holds no token in
// the clear, and a sealed grant is bound to its caller, issuer, resource
// and client, so that a row moved to another caller does not open.
// callerGrants is one caller's view of them, as internal/oauth keeps
// grants (oauth.Grants).

// grantLease bounds one refresh of a caller's grant: another process
// waits for it at most this long, then may refresh itself.
const grantLease = 30 * time.Second

// grantPoll is how often a process waiting for another's refresh reads
// the grant again.
const grantPoll = 100 * time.Millisecond

// callerGrants is one caller's grants in the store.
type callerGrants struct {
	h      *Host
	caller string // the caller's identity (Caller.identity)
}

// grantContext is what a sealed grant is bound to.
func grantContext(k store.GrantKey) []byte {
	return []byte(k.Caller + "\x00" + k.Issuer + "\x00" + k.Resource + "\x00" + k.ClientID)
}

func (g callerGrants) keeper() (store.GrantKeeper, *grantKeyring, error) {
	k, ok := g.h.store.(store.GrantKeeper)
	if !ok || g.h.grantKeys == nil {
		return nil, nil, errPerCallerOff
	}
	return k, g.h.grantKeys, nil
}

// errPerCallerOff is why a host cannot keep callers' grants.
var errPerCallerOff = errors.New(`each caller's own grants need a state store and the key that seals them (SWITCHBOARD_GRANT_KEY); without them no caller but the operator can use a server with "oauth.perCaller"`)

// Load implements oauth.Grants. A grant that does not open (sealed with a
// key rotated out, or damaged) is skipped: the caller logs in again.
func (g callerGrants) Load(ctx context.Context, resource string) ([]creds.Token, error) {
	k, keys, err := g.keeper()
	if err != nil {
		return nil, err
	}
	rows, err := k.Grants(ctx, g.caller, resource)
	if err != nil {
		return nil, err
	}
	var out []creds.Token
	for _, r := range rows {
		plain, err := keys.Open(r.Sealed, grantContext(r.GrantKey))
		if err != nil {
			g.h.log.Warn("a caller's grant does not open; it needs a login again", "caller", g.caller, "resource", resource, "err", err)
			continue
		}
		var t creds.Token
		if json.Unmarshal(plain, &t) != nil || t.Issuer != r.Issuer || t.Resource != r.Resource || t.ClientID != r.ClientID {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// Save implements oauth.Grants.
func (g callerGrants) Save(ctx context.Context, t creds.Token) error {
	k, keys, err := g.keeper()
	if err != nil {
		return err
	}
	if t.Issuer == "" || t.Resource == "" || t.ClientID == "" {
		return errors.New("a grant needs its issuer, resource and client ID")
	}
	plain, err := json.Marshal(t)
	if err != nil {
		return err
	}
	key := store.GrantKey{Caller: g.caller, Issuer: t.Issuer, Resource: t.Resource, ClientID: t.ClientID}
	return k.SaveGrant(ctx, store.Grant{GrantKey: key, Sealed: keys.Seal(plain, grantContext(key)), Subject: t.Subject, SavedAt: t.Saved})
}

// Renew implements oauth.Grants: the refresh runs under the store's lease
// on the grant, so that of the processes sharing the store one refreshes
// and the others take what it saved.
func (g callerGrants) Renew(ctx context.Context, t creds.Token, refresh func(context.Context, creds.Token) (creds.Token, error)) (creds.Token, error) {
	k, _, err := g.keeper()
	if err != nil {
		return t, err
	}
	key := store.GrantKey{Caller: g.caller, Issuer: t.Issuer, Resource: t.Resource, ClientID: t.ClientID}
	ctx, cancel := context.WithTimeout(ctx, grantLease)
	defer cancel()
	tick := time.NewTicker(grantPoll)
	defer tick.Stop()
	for {
		cur, err := g.load1(ctx, key)
		if err != nil {
			return t, err
		}
		if cur.AccessToken != t.AccessToken {
			return cur, nil // renewed by another process, or logged in again
		}
		now := time.Now()
		ok, err := k.LeaseGrant(ctx, key, cur.Saved, g.h.grantHolder, now, now.Add(grantLease))
		if err != nil {
			return t, err
		}
		if ok {
			nt, err := refresh(ctx, cur)
			if err != nil {
				if oauth.Refused(err) {
					// A dead grant is forgotten, so that the other
					// processes waiting for this refresh ask for a login
					// at once instead of waiting out the lease.
					if _, derr := k.DeleteGrants(ctx, g.caller, key.Resource); derr != nil {
						g.h.log.Warn("could not forget a caller's refused grant", "caller", g.caller, "err", derr)
					}
				}
				return t, err
			}
			if err := g.Save(ctx, nt); err != nil {
				g.h.log.Warn("could not keep a caller's refreshed grant", "caller", g.caller, "err", err)
			}
			return nt, nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return t, fmt.Errorf("waiting for another process's refresh of the grant: %w", ctx.Err())
		}
	}
}

// load1 is the grant kept under key; an invalid_grant when it is gone
// (the caller logged out), so that the connection asks for a login.
func (g callerGrants) load1(ctx context.Context, key store.GrantKey) (creds.Token, error) {
	ts, err := g.Load(ctx, key.Resource)
	if err != nil {
		return creds.Token{}, err
	}
	for _, t := range ts {
		if t.Issuer == key.Issuer && t.ClientID == key.ClientID {
			return t, nil
		}
	}
	return creds.Token{}, oauth.GrantRefused("the grant is no longer kept")
}

// newGrantHolder names this process in the store's refresh leases.
func newGrantHolder() string {
	var b [8]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// grantKeys is the keyring of o.GrantKey, nil without one.
func grantKeys(o *OAuthOptions) (*grantKeyring, error) {
	if o == nil || o.GrantKey == "" {
		return nil, nil
	}
	k, err := seal.Parse(o.GrantKey)
	if err != nil {
		return nil, fault.New(fault.CodeInvalidInput, "", "open", fmt.Errorf("the key that seals callers' grants: %w", err))
	}
	return k, nil
}

// grantKeyring is the keyring that seals callers' grants.
type grantKeyring = seal.Keyring
