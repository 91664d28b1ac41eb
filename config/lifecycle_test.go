package config

import (
	"strings"
	"testing"
	"time"
)

func TestLifecycleParse(t *testing.T) {
	cfg := mustParse(t, `{"mcpServers": {
	  "a": {"command": "x", "eager": true, "idleTimeoutMs": 60000, "startupAttempts": 5, "retryMs": 1000, "approval": "manual", "onDrift": "accept", "lockToolList": true},
	  "t": {"command": "x", "trust": "trusted"}
	}}`, nil)
	a := cfg.Server("a").Lifecycle
	want := Lifecycle{Eager: true, IdleTimeout: time.Minute, StartupAttempts: 5, RetryAfter: time.Second, Approval: ApprovalManual, OnDrift: DriftAccept, LockToolList: true}
	if a != want {
		t.Errorf("a = %+v, want %+v", a, want)
	}
	if got := cfg.Server("t").Lifecycle.OnDrift; got != DriftWarn {
		t.Errorf("trusted default onDrift = %q, want warn", got)
	}
	for src, msg := range map[string]string{
		srv(`"command": "x", "startupAttempts": 11`): "must be between 1 and 10",
		srv(`"command": "x", "onDrift": "ignore"`):   `unknown value "ignore": want "hold", "warn" or "accept"`,
		srv(`"command": "x", "approval": "never"`):   `unknown value "never": want "auto" or "manual"`,
		srv(`"command": "x", "eagr": true`):          `did you mean "eager"?`,
	} {
		if got := parseErr(t, src, fakeEnv{}); !strings.Contains(got, msg) {
			t.Errorf("%s: error %q, want %q", src, got, msg)
		}
	}
}

func TestFingerprint(t *testing.T) {
	parse := func(src string, env fakeEnv) string {
		return mustParse(t, src, env).Servers[0].Fingerprint()
	}
	base := parse(srv(`"command": "x", "env": {"K": "${TOKEN}"}`), fakeEnv{"TOKEN": "one"})
	for name, tt := range map[string]struct {
		src  string
		env  fakeEnv
		same bool
	}{
		"same":                    {srv(`"command": "x", "env": {"K": "${TOKEN}"}`), fakeEnv{"TOKEN": "one"}, true},
		"other settings":          {srv(`"command": "x", "env": {"K": "${TOKEN}"}, "callTimeoutMs": 5, "trust": "trusted"`), fakeEnv{"TOKEN": "one"}, true},
		"credential changed":      {srv(`"command": "x", "env": {"K": "${TOKEN}"}`), fakeEnv{"TOKEN": "two"}, false},
		"argument added":          {srv(`"command": "x", "args": ["-v"], "env": {"K": "${TOKEN}"}`), fakeEnv{"TOKEN": "one"}, false},
		"protocol version pinned": {srv(`"command": "x", "env": {"K": "${TOKEN}"}, "protocolVersion": "2026-07-28"`), fakeEnv{"TOKEN": "one"}, false},
		"literal same as value":   {srv(`"command": "x", "env": {"K": "one"}`), nil, true},
	} {
		if got := parse(tt.src, tt.env) == base; got != tt.same {
			t.Errorf("%s: same fingerprint = %v, want %v", name, got, tt.same)
		}
	}
	if strings.Contains(base, "one") || !strings.HasPrefix(base, "sha256:") {
		t.Errorf("fingerprint %q", base)
	}
}
