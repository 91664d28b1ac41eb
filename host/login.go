package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// DefaultLoginTimeout is OAuthOptions.LoginTimeout's default.
const DefaultLoginTimeout = 5 * time.Minute

// Login is a browser login to one server in progress (see Host.Login).
type Login struct {
	// Server is the server logged in to.
	Server string

	ready chan struct{} // closed once url is set or the login has ended
	url   string        // written before ready closes
	back  chan struct{} // closed when the redirect has arrived (the grant is being fetched)
	done  chan struct{} // closed when the login has ended
	err   error         // written before done closes
}

// URL is the authorization URL a person must open, once Host.Login has
// returned; "" when the login ended without one (the grant kept already
// served, or the login failed before the browser leg).
func (l *Login) URL() string {
	<-l.ready
	return l.url
}

// Back is closed when the authorization server's redirect has arrived:
// the person has logged in, and the grant is being fetched.
func (l *Login) Back() <-chan struct{} { return l.back }

// Done is closed when the login has ended: the grant kept and the server
// dialled again, or the login failed or was abandoned.
func (l *Login) Done() <-chan struct{} { return l.done }

// Err is why the login failed, nil when it succeeded; valid once Done is
// closed. It never quotes a token.
func (l *Login) Err() error {
	<-l.done
	return l.err
}

// Login starts the browser login to an HTTP server that asks for OAuth,
// the flow of upstream.Login: a loopback redirect listener, then go-sdk's
// authorization-code flow up to the authorization URL. A login already in
// progress for the server is joined: one per server. Login returns once
// the URL is known (Login.URL) or the login has ended, or with ctx's
// error (the login goes on). The login runs on a goroutine of the Host,
// bounded by OAuthOptions.LoginTimeout and Close; when the redirect
// brings a grant it is kept in OAuthOptions.TokensPath and the server is
// dialled again, so that a call made after Done works.
func (h *Host) Login(ctx context.Context, server string) (*Login, error) {
	s := h.comp.Load().servers[server]
	if s == nil {
		return nil, fault.New(fault.CodeNotFound, "", "", fmt.Errorf("no server %q", server))
	}
	sc := s.cfg.Load()
	switch {
	case h.opts.OAuth == nil:
		return nil, fault.New(fault.CodeInvalidInput, server, "login", errors.New("this host keeps no OAuth grants"))
	case sc.Transport != config.TransportHTTP:
		return nil, fault.New(fault.CodeInvalidInput, server, "login", errors.New("only Streamable HTTP servers log in with OAuth"))
	case sc.Unusable != nil:
		return nil, fault.New(fault.CodeUnavailable, server, "login", sc.Unusable)
	}
	h.loginMu.Lock()
	l := h.logins[server]
	if l == nil && !h.closed.Load() {
		l = &Login{Server: server, ready: make(chan struct{}), back: make(chan struct{}), done: make(chan struct{})}
		if h.logins == nil {
			h.logins = make(map[string]*Login)
		}
		h.logins[server] = l
		h.watchers.Go(func() { h.runLogin(s, sc, l) })
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

// runLogin runs l to its end and forgets it.
func (h *Host) runLogin(s *server, sc *config.Server, l *Login) {
	ctx, cancel := context.WithTimeout(h.life, h.loginTimeout)
	defer cancel()
	var shown bool
	err := upstream.Login(ctx, sc, &h.opts, func(authURL string) {
		if !shown {
			shown = true
			l.url = authURL
			close(l.ready)
		}
	}, func() { close(l.back) })
	if err == nil {
		h.log.Info("logged in", "server", s.name)
		s.afterLogin()
	} else {
		h.log.Warn("login not completed", "server", s.name, "err", err)
	}
	h.loginMu.Lock()
	delete(h.logins, s.name)
	l.err = err
	if !shown {
		close(l.ready)
	}
	close(l.done)
	h.loginMu.Unlock()
}

// retryAfterLogin starts the server afresh when a grant was kept for it
// after its last dial failed for want of a login (by Host.Login, or by
// `switchboard login` in another process): the next lookup finds it
// starting and the next call dials it. It reports whether it did.
func (s *server) retryAfterLogin() bool {
	asked := s.life.loginAskedAt()
	if asked.IsZero() || !oauth.GrantSaved(s.h.opts.OAuth, s.cfg.Load()).After(asked) {
		return false
	}
	if !s.life.startAfterLogin(asked) {
		return true // another caller got there first
	}
	s.sup.Reset()
	return true
}

// afterLogin dials the server again with the grant a login kept, unless
// a live connection will take it on its next refusal (upstream's
// adoptKept). A dial in progress is waited for first: it may have started
// before the grant was kept.
func (s *server) afterLogin() {
	if ch := s.life.dialInProgress(); ch != nil {
		select {
		case <-ch:
		case <-s.h.life.Done():
			return
		}
	}
	if !s.life.startUnlessConnected() {
		return
	}
	s.sup.Reset()
	s.ensure(s.h.life) //nolint:errcheck // recorded in s
}
