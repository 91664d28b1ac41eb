package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

func loginCommand(*run) *command {
	return &command{
		name: "login", args: "NAME",
		summary:  "log in to an HTTP server that asks for OAuth: opens the browser (or prints the URL) and keeps the grant in creds.json",
		examples: []string{"switchboard login github"},
		run:      runLogin,
		complete: firstServer,
	}
}

// GrantKeyEnv names the environment variable that holds the keyring
// sealing each caller's own grants (host.OAuthOptions.GrantKey), read by
// `serve`.
const GrantKeyEnv = "SWITCHBOARD_GRANT_KEY"

// oauthOptions are the OAuth options of every command that opens a host:
// grants from creds.json, no browser leg (a server that needs a login
// fails with needs_login, naming `switchboard login`). Nil without a home.
func (r *run) oauthOptions() *host.OAuthOptions {
	path, err := r.credsPath()
	if err != nil {
		return nil
	}
	return &host.OAuthOptions{TokensPath: path}
}

// runLogin logs in to an HTTP server that asks for OAuth: a loopback
// redirect listener is bound first, then the server is connected alone,
// and when it asks for a login the browser is opened on the authorization
// URL ($BROWSER, else xdg-open where there is a display), or the URL is
// printed; the grant that comes back is kept in creds.json.
func runLogin(r *run) int {
	sc, cfg, code := r.oauthServer()
	if sc == nil {
		return code
	}
	path, err := r.credsPath()
	if err != nil {
		return r.usagef("%v", err)
	}
	// The login's grant is kept aside until it is saved: a failed or
	// abandoned login leaves the grant in creds.json as it was, and the
	// new login is not served by it.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return r.configError(err)
	}
	aside, err := os.MkdirTemp(filepath.Dir(path), ".login-")
	if err != nil {
		return r.configError(err)
	}
	defer os.RemoveAll(aside)
	newPath := filepath.Join(aside, creds.FileName)
	settle, err := keptClientAside(path, newPath, sc.URL)
	if err != nil {
		return r.configError(err)
	}
	saved := false
	defer func() {
		if err := settle(saved); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: the OAuth client registered for %q: %s\n", sc.Name, launcher.Escape(err.Error()))
		}
	}()
	var browsers browserProcs
	defer browsers.wait()
	one := *cfg
	s := *sc
	s.Enabled = true
	// The person has the host's login time in the browser.
	loginTimeout := host.DefaultLoginTimeout
	s.StartupTimeout = loginTimeout
	one.Servers = []*config.Server{&s}
	ctx, cancel := context.WithTimeout(r.ctx, loginTimeout)
	defer cancel()
	// The login's host keeps no state and serves no tool: nothing of its
	// is approved, so a server under manual approval is checked as any.
	s.Lifecycle.Approval = config.ApprovalAuto
	h, err := host.Open(ctx, &one, &host.Options{ClientVersion: r.env.Version, Ephemeral: true, OAuth: &host.OAuthOptions{TokensPath: newPath, LoginTimeout: loginTimeout}})
	if err != nil {
		return r.report(ExitUpstream, failureOf(err, codeError))
	}
	// The host's login: a loopback redirect listener bound first, then
	// the flow up to the authorization URL, shown to the person.
	l, err := h.Login(ctx, s.Name)
	if err == nil {
		if u := l.URL(); u != "" {
			r.openBrowser(&browsers, s.Name, u)
		}
		select {
		case <-l.Done():
			err = l.Err()
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		h.Close()
		if c, ok := r.interrupted(); ok {
			return r.report(c, failure{Code: codeInterrupted, Message: "interrupted"})
		}
		return r.report(ExitUpstream, failureOf(err, "auth_failure"))
	}
	st := h.Servers()[0]
	h.Close()
	if st.State != host.StateReady {
		if c, ok := r.interrupted(); ok {
			return r.report(c, failure{Code: codeInterrupted, Message: "interrupted"})
		}
		msg := st.LastError
		if msg == "" {
			msg = fmt.Sprintf("server %q is %s", s.Name, st.State)
		}
		return r.report(ExitUpstream, failure{Code: "auth_failure", Message: msg, Server: s.Name})
	}
	// A failed start-up kept in the state store (needs_login stops the
	// retries) must not keep the next process from dialling the server.
	if store, err := r.openStore(cfg); err == nil {
		if err := store.DeleteSchedule(r.ctx, s.Name); err != nil {
			fmt.Fprintf(r.env.Stderr, "warning: the state store still holds the failed start of %q: %s\n", s.Name, launcher.Escape(err.Error()))
		}
		store.Close()
	}
	ts, err := creds.LoadTokens(newPath, sc.URL)
	if err == nil && len(ts) > 0 {
		// The new grant replaces the older ones.
		err = creds.ReplaceTokens(path, sc.URL, ts)
		saved = err == nil
	}
	if err != nil {
		return r.configError(err)
	}
	if st.Auth == "" {
		return r.done(fmt.Sprintf("server %q asked for no login; it works as it is", s.Name), s.Name, "", nil)
	}
	return r.done(fmt.Sprintf("logged in to %q; the grant is kept in %s", s.Name, path), s.Name, path, nil)
}

// oauthServer returns the server named by the one argument, which must be
// a usable Streamable HTTP server, with its configuration; else nil and
// the exit code of the reported problem.
func (r *run) oauthServer() (*config.Server, *config.Config, int) {
	if !r.wantArgs(1, 1) {
		return nil, nil, ExitUsage
	}
	cfg, err := r.loadConfig()
	if err != nil {
		return nil, nil, r.configError(err)
	}
	r.cfg = cfg
	name := r.args[0]
	sc := cfg.Server(name)
	switch {
	case sc == nil:
		return nil, nil, r.usagef("no server %q in %s%s", name, r.configInUse(), suggestServer(cfg, name))
	case sc.Transport != config.TransportHTTP:
		return nil, nil, r.usagef("server %q is a %s server: only Streamable HTTP servers log in with OAuth", name, sc.Transport)
	case sc.Unusable != nil:
		return nil, nil, r.report(ExitUsage, failure{Code: codeConfig, Message: sc.Unusable.Error(), Server: name})
	}
	return sc, cfg, ExitOK
}

// openBrowser shows the person the authorization URL: always on stderr,
// and in $BROWSER, or xdg-open where there is a display. The browser's
// process is waited for by procs' owner.
func (r *run) openBrowser(procs *browserProcs, server, authURL string) {
	fmt.Fprintf(r.env.Stderr, "To log in to %q, open this URL in a browser:\n  %s\nwaiting for the login...\n", server, launcher.Escape(authURL))
	browser, _ := r.env.LookupEnv("BROWSER")
	if browser == "" {
		_, x := r.env.LookupEnv("DISPLAY")
		_, w := r.env.LookupEnv("WAYLAND_DISPLAY")
		if p, err := exec.LookPath("xdg-open"); err == nil && (x || w) {
			browser = p
		}
	}
	if browser == "" {
		return
	}
	cmd := exec.Command(browser, authURL)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(r.env.Stderr, "warning: could not open a browser (%s): %s\n", launcher.Escape(browser), launcher.Escape(err.Error()))
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Wait() //nolint:errcheck // the browser's exit status says nothing about the login
	}()
	procs.mu.Lock()
	procs.done = append(procs.done, done)
	procs.mu.Unlock()
}

// browserProcs are the browsers a login started. A browser that was not
// running before may stay open after the login: wait gives each a moment
// to exit (xdg-open and a browser already running hand the URL over and
// exit at once), then leaves the rest to the person.
type browserProcs struct {
	mu   sync.Mutex
	done []chan struct{} // guarded by mu; closed when the process has been waited for
}

func (b *browserProcs) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	deadline := time.After(2 * time.Second)
	for _, d := range b.done {
		select {
		case <-d:
		case <-deadline:
			return
		}
	}
}

// needsLogin reports whether a server failed for want of an OAuth login.
func needsLogin(st host.ServerStatus) bool {
	return st.Auth == host.NeedsLoginState(st.Name)
}

// printAuth lists the OAuth state of the servers that asked for a login.
func printAuth(w io.Writer, servers []host.ServerStatus) {
	for _, s := range servers {
		if s.Auth != "" {
			fmt.Fprintf(w, "%s: auth: %s\n", launcher.Escape(s.Name), launcher.Escape(s.Auth))
		}
	}
}
