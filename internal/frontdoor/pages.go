package frontdoor

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// The control API and the status page sit behind the same door as the MCP
// path:
//
//   - APIPrefix (Options.API) passes every check the MCP path passes:
//     Host/Origin, the bearer token, JSON bodies, the body cap.
//   - UIPath and what is under it (Options.UI) pass the Host/Origin check
//     and the body cap; a browser has no bearer token, so the page logs its
//     user in itself: it checks the token they type with CheckToken and
//     keeps a session in a cookie (internal/ui).

// APIPrefix is where Options.API is served; UIPath is Options.UI's page.
const (
	APIPrefix = "/api/"
	UIPath    = "/ui"
)

// isAPI and isUI report whether p is the API's or the page's (Options.Path
// may be neither).
func (h *handler) isAPI(p string) bool {
	return h.api != nil && (strings.HasPrefix(p, APIPrefix) || p+"/" == APIPrefix)
}

func (h *handler) isUI(p string) bool {
	return h.ui != nil && (p == UIPath || strings.HasPrefix(p, UIPath+"/"))
}

// tokenCheck is what CheckToken reads from a page request's context.
type tokenCheck struct {
	noAuth bool
	sum    *tokencmp.Sum // nil: no token logs in
}

type tokenCheckKey struct{}

// CheckToken reports whether tok is the front door's token, for a page
// that logs its user in (ctx is the request's); true for any tok when the
// front door has no authentication (NoAuth), and false for a context that
// did not come through the front door.
func CheckToken(ctx context.Context, tok string) bool {
	tc, ok := ctx.Value(tokenCheckKey{}).(tokenCheck)
	switch {
	case !ok:
		return false
	case tc.noAuth:
		return true
	case tc.sum == nil:
		return false
	}
	return tc.sum.Matches(strings.TrimSpace(tok))
}

// NoAuth reports whether the front door a page request came through has no
// authentication: the page then needs no login.
func NoAuth(ctx context.Context) bool {
	tc, ok := ctx.Value(tokenCheckKey{}).(tokenCheck)
	return ok && tc.noAuth
}

// serveUI admits a request for the page: Host and Origin checked, the body
// capped, the token check in its context and its credentials removed.
func (h *handler) serveUI(w http.ResponseWriter, r *http.Request) {
	if reason := h.checkHostOrigin(r); reason != "" {
		h.reject(w, r, http.StatusForbidden, RefusedHost, reason)
		return
	}
	if r.ContentLength > h.maxBody {
		w.Header().Set("Connection", "close")
		h.reject(w, r, http.StatusRequestEntityTooLarge, RefusedTooLarge, "body over limit")
		return
	}
	tc := tokenCheck{noAuth: h.noAuth}
	if h.pageLogin {
		tc.sum = &h.tokenSum
	}
	r2 := r.Clone(context.WithValue(r.Context(), tokenCheckKey{}, tc))
	r2.Header.Del("Authorization")
	r2.Header.Del("Proxy-Authorization")
	if r.Body != nil && r.Body != http.NoBody {
		r2.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	}
	h.ui.ServeHTTP(w, r2)
}
