package frontdoor

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/testkit"
	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// testToken is the configured token in tests; wrongToken is a well-formed
// token that is not it. Neither may ever appear in a response or a log.
const (
	testToken  = "tok-0123456789abcdefghijklmnopqrstuv"
	wrongToken = "tok-ZYXWVUTSRQPONMLKJIHGFEDCBA987654"
)

// inner is the fake MCP handler. It reports what reached it in response
// headers, so tests need no shared state with the server goroutine.
func inner() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		h := w.Header()
		h.Set("X-Inner", "1")
		h.Set("X-Inner-Method", r.Method)
		h.Set("X-Inner-Query", r.URL.RawQuery)
		h.Set("X-Inner-Request-URI", r.RequestURI)
		h.Set("X-Inner-Body-Len", strconv.Itoa(len(body)))
		h.Set("X-Inner-Content-Length", strconv.FormatInt(r.ContentLength, 10))
		h.Set("X-Inner-Read-Err", fmt.Sprint(err))
		_, sawAuth := r.Header["Authorization"]
		_, sawProxyAuth := r.Header["Proxy-Authorization"]
		h.Set("X-Inner-Saw-Auth", strconv.FormatBool(sawAuth || sawProxyAuth))
		caller, ok := Caller(r.Context())
		h.Set("X-Inner-Caller", fmt.Sprintf("%s/%t", caller, ok))
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "inner\n")
	})
}

// newServer starts the front door around inner on 127.0.0.1 (httptest
// listens on loopback) and returns its base URL.
func newServer(t *testing.T, opts Options) string {
	t.Helper()
	h, err := New(inner(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

type request struct {
	method string
	path   string // with query
	host   string // Host header; "" means the server's own 127.0.0.1:port
	header http.Header
	body   string
	// chunked sends body with Transfer-Encoding: chunked (no Content-Length).
	chunked bool
}

type response struct {
	status int
	header http.Header
	body   string
	close  bool // the server closes the connection after this response
}

// do sends req to base and returns the response.
func do(t *testing.T, base string, req request) response {
	t.Helper()
	method := req.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if req.body != "" || req.chunked {
		body = strings.NewReader(req.body)
		if req.chunked {
			// A reader of unknown length makes the client send chunks.
			body = io.MultiReader(body)
		}
	}
	hr, err := http.NewRequestWithContext(t.Context(), method, base+req.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range req.header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	if req.host != "" {
		hr.Host = req.host
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, req.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b), close: resp.Close}
}

// ready is an Options.Ready that answers err.
func ready(err error) func(context.Context) error {
	return func(context.Context) error { return err }
}

// hdr builds a header from key, value pairs.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// authJSON is the header of a well-formed, authenticated MCP POST, plus kv.
func authJSON(kv ...string) http.Header {
	return hdr(append([]string{"Authorization", "Bearer " + testToken, "Content-Type", "application/json"}, kv...)...)
}

const (
	wwwAuth        = `Bearer realm="switchboard"`
	wwwAuthInvalid = `Bearer realm="switchboard", error="invalid_token"`
)

func TestFrontDoor(t *testing.T) {
	tests := []struct {
		name string
		opts Options // Token defaults to testToken unless NoAuth
		req  request
		want int
		// wantHeader lists headers that must have exactly these values;
		// an empty value means the header must be absent.
		wantHeader map[string]string
		wantBody   string // checked if non-empty
		wantClose  bool   // checked if true
	}{
		// /healthz: no token, nothing revealed, before every other check.
		{name: "healthz GET", req: request{method: "GET", path: "/healthz"}, want: 200,
			wantHeader: map[string]string{"Cache-Control": "no-store", "Content-Type": "text/plain; charset=utf-8", "X-Inner": ""}, wantBody: "ok\n"},
		{name: "healthz HEAD", req: request{method: "HEAD", path: "/healthz"}, want: 200,
			wantHeader: map[string]string{"Cache-Control": "no-store"}},
		{name: "healthz ignores Host", req: request{method: "GET", path: "/healthz", host: "evil.com"}, want: 200, wantBody: "ok\n"},
		{name: "healthz ignores bad token", req: request{method: "GET", path: "/healthz", header: hdr("Authorization", "Bearer "+wrongToken)}, want: 200},
		{name: "healthz POST", req: request{method: "POST", path: "/healthz"}, want: 405,
			wantHeader: map[string]string{"Allow": "GET, HEAD"}},
		{name: "healthz trailing slash", req: request{method: "GET", path: "/healthz/"}, want: 404},

		// /readyz and /healthz?ready: readiness, as Options.Ready says;
		// liveness without it. The reason is never shown.
		{name: "readyz without Ready", req: request{method: "GET", path: "/readyz"}, want: 200, wantBody: "ok\n"},
		{name: "readyz ready", opts: Options{Token: testToken, Ready: ready(nil)}, req: request{method: "GET", path: "/readyz"}, want: 200, wantBody: "ok\n"},
		{name: "readyz not ready", opts: Options{Token: testToken, Ready: ready(errors.New("store unreachable"))}, req: request{method: "GET", path: "/readyz"}, want: 503,
			wantHeader: map[string]string{"Cache-Control": "no-store", "X-Inner": ""}, wantBody: "not ready\n"},
		{name: "readyz HEAD not ready", opts: Options{Token: testToken, Ready: ready(errors.New("x"))}, req: request{method: "HEAD", path: "/readyz"}, want: 503},
		{name: "healthz?ready not ready", opts: Options{Token: testToken, Ready: ready(errors.New("x"))}, req: request{method: "GET", path: "/healthz?ready"}, want: 503, wantBody: "not ready\n"},
		{name: "healthz?ready=1 ready", opts: Options{Token: testToken, Ready: ready(nil)}, req: request{method: "GET", path: "/healthz?ready=1"}, want: 200, wantBody: "ok\n"},
		{name: "healthz alive while not ready", opts: Options{Token: testToken, Ready: ready(errors.New("x"))}, req: request{method: "GET", path: "/healthz"}, want: 200, wantBody: "ok\n"},
		{name: "readyz ignores Host and token", opts: Options{Token: testToken, Ready: ready(nil)}, req: request{method: "GET", path: "/readyz", host: "evil.com", header: hdr("Authorization", "Bearer "+wrongToken)}, want: 200},
		{name: "readyz POST", req: request{method: "POST", path: "/readyz"}, want: 405, wantHeader: map[string]string{"Allow": "GET, HEAD"}},

		// Path.
		{name: "root", req: request{path: "/", header: authJSON()}, want: 404},
		{name: "other path", req: request{path: "/sse", header: authJSON()}, want: 404},
		{name: "mcp trailing slash", req: request{path: "/mcp/", header: authJSON()}, want: 404},
		{name: "mcp prefix", req: request{path: "/mcpx", header: authJSON()}, want: 404},
		{name: "path before Host", req: request{path: "/other", host: "evil.com"}, want: 404},
		{name: "custom path", opts: Options{Path: "/v1/mcp"}, req: request{path: "/v1/mcp", header: authJSON()}, want: 418},
		{name: "default path unused with custom path", opts: Options{Path: "/v1/mcp"}, req: request{path: "/mcp", header: authJSON()}, want: 404},

		// The happy path.
		{name: "ok", req: request{path: "/mcp", header: authJSON(), body: `{}`}, want: 418,
			wantHeader: map[string]string{"X-Inner-Caller": "bearer/true", "X-Inner-Saw-Auth": "false", "X-Inner-Body-Len": "2", "X-Inner-Content-Length": "2", "X-Inner-Read-Err": "<nil>"}},
		{name: "Proxy-Authorization stripped", req: request{path: "/mcp", header: authJSON("Proxy-Authorization", "Basic eDp5")}, want: 418,
			wantHeader: map[string]string{"X-Inner-Saw-Auth": "false"}},

		// Host.
		{name: "Host localhost", req: request{path: "/mcp", host: "localhost:8939", header: authJSON()}, want: 418},
		{name: "Host localhost no port", req: request{path: "/mcp", host: "localhost", header: authJSON()}, want: 418},
		{name: "Host LOCALHOST", req: request{path: "/mcp", host: "LOCALHOST:8939", header: authJSON()}, want: 418},
		{name: "Host 127.0.0.1", req: request{path: "/mcp", host: "127.0.0.1:8939", header: authJSON()}, want: 418},
		{name: "Host 127/8", req: request{path: "/mcp", host: "127.254.0.3:1", header: authJSON()}, want: 418},
		{name: "Host [::1]:8939", req: request{path: "/mcp", host: "[::1]:8939", header: authJSON()}, want: 418},
		{name: "Host [::1]", req: request{path: "/mcp", host: "[::1]", header: authJSON()}, want: 418},
		{name: "Host bare ::1", req: request{path: "/mcp", host: "::1", header: authJSON()}, want: 418},
		{name: "Host v4-mapped loopback", req: request{path: "/mcp", host: "[::ffff:127.0.0.1]:8939", header: authJSON()}, want: 418},
		{name: "Host evil.com", req: request{path: "/mcp", host: "evil.com", header: authJSON()}, want: 403},
		{name: "Host localhost.evil.com", req: request{path: "/mcp", host: "localhost.evil.com:8939", header: authJSON()}, want: 403},
		{name: "Host 127.0.0.1.nip.io", req: request{path: "/mcp", host: "127.0.0.1.nip.io:8939", header: authJSON()}, want: 403},
		{name: "Host localhost.", req: request{path: "/mcp", host: "localhost.:8939", header: authJSON()}, want: 403},
		{name: "Host 0.0.0.0", req: request{path: "/mcp", host: "0.0.0.0:8939", header: authJSON()}, want: 403},
		{name: "Host 127.1", req: request{path: "/mcp", host: "127.1:8939", header: authJSON()}, want: 403},
		{name: "Host decimal", req: request{path: "/mcp", host: "2130706433", header: authJSON()}, want: 403},
		{name: "Host v4-mapped other", req: request{path: "/mcp", host: "[::ffff:10.0.0.1]", header: authJSON()}, want: 403},
		{name: "Host LAN address", req: request{path: "/mcp", host: "192.168.1.5:8939", header: authJSON()}, want: 403},
		{name: "Host bad port", req: request{path: "/mcp", host: "localhost:http", header: authJSON()}, want: 403},
		{name: "Host check before auth", req: request{path: "/mcp", host: "evil.com"}, want: 403,
			wantHeader: map[string]string{"WWW-Authenticate": ""}},

		// Origin.
		{name: "Origin http localhost", req: request{path: "/mcp", header: authJSON("Origin", "http://localhost:3000")}, want: 418},
		{name: "Origin https 127.0.0.1", req: request{path: "/mcp", header: authJSON("Origin", "https://127.0.0.1")}, want: 418},
		{name: "Origin [::1]", req: request{path: "/mcp", header: authJSON("Origin", "http://[::1]:8939")}, want: 418},
		{name: "Origin null", req: request{path: "/mcp", header: authJSON("Origin", "null")}, want: 403},
		{name: "Origin empty", req: request{path: "/mcp", header: authJSON("Origin", "")}, want: 403},
		{name: "Origin evil", req: request{path: "/mcp", header: authJSON("Origin", "http://evil.com")}, want: 403},
		{name: "Origin localhost.evil.com", req: request{path: "/mcp", header: authJSON("Origin", "https://localhost.evil.com")}, want: 403},
		{name: "Origin userinfo", req: request{path: "/mcp", header: authJSON("Origin", "http://localhost@evil.com")}, want: 403},
		{name: "Origin with path", req: request{path: "/mcp", header: authJSON("Origin", "http://localhost/")}, want: 403},
		{name: "Origin ftp", req: request{path: "/mcp", header: authJSON("Origin", "ftp://localhost")}, want: 403},
		{name: "Origin file", req: request{path: "/mcp", header: authJSON("Origin", "file://")}, want: 403},
		{name: "Origin no scheme", req: request{path: "/mcp", header: authJSON("Origin", "localhost")}, want: 403},
		{name: "two Origins", req: request{path: "/mcp", header: authJSON("Origin", "http://localhost", "Origin", "http://evil.com")}, want: 403},

		// AllowedHosts.
		{name: "allowed host", opts: Options{AllowedHosts: []string{"Gateway.LAN"}}, req: request{path: "/mcp", host: "gateway.lan:8939", header: authJSON("Origin", "https://GATEWAY.lan")}, want: 418},
		{name: "allowed IPv6 host", opts: Options{AllowedHosts: []string{"[fd00::1]"}}, req: request{path: "/mcp", host: "[fd00::0:1]:8939", header: authJSON()}, want: 418},
		{name: "allowed host is exact", opts: Options{AllowedHosts: []string{"gateway.lan"}}, req: request{path: "/mcp", host: "evil.gateway.lan", header: authJSON()}, want: 403},
		{name: "allowed host in Origin is exact", opts: Options{AllowedHosts: []string{"gateway.lan"}}, req: request{path: "/mcp", header: authJSON("Origin", "http://gateway.lan.evil.com")}, want: 403},

		// Authentication.
		{name: "no token", req: request{path: "/mcp", header: hdr("Content-Type", "application/json")}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuth, "X-Inner": ""}},
		{name: "wrong token", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+wrongToken, "Content-Type", "application/json")}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuthInvalid}},
		{name: "token prefix", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken[:20])}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuthInvalid}},
		{name: "token with suffix", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken+"x")}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuthInvalid}},
		{name: "empty bearer", req: request{path: "/mcp", header: hdr("Authorization", "Bearer")}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuth}},
		{name: "basic scheme", req: request{path: "/mcp", header: hdr("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("u:"+testToken)))}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuth}},
		{name: "token without scheme", req: request{path: "/mcp", header: hdr("Authorization", testToken)}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuth}},
		{name: "two Authorization headers", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Authorization", "Bearer "+testToken)}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuthInvalid}},
		{name: "scheme is case-insensitive", req: request{path: "/mcp", header: hdr("Authorization", "bEARER  "+testToken, "Content-Type", "application/json")}, want: 418},
		{name: "access_token in query ignored", req: request{path: "/mcp?access_token=" + testToken, header: hdr("Content-Type", "application/json")}, want: 401,
			wantHeader: map[string]string{"WWW-Authenticate": wwwAuth}},
		{name: "token in query ignored", req: request{path: "/mcp?token=" + testToken, header: hdr("Content-Type", "application/json")}, want: 401},
		{name: "query token removed before inner", req: request{path: "/mcp?a=1&access_token=" + testToken + "&%74oken=" + testToken + "&Token=x&b=2", header: authJSON()}, want: 418,
			wantHeader: map[string]string{"X-Inner-Query": "a=1&b=2", "X-Inner-Request-URI": "/mcp?a=1&b=2"}},
		{name: "other query kept verbatim", req: request{path: "/mcp?b=2&a=%2F", header: authJSON()}, want: 418,
			wantHeader: map[string]string{"X-Inner-Query": "b=2&a=%2F", "X-Inner-Request-URI": "/mcp?b=2&a=%2F"}},
		{name: "auth before content type", req: request{path: "/mcp", header: hdr("Content-Type", "text/plain")}, want: 401},
		{name: "NoAuth", opts: Options{NoAuth: true}, req: request{path: "/mcp", header: hdr("Content-Type", "application/json")}, want: 418,
			wantHeader: map[string]string{"X-Inner-Caller": "anonymous/true"}},
		{name: "NoAuth strips Authorization", opts: Options{NoAuth: true}, req: request{path: "/mcp", header: authJSON()}, want: 418,
			wantHeader: map[string]string{"X-Inner-Caller": "anonymous/true", "X-Inner-Saw-Auth": "false"}},
		{name: "NoAuth still checks Host", opts: Options{NoAuth: true}, req: request{path: "/mcp", host: "evil.com", header: hdr("Content-Type", "application/json")}, want: 403},

		// Methods and content type.
		{name: "POST no content type", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken), body: "{}"}, want: 415},
		{name: "POST text/plain", req: request{path: "/mcp", header: authJSON("Content-Type", "text/plain")}, want: 415},
		{name: "POST json with charset", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "application/json; charset=utf-8")}, want: 418},
		{name: "POST json upper case", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "Application/JSON")}, want: 418},
		{name: "POST json-seq", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "application/json-seq")}, want: 415},
		{name: "POST malformed content type", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "application/json;;")}, want: 415},
		{name: "POST two content types", req: request{path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "application/json", "Content-Type", "text/plain")}, want: 415},
		{name: "GET passes through", req: request{method: "GET", path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Accept", "text/event-stream")}, want: 418,
			wantHeader: map[string]string{"X-Inner-Method": "GET"}},
		{name: "DELETE passes through", req: request{method: "DELETE", path: "/mcp", header: hdr("Authorization", "Bearer "+testToken)}, want: 418,
			wantHeader: map[string]string{"X-Inner-Method": "DELETE"}},
		{name: "PUT passes through", req: request{method: "PUT", path: "/mcp", header: hdr("Authorization", "Bearer "+testToken, "Content-Type", "text/plain"), body: "x"}, want: 418,
			wantHeader: map[string]string{"X-Inner-Method": "PUT"}},
		{name: "GET needs token", req: request{method: "GET", path: "/mcp"}, want: 401},

		// Body size.
		{name: "body at cap", opts: Options{MaxBodyBytes: 16}, req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", 16)}, want: 418,
			wantHeader: map[string]string{"X-Inner-Body-Len": "16", "X-Inner-Content-Length": "16"}},
		{name: "body over cap", opts: Options{MaxBodyBytes: 16}, req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", 17)}, want: 413,
			wantHeader: map[string]string{"X-Inner": ""}, wantClose: true},
		{name: "chunked body at cap", opts: Options{MaxBodyBytes: 16}, req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", 16), chunked: true}, want: 418,
			wantHeader: map[string]string{"X-Inner-Body-Len": "16", "X-Inner-Content-Length": "16", "X-Inner-Read-Err": "<nil>"}},
		{name: "chunked body over cap", opts: Options{MaxBodyBytes: 16}, req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", 17), chunked: true}, want: 413,
			wantHeader: map[string]string{"X-Inner": ""}, wantClose: true},
		{name: "large chunked body", req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", DefaultMaxBodyBytes+1), chunked: true}, want: 413},
		{name: "large body", req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", DefaultMaxBodyBytes+1)}, want: 413},
		{name: "default cap fits", req: request{path: "/mcp", header: authJSON(), body: strings.Repeat("x", DefaultMaxBodyBytes)}, want: 418,
			wantHeader: map[string]string{"X-Inner-Body-Len": strconv.Itoa(DefaultMaxBodyBytes)}},
		{name: "empty chunked body", req: request{path: "/mcp", header: authJSON(), chunked: true}, want: 418,
			wantHeader: map[string]string{"X-Inner-Body-Len": "0", "X-Inner-Content-Length": "0"}},
		{name: "GET body over cap", opts: Options{MaxBodyBytes: 4}, req: request{method: "GET", path: "/mcp", header: hdr("Authorization", "Bearer "+testToken), body: "12345"}, want: 413},
		{name: "content type before size", opts: Options{MaxBodyBytes: 4}, req: request{path: "/mcp", header: authJSON("Content-Type", "text/plain"), body: "12345"}, want: 415},
		{name: "auth before size", opts: Options{MaxBodyBytes: 4}, req: request{path: "/mcp", header: hdr("Content-Type", "application/json"), body: "12345"}, want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if !opts.NoAuth {
				opts.Token = testToken
			}
			got := do(t, newServer(t, opts), tt.req)
			if got.status != tt.want {
				t.Errorf("status = %d, want %d (body %q)", got.status, tt.want, got.body)
			}
			for k, want := range tt.wantHeader {
				if g := strings.Join(got.header.Values(k), ", "); g != want {
					t.Errorf("header %s = %q, want %q", k, g, want)
				}
			}
			if tt.wantClose && !got.close {
				t.Error("connection not closed after response")
			}
			if tt.wantBody != "" && got.body != tt.wantBody {
				t.Errorf("body = %q, want %q", got.body, tt.wantBody)
			}
			if (got.header.Get("X-Inner") == "1") != (got.status == http.StatusTeapot) {
				t.Errorf("inner reached = %t with status %d", got.header.Get("X-Inner") == "1", got.status)
			}
			if got.status != http.StatusTeapot && len(got.body) > 64 {
				t.Errorf("rejection body is %d bytes, want a short one: %q", len(got.body), got.body)
			}
			for _, secret := range []string{testToken, wrongToken} {
				if strings.Contains(got.body, secret) || strings.Contains(fmt.Sprint(got.header), secret) {
					t.Errorf("response contains a token: header %v body %q", got.header, got.body)
				}
			}
		})
	}
}

// TestChunkedBodyReadsAtMostCapPlusOne checks that an over-long body of
// unknown length is read no further than one byte past the cap, and that
// the 413 comes from the front door even though the inner handler never
// reads the body.
func TestChunkedBodyReadsAtMostCapPlusOne(t *testing.T) {
	const limit = 1000
	var innerCalled bool
	lazy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		innerCalled = true
		w.WriteHeader(http.StatusNoContent) // never reads the body
	})
	h, err := New(lazy, Options{Token: testToken, MaxBodyBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 10*limit))}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8939/mcp", body)
	req.ContentLength = -1 // as for Transfer-Encoding: chunked
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", rec.Code)
	}
	if innerCalled {
		t.Error("inner handler was called")
	}
	if body.n > limit+1 {
		t.Errorf("read %d bytes of the body, want at most %d", body.n, limit+1)
	}
}

// TestDeclaredLengthOverCapReadsNothing checks that a Content-Length over
// the cap is refused before the body is touched.
func TestDeclaredLengthOverCapReadsNothing(t *testing.T) {
	h, err := New(inner(), Options{Token: testToken, MaxBodyBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 11))}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8939/mcp", body)
	req.ContentLength = 11
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || body.n != 0 {
		t.Errorf("status %d after reading %d bytes, want 413 after 0", rec.Code, body.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestInnerSeesUnmodifiedOriginal checks that the front door does not
// mutate the request it was given (middleware must not), while the inner
// handler gets one without credentials.
func TestInnerSeesUnmodifiedOriginal(t *testing.T) {
	var got *http.Request
	h, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }), Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp?access_token=x&q=1", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got == nil {
		t.Fatal("inner handler not called")
	}
	if req.Header.Get("Authorization") == "" || req.URL.RawQuery != "access_token=x&q=1" {
		t.Errorf("original request was modified: Authorization %q, query %q", req.Header.Get("Authorization"), req.URL.RawQuery)
	}
	if got.Header.Get("Authorization") != "" || got.URL.RawQuery != "q=1" {
		t.Errorf("inner request: Authorization %q, query %q; want none and %q", got.Header.Get("Authorization"), got.URL.RawQuery, "q=1")
	}
	if c, ok := Caller(got.Context()); c != CallerBearer || !ok {
		t.Errorf("Caller = %q, %t; want %q, true", c, ok, CallerBearer)
	}
}

func TestCallerOutsideFrontDoor(t *testing.T) {
	if c, ok := Caller(context.Background()); ok || c != "" {
		t.Errorf("Caller(background) = %q, %t; want \"\", false", c, ok)
	}
}

// TestTokenNotRetained checks that the handler keeps only a digest of the
// token, so no %v of it (in a log or a panic) can print the token.
func TestTokenNotRetained(t *testing.T) {
	h, err := New(inner(), Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%#v", h); strings.Contains(s, testToken) {
		t.Errorf("handler holds the token in plain text: %s", s)
	}
	if h.(*handler).tokenSum != sha256.Sum256([]byte(testToken)) {
		t.Error("tokenSum is not the SHA-256 of the token")
	}
}

func TestCheckBearer(t *testing.T) {
	sum := tokencmp.SumOf(testToken)
	tests := []struct {
		auth []string
		want authResult
	}{
		{nil, authMissing},
		{[]string{""}, authMissing},
		{[]string{"Bearer"}, authMissing},
		{[]string{"Bearer "}, authMissing},
		{[]string{"Basic " + testToken}, authMissing},
		{[]string{testToken}, authMissing},
		{[]string{"Bearer " + testToken}, authOK},
		{[]string{"bearer " + testToken}, authOK},
		{[]string{"Bearer   " + testToken + " "}, authOK},
		{[]string{"Bearer " + wrongToken}, authInvalid},
		{[]string{"Bearer " + testToken + " x"}, authInvalid},
		{[]string{"Bearer " + strings.ToUpper(testToken)}, authInvalid},
		{[]string{"Bearer " + testToken, "Bearer " + testToken}, authInvalid},
	}
	for _, tt := range tests {
		h := http.Header{"Authorization": tt.auth}
		if got := checkBearer(h, &sum); got != tt.want {
			t.Errorf("checkBearer(%q) = %d, want %d", tt.auth, got, tt.want)
		}
	}
}

// TestLogsNeverContainTokens drives every rejection and the query-token
// path with a debug logger and checks the log has reasons but no tokens.
func TestLogsNeverContainTokens(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base := newServer(t, Options{Token: testToken, Logger: logger, MaxBodyBytes: 8})
	reqs := []request{
		{path: "/nope?access_token=" + testToken, header: hdr("Authorization", "Bearer "+testToken)},
		{path: "/mcp", host: "evil.com", header: hdr("Authorization", "Bearer "+testToken)},
		{path: "/mcp", header: hdr("Authorization", "Bearer "+wrongToken)},
		{path: "/mcp?token=" + testToken},
		{path: "/mcp?access_token=" + testToken, header: authJSON()},
		{path: "/mcp", header: authJSON("Content-Type", "text/plain")},
		{path: "/mcp", header: authJSON(), body: "123456789"},
		{method: "PUT", path: "/healthz", header: hdr("Authorization", "Bearer "+testToken)},
	}
	for _, r := range reqs {
		do(t, base, r)
	}
	out := logs.String()
	for _, secret := range []string{testToken, wrongToken} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains a token:\n%s", out)
		}
	}
	for _, reason := range []string{"unknown path", "Host: host is not loopback", "invalid bearer token", "no bearer token",
		"token in query string ignored", "content type is not application/json", "body over limit", "method not allowed on health check"} {
		if !strings.Contains(out, reason) {
			t.Errorf("log lacks %q:\n%s", reason, out)
		}
	}
}

func TestGenerateToken(t *testing.T) {
	a, err := GenerateToken()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateToken()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("two tokens are equal")
	}
	raw, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil || len(raw) != 32 {
		t.Errorf("token %q decodes to %d bytes (%v), want 32", a, len(raw), err)
	}
	if len(a) != 43 {
		t.Errorf("len(token) = %d, want 43", len(a))
	}
	if _, err := New(inner(), Options{Token: a}); err != nil {
		t.Errorf("New rejects a generated token: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		inner   http.Handler
		opts    Options
		wantErr string // substring; "" means success
	}{
		{"zero options", inner(), Options{}, "Token is required"},
		{"token", inner(), Options{Token: testToken}, ""},
		{"no auth", inner(), Options{NoAuth: true}, ""},
		{"nil inner", nil, Options{Token: testToken}, "nil inner"},
		{"token and no auth", inner(), Options{Token: testToken, NoAuth: true}, "mutually exclusive"},
		{"short token", inner(), Options{Token: "short-secret"}, "shorter than"},
		{"token with space", inner(), Options{Token: "not a bearer token at all"}, "characters not allowed"},
		{"token with equals inside", inner(), Options{Token: "abc=defghijklmnopqrstu"}, "characters not allowed"},
		{"token of padding", inner(), Options{Token: strings.Repeat("=", 20)}, "characters not allowed"},
		{"padded token", inner(), Options{Token: "abcdefghijklmnopqrst=="}, ""},
		{"relative path", inner(), Options{Token: testToken, Path: "mcp"}, "not absolute"},
		{"trailing slash", inner(), Options{Token: testToken, Path: "/mcp/"}, "not clean"},
		{"dot dot", inner(), Options{Token: testToken, Path: "/a/../mcp"}, "not clean"},
		{"query in path", inner(), Options{Token: testToken, Path: "/mcp?x=1"}, "query"},
		{"space in path", inner(), Options{Token: testToken, Path: "/m cp"}, "space"},
		{"healthz path", inner(), Options{Token: testToken, Path: "/healthz"}, "reserved"},
		{"readyz path", inner(), Options{Token: testToken, Path: "/readyz"}, "reserved"},
		{"root path", inner(), Options{Token: testToken, Path: "/"}, ""},
		{"nested path", inner(), Options{Token: testToken, Path: "/api/v1/mcp"}, ""},
		{"negative max body", inner(), Options{Token: testToken, MaxBodyBytes: -1}, "negative"},
		{"allowed host with port", inner(), Options{Token: testToken, AllowedHosts: []string{"gw.lan:8939"}}, "AllowedHosts[0]"},
		{"allowed host with scheme", inner(), Options{Token: testToken, AllowedHosts: []string{"ok.lan", "http://gw.lan"}}, "AllowedHosts[1]"},
		{"allowed host wildcard", inner(), Options{Token: testToken, AllowedHosts: []string{"*.lan"}}, "AllowedHosts[0]"},
		{"allowed host empty", inner(), Options{Token: testToken, AllowedHosts: []string{""}}, "AllowedHosts[0]"},
		{"allowed host zone", inner(), Options{Token: testToken, AllowedHosts: []string{"fe80::1%eth0"}}, "AllowedHosts[0]"},
		{"allowed host bracketed v4", inner(), Options{Token: testToken, AllowedHosts: []string{"[192.0.2.1]"}}, "AllowedHosts[0]"},
		{"allowed hosts ok", inner(), Options{Token: testToken, AllowedHosts: []string{"gw.lan", "192.0.2.1", "fd00::1", "[fd00::2]", "my_host"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.inner, tt.opts)
			if tt.wantErr == "" {
				if err != nil || h == nil {
					t.Fatalf("New = %v, %v; want a handler", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
			if tt.opts.Token != "" && strings.Contains(err.Error(), tt.opts.Token) {
				t.Errorf("error contains the token: %v", err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	h, err := New(inner(), Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	fd := h.(*handler)
	got := struct {
		Path    string
		MaxBody int64
		Logger  bool
	}{fd.path, fd.maxBody, fd.log != nil}
	want := struct {
		Path    string
		MaxBody int64
		Logger  bool
	}{"/mcp", 4 << 20, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

// TestReadinessChangesLogged: the operator reads each change of readiness,
// with the reason for not being ready, once per change however often a
// load balancer checks.
func TestReadinessChangesLogged(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	var reason atomic.Pointer[string]
	base := newServer(t, Options{Token: testToken, Logger: logger, Ready: func(context.Context) error {
		if r := reason.Load(); r != nil {
			return errors.New(*r)
		}
		return nil
	}})
	steps := []struct {
		reason string // "" ready
		want   int
	}{
		{"", 200}, {"", 200},
		{"store unreachable", 503}, {"store unreachable", 503}, {"store unreachable", 503},
		{"no server's catalogue is loaded yet", 503},
		{"", 200}, {"", 200},
	}
	for i, s := range steps {
		if s.reason == "" {
			reason.Store(nil)
		} else {
			reason.Store(&s.reason)
		}
		if got := do(t, base, request{method: "GET", path: "/readyz"}).status; got != s.want {
			t.Errorf("check %d: %d, want %d", i, got, s.want)
		}
	}
	var got []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "ready") {
			_, msg, _ := strings.Cut(line, "level=")
			got = append(got, strings.TrimSpace(msg))
		}
	}
	want := []string{
		`WARN msg="frontdoor: not ready" reason="store unreachable"`,
		`WARN msg="frontdoor: not ready" reason="no server's catalogue is loaded yet"`,
		`INFO msg="frontdoor: ready"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readiness log (-want +got):\n%s", diff)
	}
}
