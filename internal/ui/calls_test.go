package ui_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/hostlink"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/sqlite"
)

// TestCallsOutcomeFilter: the recent calls' outcome filter finds a failed
// call behind more than a page of successful ones.
func TestCallsOutcomeFilter(t *testing.T) {
	p := newPage(t)
	p.login(t)
	ctx := context.Background()
	p.host.Call(ctx, "demo__add", json.RawMessage(`{"a":"one","b":2}`), nil) // fails: a is not a number
	for range 60 {
		if _, err := p.host.Call(ctx, "demo__echo", json.RawMessage(`{"text":"hi"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := `<td class="tool">demo:add</td>`
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := p.get(t, "/ui?calls_outcome=tool_error")
		if strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failed call is not among the recent calls filtered by outcome:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCallsUpstreamAs: a recent call made with a caller's own grant shows
// whom the server saw it made by beside who called; one made with the
// server's one grant shows "-"; a server with "oauth.perCaller" lists the
// callers logged in as themselves, as whom.
func TestCallsUpstreamAs(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.RecordCalls(context.Background(),
		&store.Call{Tool: "gh:whoami", Server: "gh", Caller: "sub:ann", As: "ann-gh", Outcome: "ok", ArgShape: "{}"},
		&store.Call{Tool: "gh:whoami", Server: "gh", Outcome: "ok", ArgShape: "{}"},
		&store.Call{Tool: "gh:whoami", Server: "gh", Caller: "bob", Grant: "would_login", Outcome: "ok", ArgShape: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveGrant(context.Background(), store.Grant{GrantKey: store.GrantKey{Caller: "sub:ann", Issuer: "https://as", Resource: "http://127.0.0.1:9/mcp", ClientID: "c"},
		Sealed: []byte("sealed"), Subject: "ann-gh"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`{"mcpServers": {"gh": {"url": "http://127.0.0.1:9/mcp", "oauth": {"perCaller": true}, "enabled": false}}}`), "test.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pageOn(t, cfg, st, hostlink.WithStore(&host.Options{StopTimeout: 500 * time.Millisecond}, st))
	p.login(t)
	_, body := p.get(t, "/ui")
	for _, want := range []string{"<th>Upstream as</th>", "<td>sub:ann</td><td>ann-gh</td>", "<td>operator</td><td>-</td>", "logged in as themselves: sub:ann as ann-gh", "<td>bob</td><td>- (would_login)</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
}
