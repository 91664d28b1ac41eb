package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServePublicURLCallback: serve with --public-url answers the
// callback path without a token, refusing a redirect no login awaits;
// without it the path is 404.
func TestServePublicURLCallback(t *testing.T) {
	t.Parallel()
	empty := writeConfig(t, map[string]any{"mcpServers": map[string]any{}})
	get := func(base string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + "/oauth/callback?state=forged&code=forged-code")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	g := startServe(t, nil, "--config", empty, "--public-url", "http://127.0.0.1:8939")
	if code, page := get(g.base); code != http.StatusBadRequest || page != "not the redirect of this login\n" {
		t.Fatalf("with --public-url: %d %q; want 400", code, page)
	}
	if strings.Contains(g.stderr.String(), "forged-code") {
		t.Fatalf("the code was logged:\n%s", g.stderr.String())
	}
	plain := startServe(t, nil, "--config", empty)
	if code, _ := get(plain.base); code != http.StatusNotFound {
		t.Fatalf("without --public-url: %d; want 404", code)
	}
}
