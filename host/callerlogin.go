package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A caller of a server with "oauth.perCaller" logs in as itself: the same
// browser login as Host.Login (a loopback redirect listener, or the
// gateway's callback path with OAuthOptions.CallbackURL; go-sdk's
// authorization-code flow), whose grant is kept in the store, sealed, for
// that caller alone (grants.go), one login per caller and server at a
// time. Logging out forgets the caller's grants and closes its
// connections; every other caller keeps its own.

// loginKey is the key of a caller's login in Host.logins; the operator's
// logins are keyed by the server's name alone.
func loginKey(server, caller string) string { return server + "\x00" + caller }

// loginAs starts caller's own browser login to server, a Streamable HTTP
// server with "oauth.perCaller"; see Login for what it returns. caller is
// an identity as CallOptions.Client carries it (a named client, or
// "sub:<subject>").
func (h *Host) loginAs(ctx context.Context, caller, server string) (*Login, error) {
	if caller == "" {
		return h.Login(ctx, server)
	}
	s, sc, err := h.perCallerServer(server)
	if err != nil {
		return nil, err
	}
	key := loginKey(server, caller)
	h.loginMu.Lock()
	l := h.logins[key]
	if l == nil && !h.closed.Load() {
		l = &Login{Server: server, ready: make(chan struct{}), back: make(chan struct{}), done: make(chan struct{})}
		if h.logins == nil {
			h.logins = make(map[string]*Login)
		}
		h.logins[key] = l
		h.watchers.Go(func() { h.runLoginAs(s, sc, caller, key, l) })
	}
	h.loginMu.Unlock()
	if l == nil {
		return nil, fault.New(fault.CodeUnavailable, server, "login", errors.New("the host is closed"))
	}
	select {
	case <-l.ready:
		return l, nil
	case <-ctx.Done():
		return nil, fault.New(fault.CodeTimeout, server, "login", ctx.Err())
	}
}

// perCallerServer is server when its callers log in as themselves.
func (h *Host) perCallerServer(server string) (*server, *config.Server, error) {
	s := h.comp.Load().servers[server]
	if s == nil {
		return nil, nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	sc := s.cfg.Load()
	switch {
	case !perCallerLogins(sc):
		return nil, nil, fault.New(fault.CodeInvalidInput, server, "login", errors.New(`the server's callers share its one grant: only the operator logs in ("oauth.perCaller" is not set)`))
	case h.opts.OAuth == nil || h.grantKeys == nil || h.store == nil:
		return nil, nil, fault.New(fault.CodeUnavailable, server, "login", errPerCallerOff)
	case sc.Unusable != nil:
		return nil, nil, fault.New(fault.CodeUnavailable, server, "login", sc.Unusable)
	}
	return s, sc, nil
}

// runLoginAs runs caller's login l to its end and forgets it.
func (h *Host) runLoginAs(s *server, sc *config.Server, caller, key string, l *Login) {
	ctx, cancel := context.WithTimeout(h.life, h.loginTimeout)
	defer cancel()
	o := h.opts
	o.OnListChanged, o.OnResourceUpdated = nil, nil
	oc := *h.opts.OAuth
	oc.TokensPath, oc.Authorize, oc.RedirectURL = "", nil, ""
	oc.Grants = callerGrants{h: h, caller: caller}
	oc.Caller = caller
	o.OAuth = &oc
	var shown bool
	err := upstream.Login(ctx, sc, &o, func(authURL string) {
		if !shown {
			shown = true
			l.url = authURL
			close(l.ready)
		}
	}, func() { close(l.back) })
	if err == nil {
		h.log.Info("a caller logged in", "server", s.name, "caller", caller)
		h.callers.drop(s.name, caller)
	} else {
		h.log.Warn("a caller's login not completed", "server", s.name, "caller", caller, "err", err)
	}
	h.loginMu.Lock()
	delete(h.logins, key)
	l.err = err
	if !shown {
		close(l.ready)
	}
	close(l.done)
	h.loginMu.Unlock()
}

// logoutAs forgets caller's own grants for server and closes caller's
// connection to it, and says how many grants there were. Other callers
// keep theirs. The authorization server is not told: a grant that must
// end everywhere is revoked there too.
func (h *Host) logoutAs(ctx context.Context, caller, server string) (int, error) {
	if caller == "" {
		return 0, fault.New(fault.CodeInvalidInput, server, "logout", errors.New("no caller named"))
	}
	_, sc, err := h.perCallerServer(server)
	if err != nil {
		return 0, err
	}
	k, _ := h.store.(store.GrantKeeper)
	if k == nil {
		return 0, fault.New(fault.CodeUnavailable, server, "logout", errPerCallerOff)
	}
	n, err := k.DeleteGrants(ctx, caller, sc.URL)
	h.callers.drop(server, caller)
	if err != nil {
		return n, fault.New(fault.CodeUnavailable, server, "logout", err)
	}
	return n, nil
}

// callerGrants lists the callers that hold a grant of their own for
// server, without the grants.
func (h *Host) callerGrants(ctx context.Context, server string) ([]hostlink.CallerGrant, error) {
	sc := h.config().Server(server)
	k, _ := h.store.(store.GrantKeeper)
	if sc == nil || k == nil || !perCallerLogins(sc) {
		return nil, nil
	}
	gs, err := k.GrantHolders(ctx, sc.URL)
	if err != nil {
		return nil, err
	}
	out := make([]hostlink.CallerGrant, 0, len(gs))
	for _, g := range gs {
		out = append(out, hostlink.CallerGrant{Caller: g.Caller, Subject: g.Subject, Saved: g.SavedAt.UTC().Format("2006-01-02T15:04:05Z")})
	}
	return out, nil
}

// Login starts the login the view's caller may make to server: its own,
// for a server with "oauth.perCaller" and a caller with an identity; the
// server's one login (Host.Login) for the operator. Any other caller may
// not log in for everyone.
func (v *View) Login(ctx context.Context, server string) (*Login, error) {
	if !v.scope().hasServer(server) {
		return nil, v.unknownServer(server)
	}
	id := v.c.identity()
	if sc := v.h.config().Server(server); sc != nil && id != "" && perCallerLogins(sc) {
		return v.h.loginAs(ctx, id, server)
	}
	if id != "" {
		return nil, fault.New(fault.CodeInvalidInput, server, "login", errors.New("the server's one grant serves every caller: only the operator logs in to it"))
	}
	return v.h.Login(ctx, server)
}
