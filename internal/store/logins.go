package store

import (
	"context"
	"errors"
	"time"
)

// A PendingLogin is a person's OAuth login that waits for the
// authorization server's redirect to the gateway's public callback URL,
// kept so that the redirect may reach any process sharing the store: the
// one that receives it records what it carried (Redirect), and the one
// whose login it is takes that and finishes the login. The store never
// sees the login's state nor its code: ID is a hash of the state, and
// Redirect is sealed by the caller, opaque here.
type PendingLogin struct {
	// ID identifies the login: a hash of the state its redirect carries.
	ID string
	// Server is the upstream server logged in to; Caller whose login it
	// is ("" for the operator). Never secrets.
	Server, Caller string
	// Expires is when the login is abandoned: no redirect is recorded
	// for it from then on.
	Expires time.Time
	// Redirect is what the redirect carried, sealed; nil until it came.
	Redirect []byte
}

// ErrLoginArrived is returned by [LoginKeeper.ArriveLogin] when the
// login's redirect has already been recorded: a login takes one redirect.
var ErrLoginArrived = errors.New("store: the login's redirect has already come")

// LoginKeeper is an optional ability of a Store: the logins waiting for a
// redirect through the gateway's public URL, shared by every process
// serving it. Both store/sqlite and store/postgres have it.
type LoginKeeper interface {
	// SavePendingLogin inserts l, or replaces the login of the same ID.
	SavePendingLogin(ctx context.Context, l PendingLogin) error
	// PendingLogin returns the login id; ErrNotFound when none is kept or
	// it expired at now.
	PendingLogin(ctx context.Context, id string, now time.Time) (PendingLogin, error)
	// ArriveLogin records the sealed redirect (not empty) of the login
	// id, once,
	// atomically across every process sharing the store: ErrNotFound when
	// no login id is kept or it expired at now, ErrLoginArrived when a
	// redirect has already been recorded for it.
	ArriveLogin(ctx context.Context, id string, redirect []byte, now time.Time) error
	// TakeLogin returns the login id and, when its redirect has been
	// recorded, deletes it, so that it is taken once; its Redirect is nil
	// while none has come. ErrNotFound when no login id is kept.
	TakeLogin(ctx context.Context, id string) (PendingLogin, error)
	// DeletePendingLogin deletes the login id, and every login expired at
	// now.
	DeletePendingLogin(ctx context.Context, id string, now time.Time) error
}
