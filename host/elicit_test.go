package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestHostileElicitSecret: a server's form that asks for a credential
// (the hostile server's "your session expired, re-enter your GitHub
// token") never reaches the person from a server that is not trusted; a
// trusted one's reaches them with a warning first; report-only mode puts
// it with the warning and records what it would have refused; "off"
// passes it as it is. Each decision is an EventElicitation.
func TestHostileElicitSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		extra    map[string]any // the server's settings
		secrets  map[string]any // security.secrets
		asked    bool           // the person is asked
		warned   bool           // with Switchboard's warning
		decision string         // the event's, "" for none
	}{
		{name: "untrusted", decision: host.SecretBlocked},
		{name: "trusted", extra: map[string]any{"trust": "trusted"}, asked: true, warned: true, decision: host.SecretFlagged},
		{name: "report", secrets: map[string]any{"report": true}, asked: true, warned: true, decision: host.SecretWouldBlock},
		{name: "flag", secrets: map[string]any{"elicitation": "flag"}, asked: true, warned: true, decision: host.SecretFlagged},
		{name: "off", secrets: map[string]any{"elicitation": "off"}, asked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var events []host.ServerEvent
			opts := &host.Options{Ephemeral: true, StopTimeout: 500 * time.Millisecond, Forward: true, OnEvent: func(ev host.ServerEvent) {
				if ev.Kind == host.EventElicitation {
					mu.Lock()
					events = append(events, ev)
					mu.Unlock()
				}
			}}
			var top map[string]any
			if tc.secrets != nil {
				top = map[string]any{"security": map[string]any{"secrets": tc.secrets}}
			}
			r := openHostile(t, map[string]any{"hostile": hostileServer(t, hostile.ModeSampling, nil, tc.extra)}, top, opts)
			r.mustReady(t, "hostile")
			peer := &fakePeer{}
			res, err := r.Call(context.Background(), "hostile__ask", nil, &host.CallOptions{Peer: peer})
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			var ask hostile.AskResult
			if err := json.Unmarshal([]byte(res.Text), &ask); err != nil {
				t.Fatalf("ask result %q: %v", res.Text, err)
			}
			peer.mu.Lock()
			elicits := peer.elicits
			peer.mu.Unlock()
			if asked := len(elicits) == 1; asked != tc.asked {
				t.Fatalf("the person was asked %d times, want asked=%v; the server got %s / %q", len(elicits), tc.asked, ask.Elicitation, ask.ElicitationError)
			}
			if !tc.asked && !strings.Contains(ask.ElicitationError, "must not ask for credentials") {
				t.Errorf("the server's error = %q, want the refusal", ask.ElicitationError)
			}
			if tc.asked {
				msg := elicits[0].Message
				if warned := strings.HasPrefix(msg, "Warning from Switchboard: this form asks for a token (field \"token\")"); warned != tc.warned {
					t.Errorf("message %q: warned=%v, want %v", msg, warned, tc.warned)
				}
				if !strings.Contains(msg, "Re-enter your GitHub token") {
					t.Errorf("message %q lost the server's own text", msg)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case tc.decision == "" && len(events) != 0:
				t.Errorf("events %+v, want none", events)
			case tc.decision != "" && (len(events) != 1 || events[0].Decision != tc.decision || events[0].Rule != "token" || events[0].Server != "hostile"):
				t.Errorf("events %+v, want one %s of a token by hostile", events, tc.decision)
			}
		})
	}
}
