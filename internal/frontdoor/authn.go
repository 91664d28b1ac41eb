package frontdoor

import (
	"log/slog"
	"net/http"
	"strings"
)

// wellKnownPrefix begins the paths Options.WellKnown answers.
const wellKnownPrefix = "/.well-known/"

// The reasons given to Options.OnRefuse by Options.Authenticate's
// refusals, besides RefusedNoToken and RefusedBadToken.
const (
	RefusedScope     = "insufficient_scope" // 403: a valid token without a required scope
	RefusedAuthError = "auth_error"         // another status from Authenticate (a token that could not be checked)
)

// isSubPath reports whether p is Path/NAME and SubPaths is set.
func (h *handler) isSubPath(p string) bool {
	if !h.subPaths {
		return false
	}
	name, ok := strings.CutPrefix(p, h.path+"/")
	if !ok || name == "" || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// authenticate puts the request through Options.Authenticate. A request it
// admits goes on to admit, with what Authenticate put in its context; one
// it refuses is reported to OnRefuse by its status, and its Bearer
// challenge is given the RFC 6750 §3.1 error code that go-sdk leaves out.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request, metrics bool) {
	// More than one Authorization header is refused whatever the
	// middleware would make of the first.
	vals := r.Header.Values("Authorization")
	if len(vals) > 1 {
		w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
		h.reject(w, r, http.StatusUnauthorized, RefusedBadToken, "more than one Authorization header")
		return
	}
	presented := len(vals) == 1 && len(vals[0]) > 7 && strings.EqualFold(vals[0][:7], "Bearer ")
	cw := &challengeWriter{ResponseWriter: w, presented: presented, h: h, r: r}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw.admitted = true
		h.admit(w, r, CallerBearer, metrics)
	})
	h.authn(next).ServeHTTP(cw, r)
	if !cw.admitted && !cw.wrote {
		// The middleware answered nothing: refuse rather than send an
		// empty 200.
		w.Header().Set("WWW-Authenticate", realm)
		h.reject(w, r, http.StatusUnauthorized, RefusedNoToken, "authentication answered nothing")
	}
}

// challengeWriter sees the status of a response Authenticate writes itself
// (a refusal), reports it, and completes its challenge. Once the request
// is admitted, the inner handler writes through it unchanged.
type challengeWriter struct {
	http.ResponseWriter
	h         *handler
	r         *http.Request
	presented bool // the request carried a bearer token
	admitted  bool // Authenticate called next: what follows is not a refusal
	wrote     bool
}

func (c *challengeWriter) WriteHeader(status int) {
	if !c.wrote {
		c.wrote = true
		c.refused(status)
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *challengeWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes of a
// stream, deadlines).
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Flush passes flushes of a stream on.
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		if !c.wrote {
			c.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// refused reports a refusal by status and names its error in the
// challenge.
func (c *challengeWriter) refused(status int) {
	if c.admitted {
		return
	}
	hdr := c.Header()
	var reason, code string
	switch {
	case status == http.StatusUnauthorized && !c.presented:
		reason = RefusedNoToken
	case status == http.StatusUnauthorized:
		reason, code = RefusedBadToken, "invalid_token"
	case status == http.StatusForbidden:
		reason, code = RefusedScope, "insufficient_scope"
	default:
		// 400 (an OAuth error) or 500 (a token that could not be checked).
		reason = RefusedAuthError
	}
	if challenge := hdr.Get("WWW-Authenticate"); code != "" {
		if rest, ok := strings.CutPrefix(challenge, "Bearer "); ok {
			hdr.Set("WWW-Authenticate", `Bearer error="`+code+`", `+rest)
		} else {
			hdr.Set("WWW-Authenticate", realm+`, error="`+code+`"`)
		}
	} else if challenge == "" {
		hdr.Set("WWW-Authenticate", realm)
	}
	hdr.Set("Cache-Control", "no-store")
	if c.h.onRefuse != nil {
		c.h.onRefuse(reason)
	}
	c.h.log.LogAttrs(c.r.Context(), slog.LevelDebug, "frontdoor: request refused by authentication",
		slog.Int("status", status), slog.String("reason", reason), slog.String("remote", c.r.RemoteAddr))
}
