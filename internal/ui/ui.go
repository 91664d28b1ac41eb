// Package ui is the gateway's status page at /ui: servers, tools, held
// definitions, findings, recent and live calls, rendered by the server
// from embedded templates (html/template escapes every name, description,
// diff and stderr line) and kept current by a small text/event-stream of
// re-rendered sections. Every action (restart, enable, disable, approve,
// reject, approve or deny a held call) goes through internal/control.
//
// It sits behind the front door, which checks Host and Origin and hands
// over the token check (frontdoor.CheckToken): a person logs in by typing
// the token into a form, which sets an HttpOnly, SameSite=Strict session
// cookie. Every POST carries the session's CSRF token. The
// Content-Security-Policy allows script from this package's embedded
// ui.js only: nothing inline, so no text a server supplies can run.
package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

//go:embed templates/*.html static/*
var files embed.FS

// Path is the page's path; everything else it serves is under it.
const Path = frontdoor.UIPath

// Defaults.
const (
	sessionTTL   = 12 * time.Hour
	maxSessions  = 1024
	cookieName   = "sb_session"
	loginCookie  = "sb_login" // the login form's CSRF token, before a session exists
	pushInterval = time.Second
)

// csp allows nothing but this page's own files and requests: no inline
// script or style, no other origin, no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure New.
type Options struct {
	// Control is the live gateway's operations. Required.
	Control *control.Control
	// Logger receives the failures of actions. Nil discards.
	Logger *slog.Logger
}

// Handler serves the page. Its lock guards sessions.
type Handler struct {
	ctl    *control.Control
	log    *slog.Logger
	tmpl   *template.Template
	static http.Handler
	mux    *http.ServeMux

	// life ends when Close is called: the event streams end with it.
	life   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[string]session // by cookie value
}

// session is a logged-in browser.
type session struct {
	id      string // the cookie's value
	csrf    string
	expires time.Time
	flash   string // what the last action did, shown once by the next page
}

// New returns the page's handler.
func New(opts Options) (*Handler, error) {
	tmpl, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(files, "static")
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{ctl: opts.Control, log: log, tmpl: tmpl, sessions: map[string]session{},
		static: http.StripPrefix(Path+"/static/", http.FileServerFS(static))}
	h.life, h.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, h.page)
	mux.HandleFunc("POST "+Path+"/login", h.login)
	mux.HandleFunc("POST "+Path+"/logout", h.logout)
	mux.HandleFunc("POST "+Path+"/action", h.action)
	mux.HandleFunc("GET "+Path+"/events", h.events)
	mux.HandleFunc("GET "+Path+"/approvals/{id}", h.approval)
	mux.HandleFunc("GET "+Path+"/static/", h.serveStatic)
	h.mux = mux
	return h, nil
}

// Close ends the event streams (a server shutting down waits for them).
func (h *Handler) Close() { h.cancel() }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "same-origin") // "no-referrer" would make a browser send "Origin: null", which the front door refuses
	hdr.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	h.static.ServeHTTP(w, r)
}

// randomToken is 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// current returns the request's session, if it has a live one. Without
// authentication (--no-auth) a browser without one gets one.
func (h *Handler) current(w http.ResponseWriter, r *http.Request) (session, bool) {
	if c, err := r.Cookie(cookieName); err == nil {
		h.mu.Lock()
		s, ok := h.sessions[c.Value]
		if ok && time.Now().After(s.expires) {
			delete(h.sessions, c.Value)
			ok = false
		}
		h.mu.Unlock()
		if ok {
			s.id = c.Value
			return s, true
		}
	}
	if frontdoor.NoAuth(r.Context()) && w != nil {
		return h.start(w, r), true
	}
	return session{}, false
}

// start opens a session and sets its cookie.
func (h *Handler) start(w http.ResponseWriter, r *http.Request) session {
	id := randomToken()
	s := session{id: id, csrf: randomToken(), expires: time.Now().Add(sessionTTL)}
	h.mu.Lock()
	now := time.Now()
	for k, v := range h.sessions {
		if now.After(v.expires) || len(h.sessions) >= maxSessions {
			delete(h.sessions, k)
		}
	}
	h.sessions[id] = s
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: Path, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode, MaxAge: int(sessionTTL / time.Second)})
	return s
}

// secure reports whether the browser reached the page over TLS: directly,
// or through a TLS-terminating proxy that says so in X-Forwarded-Proto.
// Cookies set for such a request are Secure.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// login checks the typed token and opens a session.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(loginCookie)
	if err != nil || !tokencmp.Equal(r.PostFormValue("csrf"), c.Value) {
		http.Error(w, "the form expired: load the page again", http.StatusForbidden)
		return
	}
	if !frontdoor.CheckToken(r.Context(), r.PostFormValue("token")) {
		h.render(w, http.StatusUnauthorized, "login.html", h.loginData(w, r, "That is not the gateway's token."))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: Path, MaxAge: -1})
	h.start(w, r)
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// logout ends the session.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	s, ok := h.current(nil, r)
	if !ok || !tokencmp.Equal(r.PostFormValue("csrf"), s.csrf) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(cookieName); err == nil {
		h.mu.Lock()
		delete(h.sessions, c.Value)
		h.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: Path, MaxAge: -1})
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// loginData is the login form's, with a fresh CSRF token in its cookie.
func (h *Handler) loginData(w http.ResponseWriter, r *http.Request, msg string) map[string]string {
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: Path, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode, MaxAge: 600})
	return map[string]string{"CSRF": tok, "Message": msg}
}

// action runs one operation of the control layer and goes back to the
// page, with what happened.
func (h *Handler) action(w http.ResponseWriter, r *http.Request) {
	s, ok := h.current(nil, r)
	if !ok || !tokencmp.Equal(r.PostFormValue("csrf"), s.csrf) {
		http.Error(w, "forbidden: log in again", http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	target := r.PostFormValue("target")
	var err error
	var done string
	switch r.PostFormValue("op") {
	case "restart":
		err, done = h.ctl.Restart(ctx, target), "restarted "+target
	case "enable":
		err, done = h.ctl.SetEnabled(ctx, target, true), "enabled "+target
	case "disable":
		err, done = h.ctl.SetEnabled(ctx, target, false), "disabled "+target
	case "approve":
		_, err = h.ctl.Approve(ctx, target)
		done = "approved " + target
	case "reject":
		err, done = h.ctl.Reject(ctx, target), "rejected "+target+" (turned off in disabledTools)"
	case "approve-call", "deny-call":
		done, err = h.decideCall(ctx, target, r.PostFormValue("op") == "approve-call")
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
		return
	}
	if err != nil {
		h.log.Warn("status page action failed", "op", r.PostFormValue("op"), "target", target, "err", err)
		done = "failed: " + err.Error()
	}
	// Back to the page (a reload does not repeat the action), which shows
	// what happened once.
	h.setFlash(s.id, done)
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// setFlash keeps msg for the session's next page.
func (h *Handler) setFlash(id, msg string) {
	h.mu.Lock()
	if s, ok := h.sessions[id]; ok {
		s.flash = msg
		h.sessions[id] = s
	}
	h.mu.Unlock()
}

// takeFlash returns the session's message and forgets it.
func (h *Handler) takeFlash(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	if !ok {
		return ""
	}
	msg := s.flash
	s.flash = ""
	h.sessions[id] = s
	return msg
}

// page shows the whole page, or the login form.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	s, ok := h.current(w, r)
	if !ok {
		h.render(w, http.StatusOK, "login.html", h.loginData(w, r, ""))
		return
	}
	h.render(w, http.StatusOK, "page.html", h.pageData(r.Context(), r, s, h.takeFlash(s.id)))
}

// render executes a template into a buffer first, so that a failure is a
// clean 500.
func (h *Handler) render(w http.ResponseWriter, status int, name string, data any) {
	var b bufWriter
	if err := h.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		h.log.Warn("status page not rendered", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.b)
}

type bufWriter struct{ b []byte }

func (b *bufWriter) Write(p []byte) (int, error) { b.b = append(b.b, p...); return len(p), nil }
