package frontdoor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// Defaults for [Options].
const (
	DefaultPath         = "/mcp"
	DefaultMaxBodyBytes = 4 << 20 // 4 MiB
)

// HealthPath is the liveness endpoint, and ReadyPath the readiness
// endpoint (so is HealthPath with the query "ready"); see the package
// documentation.
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
)

// readyTimeout bounds Options.Ready.
const readyTimeout = 2 * time.Second

// Options configures [New]. The zero value of every field except Token
// means its documented default; a zero Options is rejected only because it
// has neither a Token nor NoAuth.
type Options struct {
	// Path is the MCP endpoint path. Every other path except HealthPath is
	// 404. It must be absolute and clean ("/mcp", not "mcp", "/mcp/" or
	// "/a/../mcp") and must not be HealthPath.
	// Default: DefaultPath ("/mcp").
	Path string

	// Token is the bearer token clients must present as
	// "Authorization: Bearer <Token>": the value of the --token-env
	// variable, or one from GenerateToken. It must be at least MinTokenLen
	// bytes of RFC 6750 b64token characters. Required unless NoAuth; must
	// be empty if NoAuth. The front door keeps only its SHA-256 sum.
	Token string

	// NoAuth disables authentication. Requests are admitted as
	// CallerAnonymous; the Host/Origin checks still apply. The caller must
	// print NoAuthWarning.
	// Default: false.
	NoAuth bool

	// AllowedHosts are extra hostnames (or IP addresses), besides the
	// loopback ones, accepted in the Host header and in the host of an
	// http(s) Origin, for people who deliberately bind to a non-loopback
	// address. Entries are bare names, matched exactly but without regard
	// to case: no scheme, port, path or wildcard ("gateway.lan",
	// "192.0.2.7", "[fd00::1]").
	// Default: none; only loopback hosts are accepted.
	AllowedHosts []string

	// MaxBodyBytes caps a request body. A body over the cap is answered
	// with 413 and never reaches the inner handler. Negative is an error:
	// there is no "unlimited".
	// Default: DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64

	// Ready, when set, says whether the gateway is ready to take traffic
	// (nil) or not (an error, logged at debug level and never shown): it
	// answers ReadyPath and HealthPath?ready, with 200 or 503. Its ctx
	// ends after two seconds, or when the request's does.
	// Default: nil, which is ready whenever it is alive.
	Ready func(context.Context) error

	// Logger receives a debug record for every rejected request, with the
	// reason. Token values are never logged.
	// Default: nil, which discards.
	Logger *slog.Logger

	// Metrics, when set, is served at MetricsPath (GET and HEAD only)
	// behind the same Host/Origin and token checks as the MCP path: a
	// Prometheus scraper sends the bearer token (its authorization
	// setting). Default: nil, MetricsPath is 404.
	Metrics http.Handler

	// API and UI, when set, are the control API (under APIPrefix) and the
	// status page (at UIPath and under it); see pages.go.
	API, UI http.Handler

	// OnRefuse, when set, is called with the reason of every refused
	// request, one of the Refused* constants (a bounded set, fit for a
	// metric's label). It must not block. Default: nil.
	OnRefuse func(reason string)

	// Authenticate, when set, takes the place of Token (which must then
	// be empty, as must NoAuth): middleware such as go-sdk's
	// auth.RequireBearerToken that admits a request by calling next, with
	// whatever it learnt in the request's context, or refuses it by
	// answering 401 or 403 itself. See authn.go. Default: nil.
	Authenticate func(next http.Handler) http.Handler

	// WellKnown, when set, answers every path under /.well-known/ after
	// the Host and Origin checks and without a token: the OAuth protected
	// resource metadata (RFC 9728) that a client reads before it has one.
	// Default: nil, such paths are 404.
	WellKnown http.Handler

	// OAuthCallback, when set, answers OAuthCallbackPath after the Host
	// and Origin checks and without a token: the redirect that ends an
	// OAuth login the gateway runs (an authorization server's redirect
	// carries no bearer token). It must itself refuse a redirect that is
	// not one it awaits. Default: nil, the path is 404.
	OAuthCallback http.Handler

	// SubPaths admits Path/NAME (one more segment of letters, digits, '_'
	// and '-') as the MCP path too: the gateway's profiles.
	// Default: false.
	SubPaths bool
}

// MetricsPath is where Options.Metrics is served.
const MetricsPath = "/metrics"

// OAuthCallbackPath is where Options.OAuthCallback is served.
const OAuthCallbackPath = "/oauth/callback"

// The reasons given to Options.OnRefuse.
const (
	RefusedPath        = "unknown_path"    // 404: neither the MCP path, HealthPath nor MetricsPath
	RefusedHost        = "host_origin"     // 403: Host or Origin names a host that is not allowed
	RefusedNoToken     = "no_token"        // 401: no bearer token
	RefusedBadToken    = "invalid_token"   // 401: a bearer token that is not the one
	RefusedContentType = "content_type"    // 415: a POST that is not application/json
	RefusedTooLarge    = "body_too_large"  // 413: a body over MaxBodyBytes
	RefusedBody        = "body_unreadable" // 400: the body could not be read
	RefusedMethod      = "method"          // 405: a method HealthPath or MetricsPath does not answer
)

// handler is the front door. All fields are fixed at creation.
type handler struct {
	inner    http.Handler
	path     string
	noAuth   bool
	tokenSum tokencmp.Sum // SHA-256 of Options.Token; the token itself is not kept
	allowed  hostSet
	maxBody  int64
	ready    func(context.Context) error // nil: ready when alive
	// readiness is the reason of the last readiness check ("" when it
	// passed; nil before the first), so that a change is logged once.
	readiness atomic.Pointer[string]
	log       *slog.Logger
	metrics   http.Handler        // nil: MetricsPath is 404
	onRefuse  func(reason string) // may be nil
	authn     func(http.Handler) http.Handler
	known     http.Handler // nil: /.well-known/ is 404
	callback  http.Handler // nil: OAuthCallbackPath is 404
	subPaths  bool
	api, ui   http.Handler // nil: their paths are 404 (pages.go)
	// pageLogin: tokenSum is set, and the page's login checks it; without
	// it (Authenticate and no Token) the page has no login but NoAuth's.
	pageLogin bool
}

// New returns inner behind the front door described in the package
// documentation. It fails if inner is nil, if there is no token and NoAuth
// is not set (or both are), or if an option is malformed. Errors never
// contain the token.
func New(inner http.Handler, opts Options) (http.Handler, error) {
	if inner == nil {
		return nil, errors.New("frontdoor: nil inner handler")
	}
	h := &handler{
		inner:    inner,
		path:     opts.Path,
		noAuth:   opts.NoAuth,
		maxBody:  opts.MaxBodyBytes,
		ready:    opts.Ready,
		log:      opts.Logger,
		metrics:  opts.Metrics,
		onRefuse: opts.OnRefuse,
		authn:    opts.Authenticate,
		known:    opts.WellKnown,
		callback: opts.OAuthCallback,
		subPaths: opts.SubPaths,
		api:      opts.API,
		ui:       opts.UI,
	}
	if h.path == "" {
		h.path = DefaultPath
	}
	if err := validatePath(h.path); err != nil {
		return nil, err
	}
	if h.isAPI(h.path) || h.isUI(h.path) {
		return nil, fmt.Errorf("frontdoor: Path %q is the control API's or the status page's", h.path)
	}
	switch {
	case opts.Authenticate != nil && opts.NoAuth:
		return nil, errors.New("frontdoor: Authenticate excludes NoAuth")
	case opts.Authenticate != nil && opts.Token != "":
		// With Authenticate, Token is the operator's, for the page's
		// login alone (pages.go).
		if err := ValidateToken(opts.Token); err != nil {
			return nil, err
		}
		h.tokenSum = tokencmp.SumOf(opts.Token)
		h.pageLogin = true
	case opts.Authenticate != nil:
	case opts.NoAuth && opts.Token != "":
		return nil, errors.New("frontdoor: Token and NoAuth are mutually exclusive")
	case opts.NoAuth:
	case opts.Token == "":
		return nil, errors.New("frontdoor: a Token is required unless NoAuth is set")
	default:
		if err := ValidateToken(opts.Token); err != nil {
			return nil, err
		}
		h.tokenSum = tokencmp.SumOf(opts.Token)
		h.pageLogin = true
	}
	var err error
	if h.allowed, err = newHostSet(opts.AllowedHosts); err != nil {
		return nil, err
	}
	switch {
	case h.maxBody < 0:
		return nil, fmt.Errorf("frontdoor: MaxBodyBytes is negative (%d)", h.maxBody)
	case h.maxBody == 0:
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h, nil
}

func validatePath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("frontdoor: Path %q is not absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("frontdoor: Path %q is not clean (want %q)", p, path.Clean(p))
	case strings.ContainsAny(p, "?#%") || strings.ContainsFunc(p, isSpaceOrControl):
		return fmt.Errorf("frontdoor: Path %q contains a query, fragment, escape, space or control character", p)
	case p == HealthPath || p == ReadyPath:
		return fmt.Errorf("frontdoor: Path %q is reserved for the health checks", p)
	case p == MetricsPath:
		return fmt.Errorf("frontdoor: Path %q is reserved for the metrics", p)
	case p == OAuthCallbackPath:
		return fmt.Errorf("frontdoor: Path %q is reserved for OAuth logins' redirects", p)
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The order of the checks is explained in the package documentation.
	if r.URL.Path == HealthPath || r.URL.Path == ReadyPath {
		h.serveHealth(w, r)
		return
	}
	if h.isUI(r.URL.Path) {
		h.serveUI(w, r)
		return
	}
	metrics := r.URL.Path == MetricsPath && h.metrics != nil
	known := h.known != nil && strings.HasPrefix(r.URL.Path, wellKnownPrefix)
	callback := h.callback != nil && r.URL.Path == OAuthCallbackPath
	if r.URL.Path != h.path && !metrics && !known && !callback && !h.isSubPath(r.URL.Path) && !h.isAPI(r.URL.Path) {
		h.reject(w, r, http.StatusNotFound, RefusedPath, "unknown path")
		return
	}
	if reason := h.checkHostOrigin(r); reason != "" {
		h.reject(w, r, http.StatusForbidden, RefusedHost, reason)
		return
	}
	if known {
		h.known.ServeHTTP(w, r)
		return
	}
	if callback {
		h.callback.ServeHTTP(w, r)
		return
	}
	if h.authn != nil {
		h.authenticate(w, r, metrics)
		return
	}

	caller := CallerAnonymous
	if !h.noAuth {
		switch checkBearer(r.Header, &h.tokenSum) {
		case authOK:
			caller = CallerBearer
		case authMissing:
			w.Header().Set("WWW-Authenticate", realm)
			h.reject(w, r, http.StatusUnauthorized, RefusedNoToken, "no bearer token")
			return
		default:
			w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
			h.reject(w, r, http.StatusUnauthorized, RefusedBadToken, "invalid bearer token")
			return
		}
	}
	h.admit(w, r, caller, metrics)
}

// admit serves a request that passed the Host, Origin and token checks:
// the metrics, or the MCP path after the content type and body checks.
func (h *handler) admit(w http.ResponseWriter, r *http.Request, caller string, metrics bool) {
	// Its connection presented a valid credential: no longer pending
	// (conns.go).
	authenticated(r.Context())
	if metrics {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			h.reject(w, r, http.StatusMethodNotAllowed, RefusedMethod, "method not allowed on metrics")
			return
		}
		h.metrics.ServeHTTP(w, r)
		return
	}

	if r.Method == http.MethodPost && !isJSON(r.Header.Values("Content-Type")) {
		h.reject(w, r, http.StatusUnsupportedMediaType, RefusedContentType, "content type is not application/json")
		return
	}

	body, err := h.readBody(w, r)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			// The rest of the body is unread; do not let the server try
			// to drain it to reuse the connection.
			w.Header().Set("Connection", "close")
			h.reject(w, r, http.StatusRequestEntityTooLarge, RefusedTooLarge, "body over limit")
			return
		}
		h.reject(w, r, http.StatusBadRequest, RefusedBody, "reading body: "+err.Error())
		return
	}

	r2 := r.Clone(context.WithValue(r.Context(), callerKey{}, caller))
	r2.Header.Del("Authorization")
	r2.Header.Del("Proxy-Authorization")
	if q, removed := stripQueryTokens(r2.URL.RawQuery); removed {
		h.log.LogAttrs(r.Context(), slog.LevelDebug, "frontdoor: token in query string ignored and removed",
			slog.String("remote", r.RemoteAddr))
		r2.URL.RawQuery = q
		r2.RequestURI = r2.URL.RequestURI()
	}
	if body != nil {
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		r2.TransferEncoding = nil
		r2.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if h.isAPI(r.URL.Path) {
		h.api.ServeHTTP(w, r2)
		return
	}
	h.inner.ServeHTTP(w, r2)
}

// serveHealth answers HealthPath (liveness) and ReadyPath or
// HealthPath?ready (readiness). It reveals liveness or readiness and
// nothing else.
func (h *handler) serveHealth(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		h.reject(w, r, http.StatusMethodNotAllowed, RefusedMethod, "method not allowed on health check")
		return
	}
	status, body := http.StatusOK, "ok\n"
	if h.ready != nil && (r.URL.Path == ReadyPath || r.URL.Query().Has("ready")) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		err := h.ready(ctx)
		cancel()
		reason := ""
		if err != nil {
			reason = err.Error()
			status, body = http.StatusServiceUnavailable, "not ready\n"
		}
		h.noteReadiness(r.Context(), reason)
	}
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		io.WriteString(w, body)
	}
}

// noteReadiness logs a change of readiness, with the reason for not being
// ready: a load balancer acts on the change, and the operator reads why
// here.
func (h *handler) noteReadiness(ctx context.Context, reason string) {
	prev := h.readiness.Swap(&reason)
	switch {
	case prev == nil && reason == "", prev != nil && *prev == reason:
	case reason == "":
		h.log.LogAttrs(ctx, slog.LevelInfo, "frontdoor: ready")
	default:
		h.log.LogAttrs(ctx, slog.LevelWarn, "frontdoor: not ready", slog.String("reason", reason))
	}
}

// checkHostOrigin returns why Host or Origin is not acceptable, or "".
func (h *handler) checkHostOrigin(r *http.Request) string {
	if err := checkHost(r.Host, h.allowed); err != nil {
		return "Host: " + err.Error()
	}
	origins, present := r.Header["Origin"]
	if !present {
		return ""
	}
	if len(origins) != 1 {
		return "Origin: more than one"
	}
	if err := checkOrigin(origins[0], h.allowed); err != nil {
		return "Origin: " + err.Error()
	}
	return ""
}

// isJSON reports whether the request has exactly one Content-Type and its
// media type is application/json; parameters such as charset are ignored.
func isJSON(contentTypes []string) bool {
	if len(contentTypes) != 1 {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentTypes[0])
	return err == nil && mt == "application/json"
}

// readBody reads the whole request body, at most h.maxBody bytes of it, and
// returns it in memory; nil if the request has no body (non-nil but empty
// if it has an empty chunked one).
//
// The front door reads the body itself, rather than only wrapping it in
// http.MaxBytesReader for the inner handler to trip over, so that an
// over-long body always gets a 413 from here, whatever the inner handler
// would make of a failed read, and however late it reads. The inner handler
// therefore sees a body of at most MaxBodyBytes that is already in memory,
// with ContentLength and the Content-Length header set to its exact length
// and no Transfer-Encoding; it never sees an *http.MaxBytesError. This costs
// nothing extra for the MCP handler, which reads every POST body into memory
// before decoding it anyway.
//
// A declared Content-Length over the cap is rejected without reading a
// byte. A chunked body is read through http.MaxBytesReader, which stops
// after h.maxBody+1 bytes and tells the server to close the connection.
// Errors are *http.MaxBytesError for an over-long body, or the read error
// (a client gone or a malformed chunk).
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > h.maxBody {
		return nil, &http.MaxBytesError{Limit: h.maxBody}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	// Size the buffer for the declared length plus the read that sees EOF,
	// so a body with a Content-Length is read without reallocating.
	size := int64(512)
	if r.ContentLength >= 0 {
		size = r.ContentLength + 1
	}
	return readAll(http.MaxBytesReader(w, r.Body, h.maxBody), size)
}

// readAll is io.ReadAll with an initial buffer size.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// reject refuses a request with a short, fixed plain-text body and logs
// why at debug level; nothing from the request is echoed in the response.
// kind is its reason for OnRefuse (one of the Refused* constants), reason
// the detail for the log.
func (h *handler) reject(w http.ResponseWriter, r *http.Request, status int, kind, reason string) {
	if h.onRefuse != nil {
		h.onRefuse(kind)
	}
	h.log.LogAttrs(r.Context(), slog.LevelDebug, "frontdoor: request rejected",
		slog.Int("status", status),
		slog.String("reason", reason),
		slog.String("method", clip(r.Method)),
		slog.String("path", clip(r.URL.Path)),
		slog.String("host", clip(r.Host)),
		slog.String("origin", clip(r.Header.Get("Origin"))),
		slog.String("remote", r.RemoteAddr),
	)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, strings.ToLower(http.StatusText(status)), status)
}

// clip shortens attacker-supplied strings before they are logged. The log
// handler quotes and escapes them.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
