package oauth

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestRedirectState: the listener takes only the redirect that carries
// the authorization URL's state; forged callbacks before it (none before
// Expect, a missing or wrong state, an error with a wrong state) are
// answered 400 and leave the login to the real redirect.
func TestRedirectState(t *testing.T) {
	red, err := ListenRedirect()
	if err != nil {
		t.Fatal(err)
	}
	defer red.Close()
	get := func(query string) int {
		t.Helper()
		resp, err := http.Get(red.URL + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("code=early&state=S1"); got != http.StatusBadRequest {
		t.Fatalf("callback before Expect: %d, want 400", got)
	}
	red.Expect("https://as.example/authorize?client_id=c&state=S1&code_challenge=x")
	for _, q := range []string{"code=forged", "code=forged&state=S2", "error=access_denied&state=", "error=access_denied&state=S2"} {
		if got := get(q); got != http.StatusBadRequest {
			t.Fatalf("forged callback %q: %d, want 400", q, got)
		}
	}
	if got := get("code=real&state=S1&iss=https://as.example"); got != http.StatusOK {
		t.Fatalf("real callback: %d, want 200", got)
	}
	if got := get("code=late&state=S1"); got != http.StatusGone {
		t.Fatalf("second callback: %d, want 410", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := red.Wait(ctx)
	if err != nil || res.Code != "real" || res.State != "S1" {
		t.Fatalf("Wait = %+v, %v; want the real code", res, err)
	}
	// A flow that asks again (go-sdk retries a refused login) is answered
	// at once, not left to wait for a redirect that will not come.
	if _, err := red.Wait(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("second Wait = %v, want an error at once", err)
	}
}

// TestRedirectArrivalBeforeAnswer: the arrival hook has run by the time
// the browser has its page, so a client that calls again as soon as the
// page has loaded finds the login under way, not waiting for a redirect;
// a refused login and a second redirect do not call it.
func TestRedirectArrivalBeforeAnswer(t *testing.T) {
	red, err := ListenRedirect()
	if err != nil {
		t.Fatal(err)
	}
	defer red.Close()
	var arrived atomic.Int32
	red.OnArrival(func() { arrived.Add(1) })
	red.Expect("https://as.example/authorize?state=S1")
	for _, q := range []string{"error=access_denied&state=S2", "code=real&state=S1", "code=late&state=S1"} {
		resp, err := http.Get(red.URL + "?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := arrived.Load(); n != 1 {
		t.Fatalf("arrival hook called %d times by the time the browser was answered, want 1", n)
	}
}
