package frontdoor

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/tokencmp"
)

// NoAuthWarning is the text the caller prints, prominently and on every
// start, when [Options.NoAuth] is set.
const NoAuthWarning = "WARNING: authentication is disabled (--no-auth). " +
	"Any program on this machine that can reach the listening port, and any web page " +
	"served from a loopback origin, can call every tool of every configured server " +
	"without a token. Use this only on a single-user machine you trust."

// MinTokenLen is the shortest token [New] accepts, in bytes. A token from
// [GenerateToken] is 43 bytes long.
const MinTokenLen = 16

// Caller identities recorded in the request context; see [Caller]. They are
// labels for logs and policy, never secrets.
const (
	CallerBearer    = "bearer"    // presented the configured bearer token
	CallerAnonymous = "anonymous" // Options.NoAuth: nobody was authenticated
)

// realm is the WWW-Authenticate realm (RFC 6750 §3).
const realm = `Bearer realm="switchboard"`

// GenerateToken returns a fresh bearer token: 32 bytes from crypto/rand,
// base64url-encoded without padding (43 characters, all valid in an RFC 6750
// b64token). The caller prints it once at start so the user can configure a
// client with it.
func GenerateToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("frontdoor: generating token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

type callerKey struct{}

// Caller returns the identity of the caller that the front door admitted,
// as recorded in the request context it passed to the inner handler:
// [CallerBearer] or [CallerAnonymous]. ok is false for a context that did
// not come through the front door.
func Caller(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(callerKey{}).(string)
	return c, ok
}

// ValidateToken rejects a token that no client could present in an
// Authorization header or that is short enough to guess, as [New] does. The
// error never contains the token.
func ValidateToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("frontdoor: token is shorter than %d bytes; use GenerateToken or a longer secret", MinTokenLen)
	}
	if !isB64Token(tok) {
		return errors.New("frontdoor: token contains characters not allowed in a bearer token (RFC 6750 §2.1: letters, digits, -._~+/ and trailing =)")
	}
	return nil
}

// isB64Token reports whether s matches RFC 6750 §2.1
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for _, c := range []byte(body) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// authResult is the outcome of looking at a request's credentials.
type authResult int

const (
	authOK      authResult = iota
	authMissing            // no bearer credentials: no error code (RFC 6750 §3.1)
	authInvalid            // bearer credentials presented but wrong: error="invalid_token"
)

// checkBearer checks the Authorization header against want, the SHA-256 sum
// of the configured token.
//
// Comparing fixed-length sums in constant time ([tokencmp]) means that
// neither the content nor the length of the configured token affects how
// long a comparison takes.
//
// A header with another scheme (Basic, ...) counts as missing, as RFC 6750
// §3.1 asks for a client that "attempted using an unsupported authentication
// method". More than one Authorization header counts as invalid.
func checkBearer(h http.Header, want *tokencmp.Sum) authResult {
	vals := h.Values("Authorization")
	switch len(vals) {
	case 0:
		return authMissing
	case 1:
	default:
		return authInvalid
	}
	scheme, tok, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return authMissing
	}
	tok = strings.Trim(tok, " \t")
	if tok == "" {
		return authMissing
	}
	if !want.Matches(tok) {
		return authInvalid
	}
	return authOK
}

// tokenQueryKeys are query parameters that carry bearer tokens in the wild
// (RFC 6750 §2.3 names access_token). They are never accepted, and are
// removed before the request reaches the inner handler so that nothing
// downstream can log them.
var tokenQueryKeys = []string{"access_token", "token"}

// stripQueryTokens returns rawQuery without any parameter whose (unescaped,
// case-folded) name is in tokenQueryKeys, keeping the other parameters as
// they were, in order. removed reports whether anything was dropped.
func stripQueryTokens(rawQuery string) (stripped string, removed bool) {
	if rawQuery == "" {
		return "", false
	}
	parts := strings.Split(rawQuery, "&")
	kept := parts[:0]
	for _, p := range parts {
		if isTokenParam(p) {
			removed = true
			continue
		}
		kept = append(kept, p)
	}
	if !removed {
		return rawQuery, false
	}
	return strings.Join(kept, "&"), true
}

func isTokenParam(param string) bool {
	key, _, _ := strings.Cut(param, "=")
	// "%61ccess_token" is still access_token to most parsers. A key that
	// does not unescape is not one to Go's parser either, so compare it raw.
	if k, err := url.QueryUnescape(key); err == nil {
		key = k
	}
	return slices.Contains(tokenQueryKeys, strings.ToLower(key))
}
