package store

import (
	"context"
	"time"
)

// A GrantKey names one caller's OAuth grant to one upstream resource: the
// caller as it authenticated to the gateway (a named client, or
// "sub:<subject>"), the authorization server that issued the grant, the
// resource (the server's URL) and the OAuth client it was issued to.
type GrantKey struct {
	Caller, Issuer, Resource, ClientID string
}

// A Grant is one caller's OAuth grant, kept so that every process sharing
// the store can use it. The store never sees a token: Sealed is the grant
// encrypted by the caller, opaque here.
type Grant struct {
	GrantKey
	// Sealed is the encrypted grant.
	Sealed []byte
	// Subject is who the upstream knows the caller as (the grant's
	// subject, for the audit log and the status page); "" when unknown.
	// Never a secret.
	Subject string
	// SavedAt is when the grant was saved; zero means "now".
	SavedAt time.Time
}

// GrantKeeper is an optional ability of a Store: the OAuth grants each
// caller of a gateway holds for the servers it uses in its own name. Both
// store/sqlite and store/postgres have it.
type GrantKeeper interface {
	// Grants returns caller's grants for resource, the most recently
	// saved first.
	Grants(ctx context.Context, caller, resource string) ([]Grant, error)
	// SaveGrant inserts or replaces the grant of g.GrantKey, and ends any
	// lease on it (see LeaseGrant).
	SaveGrant(ctx context.Context, g Grant) error
	// DeleteGrants deletes caller's grants for resource, every caller's
	// when caller is "", and says how many there were.
	DeleteGrants(ctx context.Context, caller, resource string) (int, error)
	// GrantHolders returns the grants kept for resource, without their
	// sealed values, sorted by Caller: who has logged in, as whom.
	GrantHolders(ctx context.Context, resource string) ([]Grant, error)
	// LeaseGrant claims the one refresh of the grant k for holder until
	// until, atomically across every process sharing the store: it
	// reports true when the grant exists, is still the one saved at saved
	// (no other process renewed it since the caller read it), and no
	// other holder's lease runs at now. A lease ends at until, or when
	// the grant is saved.
	LeaseGrant(ctx context.Context, k GrantKey, saved time.Time, holder string, now, until time.Time) (bool, error)
}
