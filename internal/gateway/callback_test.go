package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/frontdoor"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthhost"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// callbackGateway is perCallerGateway with the gateway's public URL set
// (host.OAuthOptions.CallbackURL): every login comes back through the
// front door's callback path. The authorization server compares redirect
// URIs exactly. It returns the server, the MCP endpoint, the callback URL
// and everything the host, the gateway and the front door logged, at
// debug level.
func callbackGateway(t *testing.T) (*oauthtest.Server, string, string, *syncBuffer) {
	t.Helper()
	as := oauthtest.Start(t, &oauthtest.Options{ExactRedirect: true})
	doc := map[string]any{
		"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted", "oauth": map[string]any{"perCaller": true}}},
		"clients": map[string]any{
			"alice": map[string]any{"tokenEnv": "ALICE_TOKEN"},
			"bob":   map[string]any{"tokenEnv": "BOB_TOKEN"},
		},
	}
	cfg := parseDoc(t, doc, map[string]string{"ALICE_TOKEN": aliceTok, "BOB_TOKEN": bobTok})
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln := listen(t)
	public := "http://" + ln.Addr().String()
	callback := public + frontdoor.OAuthCallbackPath
	h, syncs := openHost(t, cfg, *hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond, Logger: log, OAuth: &host.OAuthOptions{TokensPath: filepath.Join(t.TempDir(), "creds.json"), GrantKey: oauthhost.GrantKey, CallbackURL: callback}}, db))
	g := gateway.New(h, &gateway.Options{Version: "test", Logger: log})
	syncs(g)
	serveOn(t, g, ln, gateway.HTTPOptions{Auth: &gateway.AuthOptions{}, Front: frontdoor.Options{Logger: log}})

	// The operator's login, started from the gateway, comes back there too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := h.Login(ctx, "gh")
	if err != nil || l.URL() == "" {
		t.Fatalf("the operator's login: %v", err)
	}
	if got := redirectURI(t, l.URL()); got != callback {
		t.Fatalf("the operator's login redirects to %q; want %q", got, callback)
	}
	if err := oauthtest.BrowseAs(ctx, l.URL(), "operator"); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if err := h.Ready(ctx, "gh"); err != nil {
		t.Fatal(err)
	}
	g.Sync()
	return as, public + "/mcp", callback, logs
}

// redirectURI is the redirect_uri of a login's authorization URL.
func redirectURI(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("redirect_uri")
}

// browseStep is the browser leg one redirect at a time: the
// authorization server's answer is read, and the redirect it names is
// followed by hand, so that the test knows the code it carried. It
// returns the code and what the callback answered.
func browseStep(ctx context.Context, authURL, user string) (code string, status int, page string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", 0, "", err
	}
	req.Header.Set("X-Oauthtest-User", user)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		return "", 0, "", err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", 0, "", errors.New("the authorization server sent no code")
	}
	code = loc.Query().Get("code")
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return "", 0, "", err
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return code, resp.StatusCode, string(b), nil
}

// listening is the local addresses this process listens on (TCP over
// IPv4), read from /proc.
func listening(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc here")
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if to, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(to, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(to, "socket:["), "]")] = true
		}
	}
	b, err := os.ReadFile("/proc/self/net/tcp")
	if err != nil {
		t.Skip("no /proc/self/net/tcp here")
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[3] == "0A" && mine[f[9]] {
			out = append(out, f[1])
		}
	}
	slices.Sort(out)
	return out
}

// TestCallerLoginThroughGatewayCallback: with the gateway's public URL
// set, a caller's login registers the gateway's own callback URL and
// comes back through the front door, without a token, and no loopback
// listener is bound for it. alice, a 2025 client, is sent the URL by
// elicitation and her call completes; a redirect with a forged state is
// refused with 400 while her login still completes; bob, a 2026-07-28
// client, gets -32042 and his call again succeeds. The code is never
// logged nor shown on the page. Not parallel: it reads the sockets the
// whole process listens on.
func TestCallerLoginThroughGatewayCallback(t *testing.T) {
	_, endpoint, callback, logs := callbackGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before := listening(t)

	var codes []string
	alice := connectWith(t, endpoint, aliceTok, "2025-11-25", &mcp.ClientOptions{
		Capabilities: urlCaps,
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if got := redirectURI(t, req.Params.URL); got != callback {
				t.Errorf("alice's login redirects to %q; want %q", got, callback)
			}
			if now := listening(t); !slices.Equal(now, before) {
				t.Errorf("listening during alice's login: %v; before it: %v", now, before)
			}
			for _, forged := range []string{"?code=forged-code-1&state=forged-state", "?code=forged-code-2", "?error=access_denied&state=x"} {
				resp, err := http.Get(callback + forged)
				if err != nil {
					t.Error(err)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "not the redirect of this login") {
					t.Errorf("the callback answered %s %q to %s; want 400", resp.Status, b, forged)
				}
			}
			code, status, page, err := browseStep(ctx, req.Params.URL, "alice-gh")
			if err != nil || status != http.StatusOK || page != "Switchboard: logged in. You can close this window.\n" || strings.Contains(page, code) {
				t.Errorf("alice's browser leg: %d %q, %v", status, page, err)
			}
			codes = append(codes, code)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	res, err := whoamiFor(ctx, alice, "alice")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: alice-gh") || len(codes) != 1 {
		t.Fatalf("alice's call through her login: %+v, %v (%d logins)", res, err, len(codes))
	}

	bob := connectWith(t, endpoint, bobTok, "", &mcp.ClientOptions{Capabilities: urlCaps})
	_, err = whoamiFor(ctx, bob, "bob")
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		t.Fatalf("bob's first call: %v; want -32042", err)
	}
	var data struct{ Elicitations []*mcp.ElicitParams }
	if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
		t.Fatalf("error data %s: %v", rpc.Data, err)
	}
	bobURL := data.Elicitations[0].URL
	if got := redirectURI(t, bobURL); got != callback {
		t.Fatalf("bob's login redirects to %q; want %q", got, callback)
	}
	if now := listening(t); !slices.Equal(now, before) {
		t.Fatalf("listening during bob's login: %v; before it: %v", now, before)
	}
	code, status, _, err := browseStep(ctx, bobURL, "bob-gh")
	if err != nil || status != http.StatusOK {
		t.Fatalf("bob's browser leg: %d, %v", status, err)
	}
	codes = append(codes, code)
	res, err = whoamiFor(ctx, bob, "bob")
	if err != nil || res.IsError || !strings.Contains(text(t, res), "caller ok: bob-gh") {
		t.Fatalf("bob's call after his login: %+v, %v", res, err)
	}

	// The redirect once more: refused, 410 while the login is ending,
	// 400 once it is over.
	u, _ := url.Parse(bobURL)
	resp, err := http.Get(callback + "?code=" + url.QueryEscape(code) + "&state=" + url.QueryEscape(u.Query().Get("state")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusGone {
		t.Errorf("a replayed redirect: %s; want 400 or 410", resp.Status)
	}

	out := logs.String()
	for _, c := range append(codes, "forged-code-1", "forged-code-2") {
		if c != "" && strings.Contains(out, c) {
			t.Fatalf("a code %q is in the logs:\n%s", c, out)
		}
	}
	if !strings.Contains(out, "a caller logged in") {
		t.Fatalf("the logs have no login (is the logger wired?):\n%s", out)
	}
}
