package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestCallbackRoutes: a Callback hands each redirect to the login whose
// state it carries, with two logins pending at once; a redirect with no
// or an unknown state is refused with 400, a second one for a login with
// 410, and a login closed takes none; only a GET is taken.
func TestCallbackRoutes(t *testing.T) {
	cb := NewCallback("https://gw.example/oauth/callback")
	a, b := cb.redirect("gh", ""), cb.redirect("gh", "")
	defer a.Close()
	a.Expect("https://as.example/authorize?state=SA")
	b.Expect("https://as.example/authorize?state=SB")
	get := func(query string) (int, string) {
		t.Helper()
		w := httptest.NewRecorder()
		cb.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/oauth/callback?"+query, nil))
		return w.Code, w.Body.String()
	}
	for _, tc := range []struct {
		query, page string
		want        int
	}{
		{"code=forged", "not the redirect of this login\n", http.StatusBadRequest},
		{"code=forged&state=SC", "not the redirect of this login\n", http.StatusBadRequest},
		{"code=forged&state=", "not the redirect of this login\n", http.StatusBadRequest},
		{"code=forged&state=S", "not the redirect of this login\n", http.StatusBadRequest},
		{"code=cb&state=SB", "Switchboard: logged in. You can close this window.\n", http.StatusOK},
		{"code=late&state=SB", "this login is already complete\n", http.StatusGone},
		{"code=ca&state=SA", "Switchboard: logged in. You can close this window.\n", http.StatusOK},
	} {
		if got, page := get(tc.query); got != tc.want || page != tc.page {
			t.Errorf("%s: %d %q; want %d %q", tc.query, got, page, tc.want, tc.page)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for r, want := range map[*Redirect]string{a: "ca", b: "cb"} {
		if res, err := r.Wait(ctx); err != nil || res.Code != want {
			t.Errorf("Wait = %+v, %v; want code %s", res, err, want)
		}
	}
	b.Close()
	if got, _ := get("code=after&state=SB"); got != http.StatusBadRequest {
		t.Errorf("a redirect for a closed login: %d; want 400", got)
	}
	c := cb.redirect("gh", "")
	defer c.Close()
	c.Expect("https://as.example/authorize?state=SC")
	for _, m := range []string{http.MethodPost, http.MethodHead} {
		w := httptest.NewRecorder()
		cb.ServeHTTP(w, httptest.NewRequest(m, "/oauth/callback?code=cc&state=SC", nil))
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d; want 405", m, w.Code)
		}
	}
	if got, _ := get("code=cc&state=SC"); got != http.StatusOK {
		t.Errorf("the GET after them: %d; want 200", got)
	}
}
