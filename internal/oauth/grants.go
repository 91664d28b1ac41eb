package oauth

import (
	"context"
	"errors"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/creds"
)

// Grants keeps one caller's grants somewhere else than creds.json: the
// host keeps them in the store, sealed, per caller (Config.Grants). The
// handler reads them at dial and after a refusal, saves what a login or a
// refresh brings, and refreshes through Renew.
type Grants interface {
	// Load returns the grants for resource, the most recently saved
	// first.
	Load(ctx context.Context, resource string) ([]creds.Token, error)
	// Save keeps t in place of the grant of the same issuer, resource and
	// client.
	Save(ctx context.Context, t creds.Token) error
	// Renew makes the one refresh of t among every process sharing the
	// grants: when the grant kept is still t it calls refresh, saves and
	// returns what refresh made; when another process renewed it
	// meanwhile it returns that grant, without calling refresh.
	Renew(ctx context.Context, t creds.Token, refresh func(context.Context, creds.Token) (creds.Token, error)) (creds.Token, error)
}

// loadGrants reads the grants kept for the handler's resource.
func (h *Handler) loadGrants(ctx context.Context) ([]creds.Token, error) {
	if h.o.Grants != nil {
		return h.o.Grants.Load(ctx, h.resource)
	}
	if h.o.TokensPath == "" {
		return nil, nil
	}
	return creds.LoadTokens(h.o.TokensPath, h.resource)
}

// saveGrant keeps t where the handler keeps grants.
func (h *Handler) saveGrant(t creds.Token) error {
	if h.o.Grants != nil {
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		return h.o.Grants.Save(ctx, t)
	}
	return creds.SaveToken(h.o.TokensPath, t)
}

// subjectOf is who the upstream knows the holder of tok as, for the audit
// log and the status page: the subject of the ID token that came with
// it, else of the access token when that is a JWT; "" when neither says.
// The claims are read, not verified: this names the grant for a person
// and decides nothing.
func subjectOf(tok *oauth2.Token) string {
	if id, _ := tok.Extra("id_token").(string); id != "" {
		if s := jwtSubject(id); s != "" {
			return s
		}
	}
	return jwtSubject(tok.AccessToken)
}

var subjectAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA, jose.HS256}

// jwtSubject is the sub claim of a JWT, without checking its signature;
// "" when s is no JWT.
func jwtSubject(s string) string {
	if strings.Count(s, ".") != 2 {
		return ""
	}
	t, err := jwt.ParseSigned(s, subjectAlgs)
	if err != nil {
		return ""
	}
	var c jwt.Claims
	if t.UnsafeClaimsWithoutVerification(&c) != nil {
		return ""
	}
	return truncate(c.Subject, 256)
}

// Subject is who the upstream knows the current grant's holder as (see
// subjectOf); "" without a grant or when its tokens do not say.
func (h *Handler) Subject() string {
	if h.machine != nil {
		return machineSubject(h.machine)
	}
	h.mu.Lock()
	g := h.cur
	h.mu.Unlock()
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.t.Subject
}

// GrantRefused is the error of a refresh that cannot be made because the
// grant is gone (a Grants whose caller logged out): an invalid_grant, so
// that the connection asks for a login as after a refused refresh.
func GrantRefused(why string) error {
	return &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: why}
}

// Refused reports whether err is the authorization server's refusal of a
// grant (invalid_grant): the grant is dead, unlike a server that could
// not be reached.
func Refused(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant"
}
