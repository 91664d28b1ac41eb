// Package frontdoor is the HTTP front door of the gateway: the
// [http.Handler] that `switchboard serve --http ADDR` puts in front of the
// MCP endpoint (go-sdk's StreamableHTTPHandler). It decides, before any MCP
// code runs, whether a request may reach the endpoint at all.
//
// A request to the MCP path passes these checks, in this order:
//
//  1. /healthz (GET or HEAD) is answered here with "ok\n" and nothing else,
//     with no token and no Host check, so that supervisors and container
//     probes need no secret. It reveals liveness only: no version, no
//     server list. /readyz, and /healthz?ready, are answered alike with
//     readiness (Options.Ready): 200 "ok\n", or 503 "not ready\n" so that
//     a load balancer sends its traffic to other replicas.
//  2. Any path other than the MCP path, the health checks and /metrics
//     (when Options.Metrics is set) is 404. Checking the path before
//     anything else keeps every other check about one endpoint. /metrics
//     then passes the Host/Origin and token checks below, like the MCP
//     path (a Prometheus scraper sends the token), and answers GET and
//     HEAD only (405). The control API under /api/ (Options.API) passes
//     every check below like the MCP path; the status page at /ui
//     (Options.UI) passes the Host/Origin check and the body cap only, and
//     logs its user in itself with CheckToken (pages.go).
//  3. Host and Origin must name a loopback host (403). This is the
//     DNS-rebinding defence that the MCP spec requires (2025-11-25,
//     Transports §2.0.1 Security Warning:
//     https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning):
//     a web page whose name was rebound to 127.0.0.1 still sends its own name
//     in Host and Origin. It comes before authentication because such a
//     request is hostile whatever credentials it carries, and so that a
//     browser never learns from a 401 that a token would help.
//  4. A bearer token must be presented in the Authorization header (401).
//     Tokens in the query string are never accepted: URLs end up in logs,
//     shell history and Referer headers (RFC 6750 §5.3).
//  5. A POST must carry Content-Type application/json (415). This comes
//     after authentication so that unauthenticated callers learn nothing
//     about what the endpoint accepts, and before the body is read because
//     it costs nothing.
//  6. The body must not exceed the cap (413). It comes last because it is the
//     only check that reads the body, and reading costs memory: only an
//     authenticated, well-formed request gets that far.
//
// With Options.Authenticate, middleware (go-sdk's auth.RequireBearerToken
// in the gateway) takes the place of step 4: it admits a request or answers
// 401 or 403 itself; the front door reports its refusals by reason and adds
// the RFC 6750 error code to its challenge (authn.go). Options.WellKnown
// answers /.well-known/... after step 3 without a token (the OAuth protected
// resource metadata), Options.OAuthCallback answers OAuthCallbackPath
// likewise (an authorization server's redirect carries no token; the
// handler refuses any redirect no login awaits), and Options.SubPaths admits Path/NAME as well (the
// gateway's profiles).
//
// A request that passes reaches the inner handler without its Authorization
// (and Proxy-Authorization) header, so the client's credential can never be
// forwarded upstream or shown to a tool handler (go-sdk hands request headers
// to tools in RequestExtra.Header), and with the caller's non-secret identity
// in its context (see [Caller]). Methods are not restricted here beyond
// the health checks: the MCP handler answers GET, DELETE and the rest itself.
//
// Connections are admitted by [ConnLimit]: those that have not yet
// presented a valid credential are few, the oldest closed first, so that
// strangers cannot use up the file descriptors that authenticated clients
// need (conns.go).
//
// No token value is ever logged or written to a response. Rejections are
// logged at debug level with a reason, and reported to Options.OnRefuse
// by kind (a bounded set, for a metric).
//
// This package depends only on the standard library and the leaf
// internal/tokencmp (the token comparison). It must not import other
// switchboard packages or go-sdk: the gateway wires it in front of the
// MCP handler, and it stays a leaf.
package frontdoor
