package ui_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestEventsEndAtLogout: an event stream opened in a session ends once
// that session is logged out.
func TestEventsEndAtLogout(t *testing.T) {
	p := newPage(t)
	csrf := p.login(t)
	sresp, err := p.client.Get(p.url + "/ui/events")
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	if sresp.StatusCode != http.StatusOK {
		t.Fatalf("events: %s", sresp.Status)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, sresp.Body)
		ended <- err
	}()
	if resp, _ := p.post(t, "/ui/logout", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("logout: %s", resp.Status)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream goes on after logout")
	}
}
