package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/creds"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestLoginKeepsGrantUntilSaved: a login that fails (the person refuses
// it in the browser) leaves the working grant in creds.json; a login that
// succeeds replaces it, leaving one grant.
func TestLoginKeepsGrantUntilSaved(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, nil)
	home := t.TempDir()
	cfg := writeConfig(t, map[string]any{"mcpServers": map[string]any{"gh": map[string]any{"url": as.MCP, "trust": "trusted"}}})
	call := func() (int, string) {
		var errb bytes.Buffer
		code, out := runLoginHome(t, home, &errb, "call", "gh__whoami", "--config", cfg)
		return code, out + errb.String()
	}
	grants := func() []creds.Token {
		ts, err := creds.LoadTokens(filepath.Join(home, "creds.json"), as.MCP)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	if r, errs, _ := loginBrowsing(t, home, cfg, as); r.code != 0 {
		t.Fatalf("first login: exit %d, %s", r.code, errs)
	}
	first := grants()
	if len(first) != 1 {
		t.Fatalf("grants after the first login: %d", len(first))
	}

	// The person refuses the second login: the browser comes back with
	// access_denied and the login's state.
	refuse := func(authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		q := u.Query()
		resp, err := http.Get(q.Get("redirect_uri") + "?error=access_denied&state=" + url.QueryEscape(q.Get("state")))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("the redirect listener answered %s", resp.Status)
		}
		return nil
	}
	if r, errs, _ := loginWith(t, home, cfg, as, refuse); r.code == 0 {
		t.Fatalf("refused login: exit 0, %s", errs)
	}
	if got := grants(); len(got) != 1 || got[0].AccessToken != first[0].AccessToken {
		t.Fatalf("grants after a refused login: %+v, want the first one kept", got)
	}
	if code, out := call(); code != 0 || !strings.Contains(out, "caller ok") {
		t.Fatalf("call after a refused login: exit %d, %s", code, out)
	}

	if r, errs, _ := loginBrowsing(t, home, cfg, as); r.code != 0 {
		t.Fatalf("third login: exit %d, %s", r.code, errs)
	}
	if got := grants(); len(got) != 1 || got[0].AccessToken == first[0].AccessToken {
		t.Fatalf("grants after a new login: %d, want only the new one", len(got))
	}
	if code, out := call(); code != 0 || !strings.Contains(out, "caller ok") {
		t.Fatalf("call after the new login: exit %d, %s", code, out)
	}
}

// loginWith runs `switchboard login gh` and, when it prints the
// authorization URL, hands it to browse; it returns the run, its stderr
// and whether the URL was handed on.
func loginWith(t *testing.T, home, cfg string, as *oauthtest.Server, browse func(string) error) (loginRun, string, bool) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan loginRun, 1)
	go func() {
		code, out := runLoginHome(t, home, pw, "login", "gh", "--config", cfg)
		pw.Close()
		done <- loginRun{code, out}
	}()
	var loginErr bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(pr, &loginErr))
	browsed := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, as.Issuer+"/authorize?") && !browsed {
			browsed = true
			if err := browse(line); err != nil {
				t.Error(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case r := <-done:
		return r, loginErr.String(), browsed
	case <-ctx.Done():
		t.Fatal("login did not end")
		return loginRun{}, "", browsed
	}
}
